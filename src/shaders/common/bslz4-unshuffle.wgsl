// The unshuffle of a decoded (still bit-shuffled) block, shared by the two bitshuffle/LZ4 decode shaders (include
// line): they include common/bslz4-out-words.wgsl or common/bslz4-out-vec4.wgsl (put_word, put_words4) and
// declare `block_byte` (byte i of the group's block) and `group_flags` (the flags of the 8 pixels from a multiple
// of 8, as bits).
// #include "bit-transpose.wgsl"

// Writes the 8 elements from frame element `e` (their bytes gathered in lo: elements 0-3, hi: 4-7) as packed
// words: 2 words of 1-byte values, else 4 words at a time (put_words4: one store in the vec4 form, which the pass
// binds only where frames start at a multiple of 4 words, so that w, e / 2 or e words on, is a multiple of 4).
// OUT_PLANES (2-byte values): the 8 low bytes to the low plane, the 8 high bytes to the high plane only when one is
// nonzero (noting the element's span in lane_spans).
fn emit_words(e: u32, lo: vec4<u32>, hi: vec4<u32>, out_base: u32) {
  if (OUT_PLANES) {
    put_pair(out_base + e / 4u, vec2<u32>(pack_bytes4(lo), pack_bytes4(hi)));
    let high = vec2<u32>(pack_bytes4(lo >> vec4<u32>(8u)), pack_bytes4(hi >> vec4<u32>(8u)));
    if (any(high != vec2<u32>(0u))) {
      put_pair(out_base + plane_words() + e / 4u, high);
      note_high_span(e);
    }
  } else if (ELEM_SIZE == 1u) {
    let w = out_base + e / 4u;
    put_word(w, lo.x | (lo.y << 8u) | (lo.z << 16u) | (lo.w << 24u));
    put_word(w + 1u, hi.x | (hi.y << 8u) | (hi.z << 16u) | (hi.w << 24u));
  } else if (ELEM_SIZE == 2u) {
    put_words4(out_base + e / 2u, pack_words2(lo, hi));
  } else {
    put_words4(out_base + e, lo);
    put_words4(out_base + e + 4u, hi);
  }
}

// 8 values of 2 bytes (lo: elements 0-3, hi: 4-7) as 4 words, two values a word, the first in the low half.
fn pack_words2(lo: vec4<u32>, hi: vec4<u32>) -> vec4<u32> {
  return vec4<u32>(lo.x, lo.z, hi.x, hi.z) | (vec4<u32>(lo.y, lo.w, hi.y, hi.w) << vec4<u32>(16u));
}

// The low bytes of 4 values, packed little-endian.
fn pack_bytes4(v: vec4<u32>) -> u32 {
  return (v.x & 0xffu) | ((v.y & 0xffu) << 8u) | ((v.z & 0xffu) << 16u) | ((v.w & 0xffu) << 24u);
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
