// The histogram part of detector-transpose-histogram.wgsl, included there before the body
// (common/detector-transpose-main.wgsl), whose entry points call binned, bin_value and flush_bins (stubs in
// detector-transpose.wgsl). The audit histogram's bins 1..255 of the dispatch's unflagged values, which the
// load's decode leaves to this pass (AUDIT_BINS in common/bslz4-audit.wgsl): counted per workgroup in `bins`,
// then added to the decode's audit buffer (u64 bins from word AUDIT_HISTOGRAM, the decode's layout) with at most
// 2 global atomics a bin. Values outside the dispatch's frames and pixels read as zero, so they count in no bin.
// `bins` takes the workgroup past the 16 KiB of workgroup memory every device offers (17 KiB with the tile).
//
// Values 1, 2 and 3 (80 % of the nonzero counts of a detector frame: most of the dark field and the Bragg disks)
// are counted per thread in `small`, three 10-bit fields, and added to `bins` once at flush_bins: one workgroup
// atomic a value would queue a warp's lanes on the same few bins. A field holds at most 1,023, and a thread
// bins at most TILE_P x MAX_TILES x TILE_F / THREADS = 512 values a workgroup (TILE_F <= OUT_WORDS x 4 frames;
// the host never gives more than MAX_TILES tiles a workgroup: MAX_TILES_PER_WORKGROUP in
// src/gpu/passes/detector-transpose.ts).
override AUDIT_HISTOGRAM: u32 = 4u;
const MAX_TILES: u32 = 16u;
const_assert TILE_P * MAX_TILES * OUT_WORDS * 4u / THREADS < 1024u;
@group(0) @binding(7) var<storage, read_write> audit: array<atomic<u32>>;
// Per global pixel: nonzero = flagged (left out of the histogram).
@group(0) @binding(8) var<storage, read> flags: array<u32>;
var<workgroup> bins: array<atomic<u32>, 256>;
// This thread's counts of values 1, 2 and 3: bits 0-9, 10-19 and 20-29.
var<private> small: u32;

// Whether `pixel`'s values go into the histogram (the pixel is the dispatch's and unflagged).
fn binned(pixel: u32) -> bool {
  return pixel < params.pixel_end && flags[min(pixel, arrayLength(&flags) - 1u)] == 0u;
}

// Counts value v of a binned pixel in bins 1..255: 1..3 in `small`, 4..255 in `bins`.
fn bin_value(v: u32, counted: bool) {
  let k = v - 1u;
  small += select(0u, 1u << (10u * min(k, 2u)), counted & (k < 3u));
  if (counted & (k - 3u < 252u)) {
    atomicAdd(&bins[v], 1u);
  }
}

// Adds the workgroup's bins to the audit. Call in uniform control flow after the last bin_value (a barrier).
fn flush_bins(lid: u32) {
  for (var k = 0u; k < 3u; k++) {
    let c = (small >> (10u * k)) & 0x3ffu;
    if (c != 0u) {
      atomicAdd(&bins[1u + k], c);
    }
  }
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
