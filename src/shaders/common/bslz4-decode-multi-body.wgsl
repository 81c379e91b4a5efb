// The code of bslz4-decode-multi.wgsl and bslz4-decode-multi-v4.wgsl (their header comments describe it): one of the
// two includes the output form, common/bslz4-out-words.wgsl or common/bslz4-out-vec4.wgsl, then this file.

// No sequence lists: blocks are walked from their tokens. 8 storage buffers (the WebGPU default limit).
const LIST = false;
const PARSE_AHEAD = false;
fn parse_ahead(t: u32) {}
fn list_info(t: u32) -> vec2<u32> {
  return vec2<u32>(0u);
}
fn list_seq(i: u32) -> vec2<u32> {
  return vec2<u32>(0u);
}

// #include "bslz4-multi-main.wgsl"
