// The `zp` part of the multi decode (PLANE_SKIP, with FRAME_GROUPS): the quads of bit planes of a decoded block
// that hold a nonzero byte, and the unshuffle of a group of 8 elements that reads only those. Included by
// common/bslz4-multi-main.wgsl (a line naming this file, scripts/wgsl-include.mjs); it uses blk_word, plane_bytes4,
// transpose8, bytes4, pick, emit_group and emit_words from there. With BIT_AUDIT also the unshuffle and audit of a
// block below 256 a plane word at a time (unshuffle_low_words).

// PLANE_SKIP: per group, two masks of the quads of planes that hold a nonzero byte (bit q: quad q), used by
// alternate blocks (plane_round) so that one is cleared while the other is read.
var<workgroup> quads_live: array<atomic<u32>, 16>;

// Group g's 8 elements as unshuffle_group makes them, reading only the quads of planes whose bit is set in
// `live` (the others are zero).
fn unshuffle_group_live(g: u32, pb: u32, first: u32, out_base: u32, live: u32) {
  var lo = vec4<u32>(0u);
  var hi = vec4<u32>(0u);
  for (var j = 0u; j < ELEM_SIZE; j++) {
    let quads = (live >> (2u * j)) & 3u;
    if (quads == 0u) {
      continue;
    }
    let b = 8u * j * pb + g;
    var upper = 0u;
    var lower = 0u;
    if ((quads & 2u) != 0u) {
      upper = plane_bytes4(b + 4u * pb, pb);
    }
    if ((quads & 1u) != 0u) {
      lower = plane_bytes4(b, pb);
    }
    let p = transpose8(upper, lower);
    let shift = vec4<u32>(8u * j);
    lo |= bytes4(p.x) << shift;
    hi |= bytes4(p.y) << shift;
  }
  emit_group(first + 8u * g, lo, hi, out_base);
}

// PLANE_SKIP: blocks this invocation has unshuffled (its group's mask of the next block is quads_live[2 sub +
// (plane_round & 1)]).
var<private> plane_round: u32;

// PLANE_SKIP: the quads of planes of this group's decoded block (elems elements; when `busy`) that hold a nonzero
// byte, as bits (quad 0 always set): every lane ORs the words of quads 1.. it strides over (ZERO_TRACK: takes the
// quads it noted while it stored the block instead), the group's lanes OR their bits together. Call in uniform
// control flow, after the barrier that ends the block's walk.
fn plane_quads(busy: bool, elems: u32, sub: u32, lane: u32) -> u32 {
  let at = 2u * sub + (plane_round & 1u);
  // The other mask was last read before the barrier that began this block's round: clear it for the next block.
  if (lane == 0u) {
    atomicStore(&quads_live[2u * sub + ((plane_round + 1u) & 1u)], 0u);
  }
  plane_round += 1u;
  if (ZERO_TRACK) {
    if (busy && (lane_quads & ~1u) != 0u) {
      atomicOr(&quads_live[at], lane_quads & ~1u);
    }
  } else if (busy) {
    let pb = elems / 8u;
    var bits = 0u;
    for (var q = 1u; q < 2u * ELEM_SIZE; q++) {
      var ored = 0u;
      for (var w = lane; w < pb; w += LANES) {
        ored |= blk_word(q * pb + w);
      }
      bits |= select(0u, 1u << q, ored != 0u);
    }
    if (bits != 0u) {
      atomicOr(&quads_live[at], bits);
    }
  }
  workgroupBarrier();
  return atomicLoad(&quads_live[at]) | 1u;
}

// BIT_AUDIT: one step of the maximum's refinement, from plane 7 down. r = (elements still candidates, bits of the
// maximum so far); when a candidate has `bit` set in plane word w, the maximum has it and the candidates are those
// that have it.
fn max_step(r: vec2<u32>, w: u32, bit: u32) -> vec2<u32> {
  let t = r.x & w;
  let has = t != 0u;
  return vec2<u32>(select(r.x, t, has), r.y | select(0u, bit, has));
}

