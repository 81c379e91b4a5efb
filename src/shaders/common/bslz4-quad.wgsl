// QUAD_STORES (`qx`): the quad operations of the `subgroups` extension, which the pass files that include this one
// enable (their first line). The unshuffle of a block below 256 (unshuffle_low_words) exchanges its 8-value pieces
// among the 4 lanes of a quad (quad_transpose_*) so that each store instruction of a quad writes one lane's
// contiguous bytes: 32-byte sectors written whole instead of a share of each. common/bslz4-quad-none.wgsl is the
// same interface for the other pass files (never called there).
const QUAD_STORES = true;

// A lane's position in its quad (`r`, from 0) and the `lane` value of each of the quad's 4 lanes (`l`), read
// through quad broadcasts: no assumption about how lanes map onto subgroup invocations.
struct QuadLanes {
  r: u32,
  l: vec4<u32>,
}

fn quad_lanes(lane: u32) -> QuadLanes {
  let l = vec4<u32>(quadBroadcast(lane, 0u), quadBroadcast(lane, 1u), quadBroadcast(lane, 2u), quadBroadcast(lane, 3u));
  let r = select(select(select(3u, 2u, l.z == lane), 1u, l.y == lane), 0u, l.x == lane);
  return QuadLanes(r, l);
}

fn quad_swap_x(v: vec4<u32>) -> vec4<u32> {
  return quadSwapX(v);
}

fn quad_swap_y(v: vec4<u32>) -> vec4<u32> {
  return quadSwapY(v);
}
