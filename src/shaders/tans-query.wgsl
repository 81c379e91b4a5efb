// Masked sums straight from archive records' tANS lanes (docs/archive-format.md), no decoded tensor: each
// detector pixel has two mask bits (bit 0 -> accumulator A, bit 1 -> accumulator B), so one decode gives a
// full mask's image or a delta's added and removed pixels. A lane decodes only up to the last pixel any mask
// needs (`need[slice]`) and slices with none are not dispatched (`need[SLICES + k]` lists the active ones).
// One dispatch covers every record of a data buffer (a record table maps invocations to records), so the GPU
// is filled and dispatches that share a sums buffer are few (each one waits for the previous one).
// Sums are exact: per lane in (lo, hi) u32, then added to the frame's (lo, hi) with a carry (atomics are
// order-independent for integers, so results are deterministic). CPU twin: src/series/tans-query.ts.

// Overrides WORKGROUP_SIZE, TABLE_LOG, BITS, TOKENS; bindings 0-4: params (the Params below), data, offsets,
// cells, class_map.
// #include "common/tans-lane-bindings.wgsl"

struct Params {
  // Invocations [lane_first, lane_first + lane_count) of the lanes of records [record_first, record_first +
  // record_count) of `records`, numbered record after record (each record: frames * its active slices).
  lane_first: u32,
  lane_count: u32,
  record_first: u32,
  record_count: u32,
}

// One record of the dispatch group (src/series/series.ts RECORD_WORDS): where its data, lane offsets, tables,
// class map, mask bits, slice needs and frame sums live.
struct Record {
  // First invocation of the group that belongs to this record.
  lane_start: u32,
  frames: u32,
  slices: u32,
  slice_pixels: u32,
  pixels: u32,
  // Word offsets of this record in the bound buffers.
  data_base: u32,
  offsets_base: u32,
  cells_base: u32,
  class_base: u32,
  // Index of the record's first frame in `sums`: accumulator A of frame f at words 2 (frame_base + f) (lo, hi),
  // accumulator B at b_base + 2 (frame_base + f) (A and B in two planes, so a full mask reads back A alone).
  frame_base: u32,
  data_words: u32,
  // Detector columns: neighbour contexts restart at each row.
  cols: u32,
  // Word offsets of this acquisition's mask bits and slice needs.
  bits_base: u32,
  need_base: u32,
  // Word offset of accumulator B's plane in `sums` (2 x the frames of the data buffer).
  b_base: u32,
  pad1: u32,
}

// Mask bits per detector pixel.
@group(0) @binding(5) var<storage, read> bits: array<u32>;
// need[slice] = pixels to decode; need[slices + k] = k-th active slice.
@group(0) @binding(6) var<storage, read> need: array<u32>;
@group(0) @binding(7) var<storage, read_write> sums: array<atomic<u32>>;
@group(0) @binding(8) var<storage, read> records: array<Record>;

// #include "common/tans-context.wgsl"

// The lane's bit reader: start, p, lane_words, open_window(), read_bits(k).
// #include "common/tans-bits.wgsl"

// The lane walk: walk_lane(LaneWalk) calls on_value(i, v) with each value.
// #include "common/tans-lane.wgsl"

// 64-bit accumulators of this lane.
var<private> a_lo: u32;
var<private> a_hi: u32;
var<private> b_lo: u32;
var<private> b_hi: u32;

fn accumulate(m: u32, v: u32) {
  if ((m & 1u) != 0u) {
    let s = a_lo + v;
    a_hi += select(0u, 1u, s < v);
    a_lo = s;
  }
  if ((m & 2u) != 0u) {
    let s = b_lo + v;
    b_hi += select(0u, 1u, s < v);
    b_lo = s;
  }
}

// Mask bits of the lane's first pixel.
var<private> bits_base: u32;

fn on_value(i: u32, v: u32) {
  accumulate(bits[bits_base + i], v);
}

fn add64(at: u32, lo: u32, hi: u32) {
  if (lo == 0u && hi == 0u) {
    return;
  }
  let old = atomicAdd(&sums[at], lo);
  let carry = select(0u, 1u, old + lo < old);
  if (hi + carry != 0u) {
    atomicAdd(&sums[at + 1u], hi + carry);
  }
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
  if (id.x >= params.lane_count) {
    return;
  }
  let g = params.lane_first + id.x;
  // The record of invocation g: the last one whose lane_start <= g (records are in lane_start order).
  var lo = params.record_first;
  var hi = params.record_first + params.record_count - 1u;
  while (lo < hi) {
    let mid = (lo + hi + 1u) / 2u;
    if (records[mid].lane_start <= g) {
      lo = mid;
    } else {
      hi = mid - 1u;
    }
  }
  let r = records[lo];
  let local = g - r.lane_start;
  let slice = need[r.need_base + r.slices + local / r.frames];
  let frame = local % r.frames;
  let lane = frame * r.slices + slice;
  let first = slice * r.slice_pixels;
  let count = min(r.slice_pixels, r.pixels - first);
  a_lo = 0u;
  a_hi = 0u;
  b_lo = 0u;
  b_hi = 0u;
  bits_base = r.bits_base + first;
  let walk = LaneWalk(
    r.data_base,
    r.cells_base,
    r.class_base,
    offsets[r.offsets_base + lane],
    offsets[r.offsets_base + lane + 1u],
    r.data_words,
    first,
    count,
    min(need[r.need_base + slice], count),
    r.cols,
  );
  if (!walk_lane(walk)) {
    return;
  }
  let at = (r.frame_base + frame) * 2u;
  add64(at, a_lo, a_hi);
  add64(r.b_base + at, b_lo, b_hi);
}
