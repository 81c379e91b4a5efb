// The exact count audit of decoded values and the raw tail of a chunk, shared by the two bitshuffle/LZ4 decode
// shaders (include line): they call audit_value per value and finish_frame at the end of each frame.
// Per-lane audit of the current frame: zeros and values above 255 counted in registers.
var<private> lane_zero: u32;
var<private> lane_over: u32;
var<private> lane_max: u32;
var<private> lane_sum: vec2<u32>;
// AUDIT_BINS: the lane's counts of values 1, 2 and 3 (80 % of the nonzero counts of a detector frame), added to
// the frame's bins once at finish_frame instead of one workgroup atomic a value on the same few bins.
var<private> lane_small: vec3<u32>;
// MID_BINS (the variant part `mb`, with `ba` and AUDIT_BINS): values 4..15 are counted by popcounts of the bit
// planes too (bin_low_word), not by one workgroup atomic a value.
override MID_BINS: bool = false;
// MID_BINS, the `ba` path (bin_low_word): the lane's counts of values 4..15 (two thirds of the rest), two bins a
// word in 16-bit halves: lane_mid_a holds bins 4|5, 6|7, 8|9 and lane_mid_b bins 10|11, 12|13, 14|15 (the lower
// bin in the low half). Added to the frame's bins at finish_frame, or by a block that leaves a count at 2^15 or
// more (a block adds at most 8,192 values to a count: MAX_BLOCK_BYTES), so no half overflows.
var<private> lane_mid_a: vec3<u32>;
var<private> lane_mid_b: vec3<u32>;

// OUT_PLANES: the spans of the current frame in which this lane stored a nonzero high byte (bit s: span s), and
// the frame's (per audit set), written as its mark by finish_frame.
var<private> lane_spans: u32;
var<workgroup> frame_spans: array<atomic<u32>, AUDIT_SETS>;

// OUT_PLANES: words of each of a frame's two planes (words_per_frame = 2 plane_words() + 4).
fn plane_words() -> u32 {
  return (params.words_per_frame - 4u) / 2u;
}

// OUT_PLANES: elements a span (a multiple of 64, the transpose's pixel block, so that a block lies in one span;
// at most 32 spans a frame): 64 ceil(pixels / 2048). src/kernels/decoded-planes.ts has the same.
fn span_elems() -> u32 {
  return 64u * ((params.pixels + 2047u) / 2048u);
}

// OUT_PLANES: notes that element e's span holds a nonzero high byte.
fn note_high_span(e: u32) {
  lane_spans |= 1u << (e / span_elems());
}

// Starts a lane's audit of a new frame.
fn reset_lane_audit() {
  lane_spans = 0u;
  lane_zero = 0u;
  lane_over = 0u;
  lane_max = 0u;
  lane_sum = vec2<u32>(0u);
  lane_small = vec3<u32>(0u);
  lane_mid_a = vec3<u32>(0u);
  lane_mid_b = vec3<u32>(0u);
}

// Adds the two 16-bit counts of `pair` to bins `bin` (low half) and bin + 1 of this lane's frame.
fn add_bin_pair(bin: u32, pair: u32) {
  if ((pair & 0xffffu) != 0u) {
    atomicAdd(&frame_hist[bin], pair & 0xffffu);
  }
  if ((pair >> 16u) != 0u) {
    atomicAdd(&frame_hist[bin + 1u], pair >> 16u);
  }
}

// Adds the lane's counts of values 4..15 to its frame's bins and clears them.
fn flush_lane_mid() {
  let h = audit_set * BINS;
  add_bin_pair(h + 4u, lane_mid_a.x);
  add_bin_pair(h + 6u, lane_mid_a.y);
  add_bin_pair(h + 8u, lane_mid_a.z);
  add_bin_pair(h + 10u, lane_mid_b.x);
  add_bin_pair(h + 12u, lane_mid_b.y);
  add_bin_pair(h + 14u, lane_mid_b.z);
  lane_mid_a = vec3<u32>(0u);
  lane_mid_b = vec3<u32>(0u);
}

// After a block: flushes the counts of values 4..15 once one of them reaches 2^15.
fn bound_lane_mid() {
  let any = lane_mid_a.x | lane_mid_a.y | lane_mid_a.z | lane_mid_b.x | lane_mid_b.y | lane_mid_b.z;
  if ((any & 0x80008000u) != 0u) {
    flush_lane_mid();
  }
}