// Counts of the elements of `m` in the four bins that planes 1 and 0 pick: (b1 b0 = 00 | 01 << 16, 10 | 11 << 16).
fn bin_quad(m: u32, w0: u32, w1: u32) -> vec2<u32> {
  let a = m & ~w1;
  let b = m & w1;
  return vec2<u32>(
    countOneBits(a & ~w0) | (countOneBits(a & w0) << 16u),
    countOneBits(b & ~w0) | (countOneBits(b & w0) << 16u),
  );
}

// BIT_AUDIT with AUDIT_BINS: counts the elements of `counted` (bits of 32 elements whose values, below 256, are bit
// sliced in plane words w0..w7) in their bins 1..255: values 1, 2 and 3 by popcounts into lane_small; with
// MID_BINS 4..15 (planes 2 or 3 set, none from 4 on) by popcounts into lane_mid_a and lane_mid_b; the others one
// atomic a set bit. On the benchmark's frames MID_BINS takes the atomics from 2.55 to 0.02 a word of 32 values.
fn bin_low_word(counted: u32, w0: u32, w1: u32, w2: u32, w3: u32, w4: u32, w5: u32, w6: u32, w7: u32) {
  let h = audit_set * BINS;
  let above15 = w4 | w5 | w6 | w7;
  let above3 = w2 | w3 | above15;
  let low = counted & ~above3;
  lane_small += vec3<u32>(
    countOneBits(low & w0 & ~w1),
    countOneBits(low & ~w0 & w1),
    countOneBits(low & w0 & w1),
  );
  let mid = counted & (w2 | w3) & ~above15;
  if (MID_BINS && mid != 0u) {
    let m4 = bin_quad(mid & ~w3, w0, w1);
    let m8 = bin_quad(mid & w3 & ~w2, w0, w1);
    let m12 = bin_quad(mid & w3 & w2, w0, w1);
    lane_mid_a += vec3<u32>(m4.x, m4.y, m8.x);
    lane_mid_b += vec3<u32>(m8.y, m12.x, m12.y);
  }
  var m = counted & select(above3, above15, MID_BINS);
  while (m != 0u) {
    let i = firstTrailingBit(m);
    m &= m - 1u;
    let v = ((w0 >> i) & 1u) | (((w1 >> i) & 1u) << 1u) | (((w2 >> i) & 1u) << 2u) | (((w3 >> i) & 1u) << 3u) |
      (((w4 >> i) & 1u) << 4u) | (((w5 >> i) & 1u) << 5u) | (((w6 >> i) & 1u) << 6u) | (((w7 >> i) & 1u) << 7u);
    atomicAdd(&frame_hist[h + v], 1u);
  }
}

