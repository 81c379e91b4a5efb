// Statistics a record's tANS model is built from (docs/archive-format.md), over the record's decoded values
// (frame-major, packed at the dtype's width from word frame * words_per_frame, as bslz4-decode.wgsl writes
// them). CPU twin: src/archive/tans-stats.ts (same integers).
//
// Both entry points give invocation g the pixel g % pixels and the frames [group * frames_per_group, ...) of
// group g / pixels, so a workgroup reads consecutive pixels of the same frames (coalesced), and each
// invocation's pixel, hence its class, is fixed.
//
// - `main` (pixel sums): per pixel, the exact sum of its values as a (lo, hi) u32 pair: each invocation sums its
//   frames with a carry, then adds into the pair atomically; the carry of the atomic add on lo is old + lo
//   >= 2^32, so the pair stays exact. Also the record's audit: max value and count of values above 255 (every
//   value, flagged pixels included: the archive keeps every count).
// - `token_histogram`: per (context, token), how many values have that token (hybrid-uint.ts; the context is
//   the pixel's class and its two left neighbours in the same row and lane). Each invocation merges runs of
//   the same bin before adding; adds go to a workgroup histogram when
//   it fits (SHARED_BINS >= classes * TOKENS), then once per bin to the global one.

override WORKGROUP_SIZE: u32 = 256u;
// Bits per value: 8, 16 or 32.
override BITS: u32 = 16u;
override TOKENS: u32 = 64u;
// Bins of the workgroup histogram; 1 = no workgroup histogram (global atomics only).
override SHARED_BINS: u32 = 1u;

struct Params {
  // Invocations [first, first + count) of pixels * groups.
  first: u32,
  count: u32,
  frames: u32,
  pixels: u32,
  words_per_frame: u32,
  frames_per_group: u32,
  // classes * 9 * TOKENS (contexts x tokens)
  bins: u32,
  // Detector columns and pixels per lane: a value's context needs its left neighbours in its row and lane.
  cols: u32,
  slice_pixels: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> values: array<u32>;
// main: (lo, hi) per pixel; audit: [max, above255].
@group(0) @binding(2) var<storage, read_write> sums: array<atomic<u32>>;
@group(0) @binding(3) var<storage, read_write> audit: array<atomic<u32>>;
// token_histogram: class per pixel; classes x TOKENS counts.
@group(0) @binding(4) var<storage, read> class_map: array<u32>;
@group(0) @binding(5) var<storage, read_write> histogram: array<atomic<u32>>;

var<workgroup> shared_hist: array<atomic<u32>, SHARED_BINS>;

fn value_at(frame: u32, pixel: u32) -> u32 {
  let base = frame * params.words_per_frame;
  if (BITS == 16u) {
    return (values[base + (pixel >> 1u)] >> ((pixel & 1u) * 16u)) & 0xffffu;
  }
  if (BITS == 8u) {
    return (values[base + (pixel >> 2u)] >> ((pixel & 3u) * 8u)) & 0xffu;
  }
  return values[base + pixel];
}

// #include "common/tans-context.wgsl"

// How many left neighbours of `pixel` are in its row and its lane (0, 1 or 2).
fn left_neighbours(pixel: u32) -> u32 {
  let col = pixel % params.cols;
  let in_lane = pixel - (pixel / params.slice_pixels) * params.slice_pixels;
  return min(min(col, in_lane), 2u);
}

// The context of the value of `frame` at `pixel`: class * 9 + neighbour bucket.
fn context_of(frame: u32, pixel: u32, pixel_class: u32) -> u32 {
  let k = left_neighbours(pixel);
  var l1 = 0u;
  var l2 = 0u;
  if (k >= 1u) {
    l1 = value_at(frame, pixel - 1u);
  }
  if (k >= 2u) {
    l2 = value_at(frame, pixel - 2u);
  }
  return pixel_class * 9u + neighbour_bucket(l1, l2);
}

fn token_of(v: u32) -> u32 {
  if (v < 16u) {
    return v;
  }
  let n = firstLeadingBit(v);
  return 16u + ((n - 4u) << 2u) + ((v >> (n - 2u)) & 3u);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
  if (id.x >= params.count) {
    return;
  }
  let g = params.first + id.x;
  let pixel = g % params.pixels;
  let f0 = (g / params.pixels) * params.frames_per_group;
  let f1 = min(f0 + params.frames_per_group, params.frames);
  var lo = 0u;
  var hi = 0u;
  var vmax = 0u;
  var above = 0u;
  for (var f = f0; f < f1; f++) {
    let v = value_at(f, pixel);
    let next = lo + v;
    hi += select(0u, 1u, next < lo);
    lo = next;
    vmax = max(vmax, v);
    above += select(0u, 1u, v > 255u);
  }
  let old = atomicAdd(&sums[2u * pixel], lo);
  let carry = select(0u, 1u, lo > 0xffffffffu - old);
  if (hi + carry > 0u) {
    atomicAdd(&sums[2u * pixel + 1u], hi + carry);
  }
  if (vmax > 0u) {
    atomicMax(&audit[0], vmax);
  }
  if (above > 0u) {
    atomicAdd(&audit[1], above);
  }
}

fn add_token(bin: u32, n: u32) {
  if (SHARED_BINS > 1u) {
    atomicAdd(&shared_hist[bin], n);
  } else {
    atomicAdd(&histogram[bin], n);
  }
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn token_histogram(
  @builtin(global_invocation_id) id: vec3<u32>,
  @builtin(local_invocation_index) local: u32,
) {
  if (SHARED_BINS > 1u) {
    for (var b = local; b < params.bins; b += WORKGROUP_SIZE) {
      atomicStore(&shared_hist[b], 0u);
    }
    workgroupBarrier();
  }
  if (id.x < params.count) {
    let g = params.first + id.x;
    let pixel = g % params.pixels;
    let f0 = (g / params.pixels) * params.frames_per_group;
    let f1 = min(f0 + params.frames_per_group, params.frames);
    let cls = class_map[pixel];
    var bin = 0xffffffffu;
    var run = 0u;
    for (var f = f0; f < f1; f++) {
      let b = context_of(f, pixel, cls) * TOKENS + token_of(value_at(f, pixel));
      if (b != bin) {
        if (run > 0u) {
          add_token(bin, run);
        }
        bin = b;
        run = 0u;
      }
      run++;
    }
    if (run > 0u) {
      add_token(bin, run);
    }
  }
  if (SHARED_BINS > 1u) {
    workgroupBarrier();
    for (var b = local; b < params.bins; b += WORKGROUP_SIZE) {
      let n = atomicLoad(&shared_hist[b]);
      if (n > 0u) {
        atomicAdd(&histogram[b], n);
      }
    }
  }
}