// Declared here for both decode shaders: the histogram, maximum and (lo, hi) sum of the current frame, in
// AUDIT_SETS sets (the multi shader's groups each decode a frame of their own with FRAME_GROUPS: one set a group).
override AUDIT_SETS: u32 = 1u;
var<workgroup> frame_hist: array<atomic<u32>, BINS * AUDIT_SETS>;
var<workgroup> frame_max: array<atomic<u32>, AUDIT_SETS>;
var<workgroup> frame_sum: array<atomic<u32>, 2u * AUDIT_SETS>;
// The set of this lane's frame (0 unless FRAME_GROUPS).
var<private> audit_set: u32;
// false: the histogram's bins 1..255 are not counted here (bins 0 and 256, the frame's maximum and sum are):
// a load with histogramIn 'transpose' counts them in its transpose (detector-transpose.wgsl, HISTOGRAM). The
// load's default counts them here: with values 1..3 in lane_small (popcounts in the `ba` path), the load's decode
// + transpose take the same time as with the bins in the transpose (106.9-107.1 ms a scan against 107.0-107.5, two
// calls on an H100, docs/performance.md, twenty-fifth session). A failed frame's values are zero in the decoded
// slot, so the transpose counts none of them.
override AUDIT_BINS: bool = true;

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

// Audits value v of `pixel` unless the pixel is flagged.
fn audit_value(pixel: u32, v: u32) {
  let c = audit_counted(v, flags[pixel] == 0u);
  lane_sum = add64(lane_sum, c);
  lane_max = max(lane_max, c);
}

// The histogram part of the audit of value v (zero, above 255, or its bin) unless its pixel is flagged; returns
// the value to add to the sum and the maximum (0 for a flagged pixel). Branch-free but for the bin's atomic: the
// conditions use `&`, not `&&` (whose short circuit is a branch: SwiftShader, the software adapter of Chrome
// and of the GPU tests, compiled the decode shaders 25 x slower with it).
fn audit_counted(v: u32, counted: bool) -> u32 {
  lane_zero += select(0u, 1u, counted & (v == 0u));
  lane_over += select(0u, 1u, counted & (v > 255u));
  if (AUDIT_BINS) {
    let small = vec3<bool>(counted) & (vec3<u32>(v) == vec3<u32>(1u, 2u, 3u));
    lane_small += select(vec3<u32>(0u), vec3<u32>(1u), small);
    if (counted & (v - 4u < 252u)) {
      atomicAdd(&frame_hist[audit_set * BINS + v], 1u);
    }
  }
  return select(0u, v, counted);
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
  // Output words from byte first * ELEM_SIZE (a multiple of 8) to the end of the values, the last one padded;
  // OUT_VEC4 (byte0 a multiple of 16): to the end of the last vec4, zero words after the values (the padding that
  // finish_frame leaves to this lane).
  let byte0 = first * ELEM_SIZE;
  let bytes = (n - first) * ELEM_SIZE;
  if (OUT_PLANES) {
    // Fewer than 8 elements from a multiple of 8: one piece of each plane (the high one only when nonzero).
    var low = vec2<u32>(0u);
    var high = vec2<u32>(0u);
    for (var e = first; e < n; e++) {
      let v = slot_bytes(src + (e - first) * 2u, 2u);
      let k = e - first;
      let sh = 8u * (k & 3u);
      if (k < 4u) {
        low.x |= (v & 0xffu) << sh;
        high.x |= (v >> 8u) << sh;
      } else {
        low.y |= (v & 0xffu) << sh;
        high.y |= (v >> 8u) << sh;
      }
    }
    put_pair(out_base + first / 4u, low);
    if (any(high != vec2<u32>(0u))) {
      put_pair(out_base + plane_words() + first / 4u, high);
      note_high_span(first);
    }
  } else if (OUT_VEC4) {
    for (var k = 0u; k < bytes; k += 16u) {
      var v = vec4<u32>(0u);
      for (var j = 0u; j < 4u; j++) {
        let at = k + 4u * j;
        if (at < bytes) {
          v[j] = slot_bytes(src + at, min(4u, bytes - at));
        }
      }
      put_words4(out_base + (byte0 + k) / 4u, v);
    }
  } else {
    for (var k = 0u; k < bytes; k += 4u) {
      put_word(out_base + (byte0 + k) / 4u, slot_bytes(src + k, min(4u, bytes - k)));
    }
  }
}

// Zeroes words [first, words_per_frame) of the frame from word out_base, by lanes lid of n (OUT_VEC4: first, a
// multiple of 4, and whole vec4s).
fn zero_words(out_base: u32, first: u32, lid: u32, n: u32) {
  zero_range(out_base, first, params.words_per_frame, lid, n);
}

