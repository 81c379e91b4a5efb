// The exact count audit of decoded values and the raw tail of a chunk, shared by the two bitshuffle/LZ4 decode
// shaders (include line); they declare `frame_hist` (workgroup atomics, BINS bins) and call audit_value per value.
// Per-lane audit of the current frame: zeros and values above 255 counted in registers.
var<private> lane_zero: u32;
var<private> lane_over: u32;
var<private> lane_max: u32;
var<private> lane_sum: vec2<u32>;
// Values 1..LANE_BINS (at most 4; the commonest after 0 in detector counts) are counted in registers too, not
// with a workgroup atomic each.
override LANE_BINS: u32 = 0u;
var<private> lane_small: vec4<u32>;

fn reset_lane_audit() {
  lane_zero = 0u;
  lane_over = 0u;
  lane_max = 0u;
  lane_sum = vec2<u32>(0u);
  lane_small = vec4<u32>(0u);
}

// Adds the lane's register counts of the frame to the workgroup's histogram.
fn flush_lane_bins() {
  if (lane_zero != 0u) {
    atomicAdd(&frame_hist[0], lane_zero);
  }
  if (lane_over != 0u) {
    atomicAdd(&frame_hist[BINS - 1u], lane_over);
  }
  for (var i = 0u; i < LANE_BINS; i++) {
    if (lane_small[i] != 0u) {
      atomicAdd(&frame_hist[i + 1u], lane_small[i]);
    }
  }
}

fn add64(a: vec2<u32>, b: u32) -> vec2<u32> {
  let lo = a.x + b;
  return vec2<u32>(lo, a.y + select(0u, 1u, lo < b));
}

// Adds `value` to the u64 counter at audit[i], audit[i + 1].
fn audit_add64(i: u32, value: u32) {
  let old = atomicAdd(&audit[i], value);
  if (old + value < old) {
    atomicAdd(&audit[i + 1u], 1u);
  }
}

fn audit_value(pixel: u32, v: u32) {
  if (flags[pixel] != 0u) {
    return;
  }
  lane_sum = add64(lane_sum, v);
  lane_max = max(lane_max, v);
  if (v == 0u) {
    lane_zero += 1u;
  } else if (v <= LANE_BINS) {
    lane_small += select(vec4<u32>(0u), vec4<u32>(1u), vec4<u32>(v) == vec4<u32>(1u, 2u, 3u, 4u));
  } else if (v > 255u) {
    lane_over += 1u;
  } else {
    atomicAdd(&frame_hist[v], 1u);
  }
}

// The raw tail: elements [first, pixels) from slot bytes at `src` (one lane).
fn write_tail(src: u32, first: u32, out_base: u32) {
  let n = params.pixels;
  for (var e = first; e < n; e++) {
    var v = 0u;
    for (var j = 0u; j < ELEM_SIZE; j++) {
      v |= slot_byte(src + (e - first) * ELEM_SIZE + j) << (8u * j);
    }
    audit_value(e, v);
  }
  // Output words from byte first * ELEM_SIZE (a multiple of 8) to the end of the values, the last one padded.
  let byte0 = first * ELEM_SIZE;
  let bytes = (n - first) * ELEM_SIZE;
  for (var k = 0u; k < bytes; k += 4u) {
    decoded[out_base + (byte0 + k) / 4u] = slot_bytes(src + k, min(4u, bytes - k));
  }
}
