// Exact masked sums per frame (a virtual detector), as 64-bit integers in two u32 words (lo, hi).
// `data` holds detector values packed little-endian, ELEM_BYTES each (4: one u32 per value, 2: uint16 pairs,
// 1: uint8 quads). A dispatch reads a window of `elem_count` values starting at `data[elem_offset]`; the
// window's first value is pixel `first_pixel` of the frame stored at `sums[out_frame]`. A frame may span
// several windows (and so several dispatches): each workgroup adds its frame's partial sum to `sums` with
// carry, so the caller clears `sums` once and every window accumulates.
// One workgroup per frame of the window; WORKGROUP_SIZE must be a power of two.

override ELEM_BYTES: u32 = 4u;
override WORKGROUP_SIZE: u32 = 64u;

struct Params {
  pixels: u32,
  first_pixel: u32,
  elem_count: u32,
  elem_offset: u32,
  // Window-relative frame handled by workgroup 0 of this dispatch.
  frame_offset: u32,
  out_frame: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> data: array<u32>;
@group(0) @binding(2) var<storage, read> mask: array<u32>;
@group(0) @binding(3) var<storage, read_write> sums: array<vec2<u32>>;

var<workgroup> partial: array<vec2<u32>, WORKGROUP_SIZE>;

fn add64(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  let lo = a.x + b.x;
  return vec2<u32>(lo, a.y + b.y + select(0u, 1u, lo < a.x));
}

fn load(index: u32) -> u32 {
  if (ELEM_BYTES == 1u) {
    return (data[index >> 2u] >> ((index & 3u) * 8u)) & 0xffu;
  }
  if (ELEM_BYTES == 2u) {
    return (data[index >> 1u] >> ((index & 1u) * 16u)) & 0xffffu;
  }
  return data[index];
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let frame = params.frame_offset + wid.x;
  // Window indices of this frame's values: [lo, hi).
  let frame_start = frame * params.pixels;
  let lo = select(frame_start - params.first_pixel, 0u, frame == 0u);
  let hi = min(frame_start + params.pixels - params.first_pixel, params.elem_count);

  var acc = vec2<u32>(0u, 0u);
  for (var j = lo + lid; j < hi; j += WORKGROUP_SIZE) {
    let pixel = j + params.first_pixel - frame_start;
    if (mask[pixel] != 0u) {
      acc = add64(acc, vec2<u32>(load(params.elem_offset + j), 0u));
    }
  }
  partial[lid] = acc;
  workgroupBarrier();
  for (var stride = WORKGROUP_SIZE / 2u; stride > 0u; stride >>= 1u) {
    if (lid < stride) {
      partial[lid] = add64(partial[lid], partial[lid + stride]);
    }
    workgroupBarrier();
  }
  if (lid == 0u && lo < hi) {
    let out = params.out_frame + frame;
    sums[out] = add64(sums[out], partial[0]);
  }
}
