// The bitshuffle bit transpose of 8 elements, shared by bitunshuffle.wgsl and the two bitshuffle/LZ4 decode
// shaders (include line). CPU twin: the transpose in src/codec/bitshuffle.ts.

// The four bytes of a word, lowest first.
fn bytes4(word: u32) -> vec4<u32> {
  return (vec4<u32>(word) >> vec4<u32>(0u, 8u, 16u, 24u)) & vec4<u32>(0xffu);
}

// The 8 x 8 bit transpose of one byte of 8 bit planes (Hacker's Delight 7-3, as src/codec/bitshuffle.ts does):
// x holds planes 7..4 (plane 7 in the top byte), y planes 3..0. Returns (y', t): byte k of y' is this byte of
// element k (k < 4), byte k of t this byte of element 4 + k.
fn transpose8(x0: u32, y0: u32) -> vec2<u32> {
  var x = x0;
  var y = y0;
  var t = (x ^ (x >> 7u)) & 0x00aa00aau;
  x = x ^ t ^ (t << 7u);
  t = (y ^ (y >> 7u)) & 0x00aa00aau;
  y = y ^ t ^ (t << 7u);
  t = (x ^ (x >> 14u)) & 0x0000ccccu;
  x = x ^ t ^ (t << 14u);
  t = (y ^ (y >> 14u)) & 0x0000ccccu;
  y = y ^ t ^ (t << 14u);
  t = (x & 0xf0f0f0f0u) | ((y >> 4u) & 0x0f0f0f0fu);
  y = ((x << 4u) & 0xf0f0f0f0u) | (y & 0x0f0f0f0fu);
  return vec2<u32>(y, t);
}
