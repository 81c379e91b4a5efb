// The list decode (bslz4-decode-list.wgsl, whose header describes it) that also parses the next batch in the
// same dispatch: its last Params.ahead_groups workgroups walk the next batch's blocks into the other set of
// lists (the parse pass's work, common/bslz4-parse-block.wgsl), the others decode this batch from its lists.
// One dispatch, so no barrier separates the parse from the decode and the GPU runs both at once (a parse pass of
// its own recorded after the decode ran after it on the H200, even into buffers the decode did not bind, the
// barriers Dawn places between dispatches being wider than their buffers; docs/performance.md). The load keeps
// two sets of inputs in one buffer each (compressed chunks, index, lists; gpu-load.ts), chosen by Params bases.
// 10 storage buffers, like the list decode. CPU twins: src/kernels/bslz4-decode.ts (the decode), and
// src/kernels/bslz4-parse.ts (the lists).

const LIST = true;
const PARSE_AHEAD = true;
// Slot words a parsing thread loads at once (common/bslz4-parse-block.wgsl).
override WINDOW_WORDS: u32 = 1u;

// Both sets of lists: the decode reads this batch's, the parse writes the next one's.
@group(0) @binding(9) var<storage, read_write> seqs: array<vec2<u32>>;
@group(0) @binding(10) var<storage, read_write> seq_info: array<vec2<u32>>;

fn list_info(t: u32) -> vec2<u32> {
  return seq_info[t];
}
fn list_seq(i: u32) -> vec2<u32> {
  return seqs[i];
}

// #include "common/bslz4-multi-main.wgsl"

// #include "common/bslz4-parse-block.wgsl"

// Block entry t of the next batch (thread t of the parsing workgroups): its list and verdict.
fn parse_ahead(t: u32) {
  let per_frame = list_blocks();
  if (t >= params.ahead_frames * per_frame) {
    return;
  }
  let e = params.ahead_list0 + t;
  let entry = index[params.ahead_index_base + t / per_frame];
  seq_info[e] = parse_block(entry, params.ahead_slot_bytes, t % per_frame, e * LIST_CAP);
}
