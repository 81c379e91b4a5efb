// Backward bit reader of one tANS lane (docs/archive-format.md), shared by tans-query.wgsl and tans-compare.wgsl
// through an include line naming this file (resolved when the shader is imported: scripts/wgsl-include.mjs).
// The including shader declares `data: array<u32>`; the lane is words data[start + i], i < lane_words, and the
// bit cursor p counts down from the stop bit.
var<private> start: u32;
var<private> p: u32;
// The lane's bits are read backwards through a 64-bit window of two words held in registers, words w and w + 1
// of the lane (bits [32 w, 32 w + 64)), so a value costs one load of a new word every 32 bits instead of one or
// two loads per read: lanes of a warp read different streams, and each load is a separate cache transaction.
var<private> w: u32;
var<private> win_lo: u32;
var<private> win_hi: u32;
var<private> lane_words: u32;

fn lane_word(i: u32) -> u32 {
  if (i >= lane_words) {
    return 0u;
  }
  return data[start + i];
}

// Positions the window for bit position p (p >= 1): p <= 32 w + 64 and p >= 32 w.
fn open_window() {
  w = max((p - 1u) >> 5u, 1u) - 1u;
  win_lo = lane_word(w);
  win_hi = lane_word(w + 1u);
}

// Bits [p - k, p) of the lane (k <= 32), LSB first; p moves down by k. The caller checks p >= k.
fn read_bits(k: u32) -> u32 {
  if (k == 0u) {
    return 0u;
  }
  p -= k;
  if (p < 32u * w) {
    w -= 1u;
    win_hi = win_lo;
    win_lo = data[start + w];
  }
  let o = p - 32u * w;
  var v: u32;
  if (o >= 32u) {
    v = win_hi >> (o - 32u);
  } else if (o == 0u) {
    v = win_lo;
  } else {
    v = (win_lo >> o) | (win_hi << (32u - o));
  }
  return v & (0xffffffffu >> (32u - k));
}

// Value i of a raw lane (stored verbatim, BITS bits a value, little-endian in the lane's words); the including
// shader declares `override BITS: u32`.
fn raw_value(i: u32) -> u32 {
  if (BITS == 16u) {
    return (data[start + (i >> 1u)] >> ((i & 1u) * 16u)) & 0xffffu;
  }
  if (BITS == 8u) {
    return (data[start + (i >> 2u)] >> ((i & 3u) * 8u)) & 0xffu;
  }
  return data[start + i];
}
