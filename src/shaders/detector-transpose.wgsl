// Frame-major decoded batch -> detector-major resident rows, plus exact per-pixel sums (DP sums): the body is
// common/detector-transpose-main.wgsl (contract, layouts, entry points main and main_vec4). This form counts no
// histogram; detector-transpose-histogram.wgsl is the same pass that also counts the audit histogram's bins
// 1..255 (the load's, whose decode leaves them to it).

fn binned(pixel: u32) -> bool {
  return false;
}
fn bin_value(v: u32, counted: bool) {}
fn flush_bins(lid: u32) {}

// #include "common/detector-transpose-packed.wgsl"

// #include "common/detector-transpose-main.wgsl"
