// The detector transpose (common/detector-transpose-main.wgsl: contract, layouts; entry point main_vec4 only) of a
// decoded slot of byte planes (src/kernels/decoded-planes.ts, written by the decode's planes form,
// common/bslz4-out-planes.wgsl) into uint16's byte-plane rows: the load phase reads the low plane, a frame row of
// 64 bytes a block (the uint8 form's accesses: half the bytes of the packed uint16 form); a tile's high plane is
// read only when one of its frames marks the block's span, and each of its nonzero vec4 is zeroed after the read,
// so the slot's high plane is all zero again for the next decode, which stores only nonzero high bytes. Row words,
// high words, hot bits and DP sums are those of the packed form's transpose. No histogram (the load counts it in
// the decode). CPU twin: src/kernels/detector-transpose.ts (`planes`).

fn binned(pixel: u32) -> bool {
  return false;
}
fn bin_value(v: u32, counted: bool) {}
fn flush_bins(lid: u32) {}

@group(0) @binding(1) var<storage, read_write> decoded4: array<vec4<u32>>;
// The decoded bytes: 1 a value in each plane.
override IN_BYTES: u32 = 1u;
const PLANES = true;

// Per tile: whether a frame of it marks the block's span (ORed by the load phase), and its value for the workgroup.
var<workgroup> tile_marked: atomic<u32>;
var<workgroup> tile_marked_any: u32;

fn tile_mark_or() {
  atomicOr(&tile_marked, 1u);
}

// After the barrier that ends the tile's load phase: the workgroup's uniform verdict, the flag reset for the next
// tile (whose ORs come after the barrier of this uniform load).
fn tile_mark_take(lid: u32) -> u32 {
  if (lid == 0u) {
    tile_marked_any = atomicExchange(&tile_marked, 0u);
  }
  return workgroupUniformLoad(&tile_marked_any);
}

fn clear_decoded4(i: u32) {
  decoded4[i] = vec4<u32>(0u);
}

// #include "common/detector-transpose-main.wgsl"
