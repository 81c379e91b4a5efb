// The `zp` part of the multi decode (PLANE_SKIP, with FRAME_GROUPS): the quads of bit planes of a decoded block
// that hold a nonzero byte, and the unshuffle of a group of 8 elements that reads only those. Included by
// common/bslz4-multi-main.wgsl (a line naming this file, scripts/wgsl-include.mjs); it uses blk_word, plane_bytes4,
// transpose8, bytes4 and emit_group from there.

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
// byte, as bits (quad 0 always set): every lane ORs the words of quads 1.. it strides over, the group's lanes
// OR their bits together. Call in uniform control flow, after the barrier that ends the block's walk.
fn plane_quads(busy: bool, elems: u32, sub: u32, lane: u32) -> u32 {
  let at = 2u * sub + (plane_round & 1u);
  // The other mask was last read before the barrier that began this block's round: clear it for the next block.
  if (lane == 0u) {
    atomicStore(&quads_live[2u * sub + ((plane_round + 1u) & 1u)], 0u);
  }
  plane_round += 1u;
  if (busy) {
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
