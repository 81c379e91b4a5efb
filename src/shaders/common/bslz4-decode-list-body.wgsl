// The code of bslz4-decode-list.wgsl and bslz4-decode-list-v4.wgsl (their header comments describe it): one of the two
// includes the output form, common/bslz4-out-words.wgsl or common/bslz4-out-vec4.wgsl, then this file.

const LIST = true;
const PARSE_AHEAD = false;
fn parse_ahead(t: u32) {}

// The parse pass's sequence lists (LIST_CAP entries per block of the dispatch) and, per block, (sequences
// written, verdict + 1, or 0: no list).
@group(0) @binding(9) var<storage, read> seqs: array<vec2<u32>>;
@group(0) @binding(10) var<storage, read> seq_info: array<vec2<u32>>;

fn list_info(t: u32) -> vec2<u32> {
  return seq_info[t];
}
fn list_seq(i: u32) -> vec2<u32> {
  return seqs[i];
}

// #include "bslz4-multi-main.wgsl"
