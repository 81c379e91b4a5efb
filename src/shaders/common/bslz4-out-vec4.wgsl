// The decode's output, `decoded` (binding 4), the words of common/bslz4-out-words.wgsl stored 16 bytes at a time:
// a lane's 8 values of 2 bytes are one store instead of four (a warp's stores in the unshuffle of a block below
// 256, 64 bytes apart from lane to lane, touch a quarter of the 32-byte sectors they did; docs/performance.md,
// twenty-seventh session). Bound by the pass only for values of 2 or 4 bytes and frames of a multiple of 4 words,
// so that every frame, every group of 8 values and the raw tail start at a vec4: each vec4 is then written whole,
// by one invocation (a write of a vector's component may access the whole vector, so two invocations never share
// one).
@group(0) @binding(4) var<storage, read_write> decoded: array<vec4<u32>>;

const OUT_VEC4 = true;
const OUT_PLANES = false;

// Output word w: not reached in this form (every store above is a whole vec4); kept so that the word form's
// branches compile.
fn put_word(w: u32, v: u32) {
  decoded[w >> 2u][w & 3u] = v;
}

// Output words w..w + 3, w a multiple of 4.
fn put_words4(w: u32, v: vec4<u32>) {
  decoded[w >> 2u] = v;
}

// Output words w, w + 1 (the planes form's store; not reached in this form).
fn put_pair(w: u32, v: vec2<u32>) {
  decoded[w >> 2u][w & 3u] = v.x;
  decoded[(w + 1u) >> 2u][(w + 1u) & 3u] = v.y;
}
