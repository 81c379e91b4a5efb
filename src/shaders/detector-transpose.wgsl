// Frame-major decoded batch -> detector-major resident rows, plus exact per-pixel sums (DP sums): the body is
// common/detector-transpose-main.wgsl (contract, layouts, entry points main and main_vec4). This form counts no
// histogram; detector-transpose-histogram.wgsl is the same pass that also counts the audit histogram's bins
// 1..255 (the load's, whose decode leaves them to it).

fn binned(pixel: u32) -> bool {
  return false;
}
fn bin_value(v: u32, counted: bool) {}
fn flush_bins(lid: u32) {}

// The packed decoded slot (the planes form's pass is detector-transpose-planes.wgsl): read only.
@group(0) @binding(1) var<storage, read> decoded4: array<vec4<u32>>;
override IN_BYTES: u32 = ELEM_BYTES;
const PLANES = false;
fn tile_mark_or() {}
fn tile_mark_take(lid: u32) -> u32 {
  return 0u;
}
fn clear_decoded4(i: u32) {}

// #include "common/detector-transpose-main.wgsl"