// BIT_AUDIT: the 32 elements from block element 32 k (frame element first + 32 k; first a multiple of 32) of a
// block of pw words a plane whose values are below 256 (only planes 0-7 hold bits; 4-7 only when quad 1 is
// live): word k of each of the 8 planes holds one bit of each (bit 8 b + i: element 32 k + 8 b + i, as the pixel
// flag bits of the 32 pixels are laid out). The audit of the unflagged ones from popcounts (zeros, sum, maximum
// by refinement from plane 7 down; none is above 255; with AUDIT_BINS the bins of the nonzero ones), then 4 bit
// transposes of 8 elements, written as emit_group writes them (with quad_low_words: by quad_store_low_words, for
// plane word k0 + lane of the group's round k0; q: the lane's quad).
fn unshuffle_low_words(k_in: u32, pw: u32, first: u32, out_base: u32, live: u32, k0: u32, q: QuadLanes) {
  // QUAD_STORES: a lane past the block's words (k_in >= pw) reads its last word and counts nothing.
  let on = k_in < pw;
  let k = select(pw - 1u, k_in, on);
  let w0 = blk_word(k);
  let w1 = blk_word(pw + k);
  let w2 = blk_word(2u * pw + k);
  let w3 = blk_word(3u * pw + k);
  var w4 = 0u;
  var w5 = 0u;
  var w6 = 0u;
  var w7 = 0u;
  if ((live & 2u) != 0u) {
    w4 = blk_word(4u * pw + k);
    w5 = blk_word(5u * pw + k);
    w6 = blk_word(6u * pw + k);
    w7 = blk_word(7u * pw + k);
  }
  let e = first + 32u * k;
  if (quad_low_words()) {
    // Before the audit, whose histogram loop diverges: the quad exchanges with all its lanes together.
    quad_store_low_words(w0, w1, w2, w3, w4, w5, w6, w7, pw, first, out_base, k0, q);
  }
  let counted = select(0u, ~flag_word(e), on);
  let nonzero = w0 | w1 | w2 | w3 | w4 | w5 | w6 | w7;
  lane_zero += countOneBits(counted & ~nonzero);
  let sum = countOneBits(w0 & counted) + (countOneBits(w1 & counted) << 1u) + (countOneBits(w2 & counted) << 2u) +
    (countOneBits(w3 & counted) << 3u) + (countOneBits(w4 & counted) << 4u) + (countOneBits(w5 & counted) << 5u) +
    (countOneBits(w6 & counted) << 6u) + (countOneBits(w7 & counted) << 7u);
  lane_sum = add64(lane_sum, sum);
  var r = max_step(vec2<u32>(counted & nonzero, 0u), w7, 128u);
  r = max_step(r, w6, 64u);
  r = max_step(r, w5, 32u);
  r = max_step(r, w4, 16u);
  r = max_step(r, w3, 8u);
  r = max_step(r, w2, 4u);
  r = max_step(r, w1, 2u);
  r = max_step(r, w0, 1u);
  lane_max = max(lane_max, r.y);
  if (AUDIT_BINS) {
    bin_low_word(counted, w0, w1, w2, w3, w4, w5, w6, w7);
  }
  if (quad_low_words()) {
    return;
  }
  for (var b = 0u; b < 4u; b++) {
    let p = transpose8(pick(w4, w5, w6, w7, b), pick(w0, w1, w2, w3, b));
    if (OUT_PLANES) {
      // Byte k of p.x and p.y: the (low, and only) byte of elements k and 4 + k; no high byte to store.
      put_pair(out_base + (e + 8u * b) / 4u, p);
    } else {
      emit_words(e + 8u * b, bytes4(p.x), bytes4(p.y), out_base);
    }
  }
}

// Whether unshuffle_low_words stores through quad_store_low_words: QUAD_STORES, whole quads in a group, and 8-value
// pieces of one store each (the planes form, or the vec4 form of 2-byte values).
fn quad_low_words() -> bool {
  return QUAD_STORES && LANES % 4u == 0u && (OUT_PLANES || (OUT_VEC4 && ELEM_SIZE == 2u));
}

