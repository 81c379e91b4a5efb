// The code of bslz4-decode-list-ahead.wgsl and bslz4-decode-list-ahead-v4.wgsl (their header comments describe it): one
// of the two includes the output form, common/bslz4-out-words.wgsl or common/bslz4-out-vec4.wgsl, then this file.

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

// #include "bslz4-multi-main.wgsl"

// #include "bslz4-parse-block.wgsl"

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
