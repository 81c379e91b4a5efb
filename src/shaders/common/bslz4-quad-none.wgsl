// The interface of common/bslz4-quad.wgsl without the `subgroups` extension (QUAD_STORES false): the pass files
// without `qx` include this one, so that the quad branches compile; nothing here is reached.
const QUAD_STORES = false;

struct QuadLanes {
  r: u32,
  l: vec4<u32>,
}

fn quad_lanes(lane: u32) -> QuadLanes {
  return QuadLanes(0u, vec4<u32>(lane));
}

fn quad_swap_x(v: vec4<u32>) -> vec4<u32> {
  return v;
}

fn quad_swap_y(v: vec4<u32>) -> vec4<u32> {
  return v;
}