// QUAD_STORES: the stores of unshuffle_low_words for the lane of plane word k0 + lane (of pw; planes form or vec4
// form of 2-byte values). A lane's 32 elements are 4 pieces of 8 (b = 0..3: elements 8 b.. of its word), one
// store each, adjacent in memory, and lanes write neighbouring 32-element runs: a warp's store instruction put
// one piece of each lane, a share of every 32-byte sector it touched. Here the 4 lanes of a quad transpose their
// pieces (quad swaps across 1, then 2), so that lane r holds piece r of each quad lane c and store instruction c
// writes lane c's 4 pieces, one run of contiguous bytes (32 in the planes form, 64 in the vec4 form).
fn quad_store_low_words(
  w0: u32, w1: u32, w2: u32, w3: u32, w4: u32, w5: u32, w6: u32, w7: u32,
  pw: u32, first: u32, out_base: u32, k0: u32, q: QuadLanes,
) {
  let p0 = transpose8(pick(w4, w5, w6, w7, 0u), pick(w0, w1, w2, w3, 0u));
  let p1 = transpose8(pick(w4, w5, w6, w7, 1u), pick(w0, w1, w2, w3, 1u));
  let p2 = transpose8(pick(w4, w5, w6, w7, 2u), pick(w0, w1, w2, w3, 2u));
  let p3 = transpose8(pick(w4, w5, w6, w7, 3u), pick(w0, w1, w2, w3, 3u));
  let odd = (q.r & 1u) != 0u;
  let upper = (q.r & 2u) != 0u;
  // The run of quad lane c starts at frame element first + 32 (k0 + l_c); this lane's piece in it at + 8 r.
  let e = vec4<u32>(first) + 32u * (vec4<u32>(k0) + q.l) + vec4<u32>(8u * q.r);
  let on = (vec4<u32>(k0) + q.l) < vec4<u32>(pw);
  // Piece r of each quad lane c, as one vec4 (the planes form's 8 low bytes in .xy).
  var a0: vec4<u32>;
  var a1: vec4<u32>;
  var a2: vec4<u32>;
  var a3: vec4<u32>;
  if (OUT_PLANES) {
    // A piece: the 8 low bytes (p.x: elements 0-3, p.y: 4-7); two pieces a swap.
    var c0 = p0;
    var c1 = p1;
    var c2 = p2;
    var c3 = p3;
    let s1 = quad_swap_x(vec4<u32>(select(c1, c0, odd), select(c3, c2, odd)));
    c0 = select(c0, s1.xy, odd);
    c1 = select(s1.xy, c1, odd);
    c2 = select(c2, s1.zw, odd);
    c3 = select(s1.zw, c3, odd);
    let s2 = quad_swap_y(vec4<u32>(select(c2, c0, upper), select(c3, c1, upper)));
    a0 = vec4<u32>(select(c0, s2.xy, upper), 0u, 0u);
    a2 = vec4<u32>(select(s2.xy, c2, upper), 0u, 0u);
    a1 = vec4<u32>(select(c1, s2.zw, upper), 0u, 0u);
    a3 = vec4<u32>(select(s2.zw, c3, upper), 0u, 0u);
  } else {
    // A piece: the 4 words of 8 values of 2 bytes (emit_words' packing); one piece a swap.
    a0 = pack_words2(bytes4(p0.x), bytes4(p0.y));
    a1 = pack_words2(bytes4(p1.x), bytes4(p1.y));
    a2 = pack_words2(bytes4(p2.x), bytes4(p2.y));
    a3 = pack_words2(bytes4(p3.x), bytes4(p3.y));
    let x01 = quad_swap_x(select(a1, a0, odd));
    let x23 = quad_swap_x(select(a3, a2, odd));
    a0 = select(a0, x01, odd);
    a1 = select(x01, a1, odd);
    a2 = select(a2, x23, odd);
    a3 = select(x23, a3, odd);
    let y02 = quad_swap_y(select(a2, a0, upper));
    let y13 = quad_swap_y(select(a3, a1, upper));
    a0 = select(a0, y02, upper);
    a2 = select(y02, a2, upper);
    a1 = select(a1, y13, upper);
    a3 = select(y13, a3, upper);
  }
  if (on.x) {
    quad_put(out_base, e.x, a0);
  }
  if (on.y) {
    quad_put(out_base, e.y, a1);
  }
  if (on.z) {
    quad_put(out_base, e.z, a2);
  }
  if (on.w) {
    quad_put(out_base, e.w, a3);
  }
}

// One piece of quad_store_low_words, the 8 elements from frame element e: their low bytes (v.xy) in the planes
// form, else their 4 words.
fn quad_put(out_base: u32, e: u32, v: vec4<u32>) {
  if (OUT_PLANES) {
    put_pair(out_base + e / 4u, v.xy);
  } else {
    put_words4(out_base + e / 2u, v);
  }
}
