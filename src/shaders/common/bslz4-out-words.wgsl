// The decode's output, `decoded` (binding 4), as words: frame f from word f * words_per_frame, values packed
// little-endian in the source dtype. Every store is a 32-bit word. The form for any frame size and value size;
// common/bslz4-out-vec4.wgsl, the same output stored 16 bytes at a time, where every frame starts at a multiple
// of 4 words (src/gpu/passes/bslz4-decode-pipeline.ts picks the form).
@group(0) @binding(4) var<storage, read_write> decoded: array<u32>;

// Whether the stores are whole vec4s (common/bslz4-out-vec4.wgsl), or two byte planes
// (common/bslz4-out-planes.wgsl).
const OUT_VEC4 = false;
const OUT_PLANES = false;

// Output word w.
fn put_word(w: u32, v: u32) {
  decoded[w] = v;
}

// Output words w..w + 3 (any w).
fn put_words4(w: u32, v: vec4<u32>) {
  decoded[w] = v.x;
  decoded[w + 1u] = v.y;
  decoded[w + 2u] = v.z;
  decoded[w + 3u] = v.w;
}

// Output words w, w + 1 (the planes form's store; not reached in this form).
fn put_pair(w: u32, v: vec2<u32>) {
  decoded[w] = v.x;
  decoded[w + 1u] = v.y;
}
