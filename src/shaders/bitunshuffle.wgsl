// Undo the bitshuffle bit transpose (the decode stage after LZ4) for frames of `frame_elems` elements of
// ELEM_SIZE bytes. Input: the decompressed chunk bytes of every frame back to back, packed little-endian in
// u32 words (WGSL has no u8). Per frame: full blocks of `block_elems` elements, one short block of
// (frame_elems mod block_elems) rounded down to a multiple of 8, then (frame_elems mod 8) raw elements.
// Output: one u32 per element (uint8/uint16 values zero-extended), frame-major.
// Inside a block of n elements: 8 * ELEM_SIZE bit planes of n / 8 bytes; plane p holds value bit p; element
// i's bit is bit (i mod 8) of byte floor(i / 8) of the plane. One thread per group of 8 elements: the 8
// elements share one byte of every plane.

override ELEM_SIZE: u32 = 2u;
override WORKGROUP_SIZE: u32 = 64u;

struct Params {
  frame_elems: u32,
  block_elems: u32,
  // First 8-element group of this dispatch (groups count across frames: ceil(frame_elems / 8) per frame).
  group_offset: u32,
  // One past the last group of the whole job.
  group_end: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> shuffled: array<u32>;
@group(0) @binding(2) var<storage, read_write> values: array<u32>;

fn read_byte(index: u32) -> u32 {
  return (shuffled[index >> 2u] >> ((index & 3u) * 8u)) & 0xffu;
}

// #include "common/bit-transpose.wgsl"

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let group = params.group_offset + gid.x;
  if (group >= params.group_end) {
    return;
  }
  let n = params.frame_elems;
  let groups_per_frame = (n + 7u) / 8u;
  let frame = group / groups_per_frame;
  let first = (group % groups_per_frame) * 8u;
  let frame_byte = frame * n * ELEM_SIZE;
  let out_base = frame * n + first;

  let full_blocks = n / params.block_elems;
  let shuffled_elems = full_blocks * params.block_elems + ((n % params.block_elems) & ~7u);

  if (first >= shuffled_elems) {
    // Raw tail: n mod 8 elements stored as plain little-endian bytes.
    for (var e = first; e < n; e++) {
      var v = 0u;
      for (var j = 0u; j < ELEM_SIZE; j++) {
        v |= read_byte(frame_byte + e * ELEM_SIZE + j) << (8u * j);
      }
      values[frame * n + e] = v;
    }
    return;
  }

  let block = first / params.block_elems;
  let block_first = block * params.block_elems;
  let block_elems = select(params.block_elems, shuffled_elems - block_first, block == full_blocks);
  let plane_bytes = block_elems / 8u;
  let base = frame_byte + block_first * ELEM_SIZE + (first - block_first) / 8u;

  // For each byte j of the elements: planes 8j..8j+7 give an 8x8 bit matrix (rows = planes, columns = the
  // 8 elements); transposing it yields byte j of each element (Hacker's Delight 7-3, as the CPU codec does).
  var lo = vec4<u32>(0u);
  var hi = vec4<u32>(0u);
  for (var j = 0u; j < ELEM_SIZE; j++) {
    let b = base + 8u * j * plane_bytes;
    let p = transpose8(
      (read_byte(b + 7u * plane_bytes) << 24u) | (read_byte(b + 6u * plane_bytes) << 16u) |
        (read_byte(b + 5u * plane_bytes) << 8u) | read_byte(b + 4u * plane_bytes),
      (read_byte(b + 3u * plane_bytes) << 24u) | (read_byte(b + 2u * plane_bytes) << 16u) |
        (read_byte(b + plane_bytes) << 8u) | read_byte(b),
    );
    let shift = vec4<u32>(8u * j);
    lo |= bytes4(p.x) << shift;
    hi |= bytes4(p.y) << shift;
  }
  values[out_base] = lo.x;
  values[out_base + 1u] = lo.y;
  values[out_base + 2u] = lo.z;
  values[out_base + 3u] = lo.w;
  values[out_base + 4u] = hi.x;
  values[out_base + 5u] = hi.y;
  values[out_base + 6u] = hi.z;
  values[out_base + 7u] = hi.w;
}
