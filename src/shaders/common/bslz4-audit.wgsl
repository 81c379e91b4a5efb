// The exact count audit of decoded values and the raw tail of a chunk, shared by the two bitshuffle/LZ4 decode
// shaders (include line); they declare `frame_hist` (workgroup atomics, BINS bins) and call audit_value per value.
// Per-lane audit of the current frame: zeros and values above 255 counted in registers.
var<private> lane_zero: u32;
var<private> lane_over: u32;
var<private> lane_max: u32;
var<private> lane_sum: vec2<u32>;

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
