// The counts of a run of frames of one archive record, decoded from its tANS lanes (docs/archive-format.md) into
// a frame-major scratch (frame f of the run, pixel p at f * stride + p, one u32 each; the index's tile sums
// follow the pixels): the input of the series
// index build (packed-index.wgsl). One invocation per lane of the run's frames; a lane that lies counts in
// `errors[0]` (the build then fails: nothing it wrote is used). CPU twin: decodeLane (src/archive/tans-decode.ts),
// as used by src/series/packed-index-build.ts.

// Overrides WORKGROUP_SIZE, TABLE_LOG, BITS, TOKENS; bindings 0-4: params (the Params below), data, offsets,
// cells, class_map.
// #include "common/tans-lane-bindings.wgsl"

struct Params {
  // Frames [frame_first, frame_first + frames) of the record (frame_first is within the record).
  frame_first: u32,
  frames: u32,
  slices: u32,
  slice_pixels: u32,
  pixels: u32,
  data_base: u32,
  offsets_base: u32,
  cells_base: u32,
  class_base: u32,
  data_words: u32,
  cols: u32,
  // Values per frame in the scratch.
  stride: u32,
}

@group(0) @binding(5) var<storage, read_write> values: array<u32>;
@group(0) @binding(6) var<storage, read_write> errors: array<atomic<u32>>;

// #include "common/tans-context.wgsl"

// The lane's bit reader: start, p, lane_words, open_window(), read_bits(k).
// #include "common/tans-bits.wgsl"

// The lane walk: walk_lane(LaneWalk) calls on_value(i, v) with each value.
// #include "common/tans-lane.wgsl"

// Where the lane's first value goes in `values`.
var<private> out_base: u32;

fn on_value(i: u32, v: u32) {
  values[out_base + i] = v;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
  let lanes = params.frames * params.slices;
  if (id.x >= lanes) {
    return;
  }
  let f = id.x / params.slices;
  let slice = id.x % params.slices;
  let lane = (params.frame_first + f) * params.slices + slice;
  let first = slice * params.slice_pixels;
  let count = min(params.slice_pixels, params.pixels - first);
  out_base = f * params.stride + first;
  let walk = LaneWalk(
    params.data_base,
    params.cells_base,
    params.class_base,
    offsets[params.offsets_base + lane],
    offsets[params.offsets_base + lane + 1u],
    params.data_words,
    first,
    count,
    count,
    params.cols,
  );
  if (!walk_lane(walk)) {
    atomicAdd(&errors[0], 1u);
  }
}
