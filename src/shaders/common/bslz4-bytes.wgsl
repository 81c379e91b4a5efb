// Byte readers of the compressed slot, shared by the two bitshuffle/LZ4 decode shaders (include line).
fn slot_byte(i: u32) -> u32 {
  return (slot[i >> 2u] >> ((i & 3u) * 8u)) & 0xffu;
}

fn slot_be32(i: u32) -> u32 {
  return (slot_byte(i) << 24u) | (slot_byte(i + 1u) << 16u) | (slot_byte(i + 2u) << 8u) | slot_byte(i + 3u);
}

// `count` (1..4) bytes of the slot from byte `a`, little-endian in the low bytes; reads only their words.
fn slot_bytes(a: u32, count: u32) -> u32 {
  let w = a >> 2u;
  let sh = (a & 3u) * 8u;
  var v = slot[w] >> sh;
  if ((a & 3u) + count > 4u) {
    v |= slot[w + 1u] << (32u - sh);
  }
  if (count < 4u) {
    v &= (1u << (8u * count)) - 1u;
  }
  return v;
}
