// The bitshuffle/LZ4 decode pass's interface, shared by bslz4-decode.wgsl and bslz4-decode-multi.wgsl through an
// include line naming this file (scripts/wgsl-include.mjs): audit layout, parameters, format constants, error
// codes and bindings 0-3 and 5-7 (docs/pass-graph.md "Data formats shared by the passes").
// Word offsets in `audit` (src/kernels/bslz4-decode.ts AUDIT_LAYOUT).
override AUDIT_MAX: u32 = 0u;
override AUDIT_FAILED: u32 = 1u;
override AUDIT_ABOVE_255: u32 = 2u;
override AUDIT_HISTOGRAM: u32 = 4u;

struct Params {
  // Batch frames [frame_start, frame_end) are decoded by this dispatch.
  frame_start: u32,
  frame_end: u32,
  pixels: u32,
  // pixels * ELEM_SIZE: the uncompressed size the header must declare.
  expected_bytes: u32,
  words_per_frame: u32,
  // Bytes of the slot that hold data (index entries must stay inside).
  slot_bytes: u32,
  // Index in `errors` and `totals` of batch frame 0 (the batch's first global frame, or 0 for per-batch arrays).
  first_frame: u32,
  // The multi shaders: word of `scratch` from which pack_flags writes the pixel flags as bits (pixel p: bit p % 32
  // of word flag_base + p / 32), read by the audit one word per group of 8 values (bslz4-multi-main.wgsl).
  flag_base: u32,
  // The list pass and the parse pass: the batch's first entry in `index`, and its first block entry in the lists
  // (the load keeps two sets of inputs, so that a batch's dispatch also parses the next one).
  index_base: u32,
  list_entry0: u32,
  // bslz4-decode-list-ahead.wgsl: the dispatch's last ahead_groups workgroups parse the next batch's
  // ahead_frames frames (index entries from ahead_index_base, chunks inside slot bytes [0, ahead_slot_bytes))
  // into the lists from block entry ahead_list0; the other workgroups decode. 0 elsewhere.
  ahead_groups: u32,
  ahead_frames: u32,
  ahead_index_base: u32,
  ahead_slot_bytes: u32,
  ahead_list0: u32,
}

const HEADER_BYTES: u32 = 12u;
const MAX_BLOCK_BYTES: u32 = 8192u;
const BLOCK_WORDS: u32 = 2048u;
const BINS: u32 = 257u;

// The blocks of a frame (params.pixels elements) at `block_elems` elements a block: (full blocks, elements of the
// last partial block, a multiple of 8 or 0, blocks in all); the elements after them (fewer than 8) are the raw
// tail. The twin (decodeFrame, src/kernels/bslz4-decode.ts) counts the same.
fn frame_blocks(block_elems: u32) -> vec3<u32> {
  let full = params.pixels / block_elems;
  let last = (params.pixels % block_elems) & ~7u;
  return vec3<u32>(full, last, full + select(0u, 1u, last > 0u));
}

// Blocks of a frame at the 8 KiB block size: the parse pass's entries per frame (src/kernels/bslz4-parse.ts
// listBlocks).
fn list_blocks() -> u32 {
  return frame_blocks(MAX_BLOCK_BYTES / ELEM_SIZE).z;
}

// src/kernels/decode-errors.ts
const ERR_INDEX_OUT_OF_SLOT: u32 = 1u;
const ERR_HEADER_TRUNCATED: u32 = 2u;
const ERR_SIZE_MISMATCH: u32 = 3u;
const ERR_BAD_BLOCK_SIZE: u32 = 4u;
const ERR_UNSUPPORTED_BLOCK_SIZE: u32 = 5u;
const ERR_BLOCK_TRUNCATED: u32 = 6u;
const ERR_BLOCK_EMPTY: u32 = 7u;
const ERR_LZ4_TRUNCATED: u32 = 8u;
const ERR_LZ4_OVERRUN: u32 = 9u;
const ERR_LZ4_BAD_OFFSET: u32 = 10u;
const ERR_LZ4_SHORT: u32 = 11u;
const ERR_TAIL_TRUNCATED: u32 = 12u;
const ERR_TRAILING_BYTES: u32 = 13u;

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> slot: array<u32>;
@group(0) @binding(2) var<storage, read> index: array<vec2<u32>>;
@group(0) @binding(3) var<storage, read> flags: array<u32>;
// Binding 4, `decoded` (the output words), is declared by common/bslz4-out-words.wgsl or
// common/bslz4-out-vec4.wgsl, one of which every decode pass includes (the parse pass binds no output).
@group(0) @binding(5) var<storage, read_write> errors: array<u32>;
@group(0) @binding(6) var<storage, read_write> totals: array<vec2<u32>>;
@group(0) @binding(7) var<storage, read_write> audit: array<atomic<u32>>;
