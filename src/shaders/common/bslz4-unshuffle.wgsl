// The unshuffle of a decoded (still bit-shuffled) block, shared by the two bitshuffle/LZ4 decode shaders (include
// line): they declare `decoded`, `block_byte` (byte i of the group's block) and `group_flags` (the flags of the 8
// pixels from a multiple of 8, as bits).
// #include "bit-transpose.wgsl"

// Writes the 8 elements from frame element `e` (their bytes gathered in lo: elements 0-3, hi: 4-7) as packed
// words.
fn emit_words(e: u32, lo: vec4<u32>, hi: vec4<u32>, out_base: u32) {
  if (ELEM_SIZE == 1u) {
    let w = out_base + e / 4u;
    decoded[w] = lo.x | (lo.y << 8u) | (lo.z << 16u) | (lo.w << 24u);
    decoded[w + 1u] = hi.x | (hi.y << 8u) | (hi.z << 16u) | (hi.w << 24u);
  } else if (ELEM_SIZE == 2u) {
    let w = out_base + e / 2u;
    decoded[w] = lo.x | (lo.y << 16u);
    decoded[w + 1u] = lo.z | (lo.w << 16u);
    decoded[w + 2u] = hi.x | (hi.y << 16u);
    decoded[w + 3u] = hi.z | (hi.w << 16u);
  } else {
    let w = out_base + e;
    decoded[w] = lo.x;
    decoded[w + 1u] = lo.y;
    decoded[w + 2u] = lo.z;
    decoded[w + 3u] = lo.w;
    decoded[w + 4u] = hi.x;
    decoded[w + 5u] = hi.y;
    decoded[w + 6u] = hi.z;
    decoded[w + 7u] = hi.w;
  }
}

// Writes the 8 elements from frame element `e` as emit_words does and audits them.
fn emit_group(e: u32, lo: vec4<u32>, hi: vec4<u32>, out_base: u32) {
  emit_words(e, lo, hi, out_base);
  let flagged = group_flags(e);
  let a = vec4<u32>(
    audit_counted(lo.x, (flagged & 1u) == 0u),
    audit_counted(lo.y, (flagged & 2u) == 0u),
    audit_counted(lo.z, (flagged & 4u) == 0u),
    audit_counted(lo.w, (flagged & 8u) == 0u),
  );
  let b = vec4<u32>(
    audit_counted(hi.x, (flagged & 16u) == 0u),
    audit_counted(hi.y, (flagged & 32u) == 0u),
    audit_counted(hi.z, (flagged & 64u) == 0u),
    audit_counted(hi.w, (flagged & 128u) == 0u),
  );
  let m = max(a, b);
  lane_max = max(lane_max, max(max(m.x, m.y), max(m.z, m.w)));
  if (ELEM_SIZE < 4u) {
    // 8 values below 2^16 sum below 2^19: one 64-bit add for the group.
    let s = a + b;
    lane_sum = add64(lane_sum, s.x + s.y + s.z + s.w);
  } else {
    lane_sum = add64(add64(add64(add64(lane_sum, a.x), a.y), a.z), a.w);
    lane_sum = add64(add64(add64(add64(lane_sum, b.x), b.y), b.z), b.w);
  }
}

// Block byte b of four bit planes pb bytes apart (b, b + pb, b + 2 pb, b + 3 pb), the last in the top byte: one
// argument of transpose8.
fn plane_bytes4(b: u32, pb: u32) -> u32 {
  return (block_byte(b + 3u * pb) << 24u) | (block_byte(b + 2u * pb) << 16u) | (block_byte(b + pb) << 8u) |
    block_byte(b);
}

// Group g (of pb = elements / 8) of a block whose first element is frame element `first`: its 8 elements share
// one byte of each bit plane (planes pb bytes apart), read byte by byte.
fn unshuffle_group(g: u32, pb: u32, first: u32, out_base: u32) {
  var lo = vec4<u32>(0u);
  var hi = vec4<u32>(0u);
  for (var j = 0u; j < ELEM_SIZE; j++) {
    let b = 8u * j * pb + g;
    let p = transpose8(plane_bytes4(b + 4u * pb, pb), plane_bytes4(b, pb));
    let shift = vec4<u32>(8u * j);
    lo |= bytes4(p.x) << shift;
    hi |= bytes4(p.y) << shift;
  }
  emit_group(first + 8u * g, lo, hi, out_base);
}