// Zeroes words [first, end) of the frame from word out_base, by lanes lid of n (OUT_VEC4: first and end multiples
// of 4, whole vec4s; OUT_PLANES: multiples of 2, whole pieces).
fn zero_range(out_base: u32, first: u32, end: u32, lid: u32, n: u32) {
  if (OUT_PLANES) {
    for (var w = first + 2u * lid; w < end; w += 2u * n) {
      put_pair(out_base + w, vec2<u32>(0u));
    }
  } else if (OUT_VEC4) {
    for (var w = first + 4u * lid; w < end; w += 4u * n) {
      put_words4(out_base + w, vec4<u32>(0u));
    }
  } else {
    for (var w = first + lid; w < end; w += n) {
      put_word(out_base + w, 0u);
    }
  }
}

// Ends frame `f` (batch-local) with verdict `err`, by the `n` lanes of the frame (`lid` from 0 to n - 1; every
// lane of the workgroup calls it, in uniform control flow): zeroes the row's padding (a failed frame: the whole
// row), folds the lanes' audit into the frame's, then the frame's into the global audit (a failed frame's counts
// are dropped), writes its error code and total. A frame that is not `live` (past the dispatch's frames) writes
// nothing.
fn finish_frame(f: u32, err: u32, live: bool, lid: u32, n: u32) {
  let value_words = (params.pixels * ELEM_SIZE + 3u) / 4u;
  let out_base = f * params.words_per_frame;
  let h = audit_set * BINS;
  // Other lanes may have written words of a failed frame: order their writes before its zero fill.
  storageBarrier();
  if (live && err == 0u) {
    if (OUT_PLANES) {
      // The low plane after the values' last piece (write_tail or the unshuffle wrote that one whole), up to the
      // high plane; the high plane's padding is never written (zero); the mark is written below.
      zero_range(out_base, 2u * ((params.pixels + 7u) / 8u), plane_words(), lid, n);
      if (lane_spans != 0u) {
        atomicOr(&frame_spans[audit_set], lane_spans);
      }
    } else {
      // OUT_VEC4: the padding from the vec4 after the values' last (write_tail zeroes the rest of that one).
      let pad0 = select(value_words, (value_words + 3u) & ~3u, OUT_VEC4);
      zero_words(out_base, pad0, lid, n);
    }
    if (lane_zero != 0u) {
      atomicAdd(&frame_hist[h], lane_zero);
    }
    if (lane_over != 0u) {
      atomicAdd(&frame_hist[h + BINS - 1u], lane_over);
    }
    if (AUDIT_BINS) {
      for (var k = 0u; k < 3u; k++) {
        if (lane_small[k] != 0u) {
          atomicAdd(&frame_hist[h + 1u + k], lane_small[k]);
        }
      }
      if (MID_BINS) {
        flush_lane_mid();
      }
    }
    atomicMax(&frame_max[audit_set], lane_max);
    let old = atomicAdd(&frame_sum[2u * audit_set], lane_sum.x);
    atomicAdd(&frame_sum[2u * audit_set + 1u], lane_sum.y + select(0u, 1u, old + lane_sum.x < old));
  } else if (live) {
    // OUT_PLANES: both planes (a lane may have stored high bytes before the frame failed) and the mark.
    zero_words(out_base, 0u, lid, n);
  }
  workgroupBarrier();
  // A decoded frame's counts go to the global audit; a failed frame's are dropped.
  for (var i = lid; i < BINS; i += n) {
    let c = atomicExchange(&frame_hist[h + i], 0u);
    if (live && err == 0u && c != 0u) {
      audit_add64(AUDIT_HISTOGRAM + 2u * i, c);
      if (i == BINS - 1u) {
        audit_add64(AUDIT_ABOVE_255, c);
      }
    }
  }
  if (lid == 0u) {
    let sum = vec2<u32>(
      atomicExchange(&frame_sum[2u * audit_set], 0u),
      atomicExchange(&frame_sum[2u * audit_set + 1u], 0u),
    );
    let fmax = atomicExchange(&frame_max[audit_set], 0u);
    let g = params.first_frame + f;
    if (OUT_PLANES) {
      let spans = atomicExchange(&frame_spans[audit_set], 0u);
      if (live && err == 0u) {
        put_pair(out_base + 2u * plane_words(), vec2<u32>(spans, 0u));
        put_pair(out_base + 2u * plane_words() + 2u, vec2<u32>(0u));
      }
    }
    if (live) {
      errors[g] = err;
      if (err == 0u) {
        totals[g] = sum;
        if (fmax != 0u) {
          atomicMax(&audit[AUDIT_MAX], fmax);
        }
      } else {
        totals[g] = vec2<u32>(0u);
        atomicAdd(&audit[AUDIT_FAILED], 1u);
      }
    }
  }
  workgroupBarrier();
}
