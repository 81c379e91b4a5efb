// Bitshuffle/LZ4 parse: the first pass of the decode variants named `list` (src/gpu/passes/bslz4-decode.ts).
// One thread per LZ4 block of the dispatch's frames walks the block's tokens with the decode walk's checks, in
// its order, and writes the block's sequences to a list; the decode pass (bslz4-decode-multi.wgsl with LIST)
// then copies from the list, so its lanes no longer parse every token together. CPU twin, list format and the
// cases without a list: src/kernels/bslz4-parse.ts.

override ELEM_SIZE: u32 = 2u;
override LIST_CAP: u32 = 256u;
override WORKGROUP_SIZE: u32 = 64u;
// Slot words a thread loads at once into its window (1 or 4, aligned).
override WINDOW_WORDS: u32 = 1u;

// #include "common/bslz4-bindings.wgsl"

// Per block entry: LIST_CAP (literals | match << 16, offset | literal start << 16).
@group(0) @binding(9) var<storage, read_write> seqs: array<vec2<u32>>;
// Per block entry: (sequences written, verdict + 1, or 0: no list).
@group(0) @binding(10) var<storage, read_write> seq_info: array<vec2<u32>>;

// #include "common/bslz4-bytes.wgsl"


// #include "common/bslz4-parse-block.wgsl"

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let per_frame = list_blocks();
  let t = gid.x;
  if (t >= (params.frame_end - params.frame_start) * per_frame) {
    return;
  }
  // Frames from index entry index_base, lists from block entry list_entry0 (a set of the load's inputs).
  let f = params.frame_start + t / per_frame;
  let e = params.list_entry0 + t;
  seq_info[e] = parse_block(index[params.index_base + f], params.slot_bytes, t % per_frame, e * LIST_CAP);
}
