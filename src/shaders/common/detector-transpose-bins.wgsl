// The histogram part of detector-transpose-histogram.wgsl, included there before the body
// (common/detector-transpose-main.wgsl), whose entry points call binned, bin_value and flush_bins (stubs in
// detector-transpose.wgsl). The audit histogram's bins 1..255 of the dispatch's unflagged values, which the
// decode leaves to this pass in a load with GpuLoadOptions.histogramIn 'transpose' (AUDIT_BINS false in
// common/bslz4-audit.wgsl; the load's default counts them in the decode): counted per workgroup in `bins`, then
// added to the decode's audit buffer (u64 bins from word AUDIT_HISTOGRAM, the decode's layout) with at most 2
// global atomics a bin. Values outside the dispatch's frames and pixels read as zero, so they count in no bin.
// `bins` takes the workgroup past the 16 KiB of workgroup memory every device offers (17 KiB with the tile).
override AUDIT_HISTOGRAM: u32 = 4u;
@group(0) @binding(7) var<storage, read_write> audit: array<atomic<u32>>;
// Per global pixel: nonzero = flagged (left out of the histogram).
@group(0) @binding(8) var<storage, read> flags: array<u32>;
var<workgroup> bins: array<atomic<u32>, 256>;

// Whether `pixel`'s values go into the histogram (the pixel is the dispatch's and unflagged).
fn binned(pixel: u32) -> bool {
  return pixel < params.pixel_end && flags[min(pixel, arrayLength(&flags) - 1u)] == 0u;
}

// Counts value v of a binned pixel in bins 1..255.
fn bin_value(v: u32, counted: bool) {
  if (counted & (v - 1u < 255u)) {
    atomicAdd(&bins[v], 1u);
  }
}

// Adds the workgroup's bins to the audit. Call in uniform control flow after the last bin_value (a barrier).
fn flush_bins(lid: u32) {
  workgroupBarrier();
  for (var v = 1u + lid; v < 256u; v += THREADS) {
    let c = atomicLoad(&bins[v]);
    if (c != 0u) {
      let i = AUDIT_HISTOGRAM + 2u * v;
      let old = atomicAdd(&audit[i], c);
      if (old + c < old) {
        atomicAdd(&audit[i + 1u], 1u);
      }
    }
  }
}
