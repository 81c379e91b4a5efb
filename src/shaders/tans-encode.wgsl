// tANS encoding of a record's lanes (docs/archive-format.md; the stream is described in
// src/archive/tans-encode.ts, its CPU twin: `encodeLane` / `tansEncode`, same bits, same errors).
//
// - `main`: one invocation per lane, numbered slice-major (g = slice * frames + frame, as tans-compare.wgsl)
//   so a workgroup's lanes walk the same pixels in lockstep. It walks the lane's values last to first and
//   writes its stream into the lane's scratch region (lane_stride words from lane * lane_stride); a lane whose
//   stream reaches its raw size is stored raw (its values packed at the dtype's width) instead. It reports
//   the lane's word count and an error code (ENCODE_TOKEN_ABSENT: a value's token has no table entry).
//   One value writes at most 41 bits after the size check of the previous one, so the region needs the raw
//   size plus 2 words.
// - `compact`: after the host's exclusive prefix sum of the counts (`offsets`), one workgroup per lane copies
//   the lane's words from scratch to the record's output at offsets[lane].

override WORKGROUP_SIZE: u32 = 64u;
override TABLE_LOG: u32 = 11u;
// Bits per value: 8, 16 or 32.
override BITS: u32 = 16u;
override TOKENS: u32 = 64u;

struct Params {
  // Invocations (main) or workgroups (compact) [lane_first, lane_first + lane_count).
  lane_first: u32,
  lane_count: u32,
  frames: u32,
  slices: u32,
  slice_pixels: u32,
  pixels: u32,
  words_per_frame: u32,
  lane_stride: u32,
  // Detector columns: a value's context needs its left neighbours in its row and lane.
  cols: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> values: array<u32>;
@group(0) @binding(2) var<storage, read> class_map: array<u32>;
// Per class and token: freq | start << 16 (tans-table.ts, buildEncodeTables).
@group(0) @binding(3) var<storage, read> symbols: array<u32>;
// Per class: L cell positions.
@group(0) @binding(4) var<storage, read> positions: array<u32>;
@group(0) @binding(5) var<storage, read_write> scratch: array<u32>;
@group(0) @binding(6) var<storage, read_write> counts: array<u32>;
@group(0) @binding(7) var<storage, read_write> errors: array<u32>;
@group(0) @binding(8) var<storage, read> offsets: array<u32>;
@group(0) @binding(9) var<storage, read_write> output: array<u32>;

const ENCODE_OK: u32 = 0u;
const ENCODE_TOKEN_ABSENT: u32 = 1u;

// Bit writer (LSB first) into scratch from word `base`.
var<private> base: u32;
var<private> acc: u32;
var<private> fill: u32;
var<private> written: u32;

fn write_bits(v: u32, k: u32) {
  if (k == 0u) {
    return;
  }
  acc |= v << fill;
  if (fill + k >= 32u) {
    scratch[base + written] = acc;
    written++;
    acc = select(v >> (32u - fill), 0u, fill == 0u);
    fill = fill + k - 32u;
  } else {
    fill += k;
  }
}

// The last word of `values` read, kept in registers: a lane walks its pixels one after another, so at 16 (8) bits
// a word is loaded once for 2 (4) values (the lanes of a warp read different frames: one transaction each).
var<private> word_at: u32;
var<private> word: u32;

fn values_word(at: u32) -> u32 {
  if (at != word_at) {
    word_at = at;
    word = values[at];
  }
  return word;
}

fn value_at(frame: u32, pixel: u32) -> u32 {
  let at = frame * params.words_per_frame;
  if (BITS == 16u) {
    return (values_word(at + (pixel >> 1u)) >> ((pixel & 1u) * 16u)) & 0xffffu;
  }
  if (BITS == 8u) {
    return (values_word(at + (pixel >> 2u)) >> ((pixel & 3u) * 8u)) & 0xffu;
  }
  return values[at + pixel];
}

// #include "common/tans-context.wgsl"

fn token_of(v: u32) -> u32 {
  if (v < 16u) {
    return v;
  }
  let n = firstLeadingBit(v);
  return 16u + ((n - 4u) << 2u) + ((v >> (n - 2u)) & 3u);
}

// Packs the lane's values at the dtype's width into raw_words words from `base`.
fn store_raw(frame: u32, first: u32, count: u32, raw_words: u32) {
  let per = 32u / BITS;
  for (var w = 0u; w < raw_words; w++) {
    var word = 0u;
    for (var k = 0u; k < per; k++) {
      let i = w * per + k;
      if (i < count) {
        word |= value_at(frame, first + i) << (k * BITS);
      }
    }
    scratch[base + w] = word;
  }
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
  if (id.x >= params.lane_count) {
    return;
  }
  let g = params.lane_first + id.x;
  let slice = g / params.frames;
  let frame = g % params.frames;
  let lane = frame * params.slices + slice;
  let first = slice * params.slice_pixels;
  let count = min(params.slice_pixels, params.pixels - first);
  let raw_words = (count * BITS + 31u) / 32u;
  let L = 1u << TABLE_LOG;

  base = lane * params.lane_stride;
  acc = 0u;
  fill = 0u;
  written = 0u;
  var error = ENCODE_OK;
  var raw = false;
  var x = L;
  word_at = 0xffffffffu;
  // Values walked last to first, one new load a value: v1 and v2 hold the values at pixel - 1 and pixel - 2 for
  // the next pixel down (those before the lane's first pixel are never used).
  var v1 = 0u;
  if (count >= 1u) {
    v1 = value_at(frame, first + count - 1u);
  }
  var v2 = 0u;
  if (count >= 2u) {
    v2 = value_at(frame, first + count - 2u);
  }
  for (var j = count; j > 0u; j--) {
    let pixel = first + j - 1u;
    let v = v1;
    var v3 = 0u;
    if (j >= 3u) {
      v3 = value_at(frame, pixel - 2u);
    }
    let token = token_of(v);
    // Left neighbours in the same row and lane (j - 1 values of the lane precede this one).
    let k = min(min(pixel % params.cols, j - 1u), 2u);
    var l1 = 0u;
    var l2 = 0u;
    if (k >= 1u) {
      l1 = v2;
    }
    if (k >= 2u) {
      l2 = v3;
    }
    v1 = v2;
    v2 = v3;
    let c = class_map[pixel] * 9u + neighbour_bucket(l1, l2);
    let sym = symbols[c * TOKENS + token];
    let f = sym & 0xffffu;
    if (f == 0u) {
      error = ENCODE_TOKEN_ABSENT;
      break;
    }
    var nb = TABLE_LOG - firstLeadingBit(f);
    if ((x >> nb) < f) {
      nb--;
    }
    write_bits(x & ((1u << nb) - 1u), nb);
    x = L + positions[c * L + (sym >> 16u) + (x >> nb) - f];
    if (token >= 16u) {
      let eb = 2u + ((token - 16u) >> 2u);
      write_bits(v & ((1u << eb) - 1u), eb);
    }
    if (written >= raw_words) {
      raw = true;
      break;
    }
  }
  if (error == ENCODE_OK && !raw) {
    write_bits(x - L, TABLE_LOG);
    write_bits(1u, 1u);
    if (fill > 0u) {
      scratch[base + written] = acc;
      written++;
    }
    raw = written >= raw_words;
  }
  if (error == ENCODE_OK && raw) {
    store_raw(frame, first, count, raw_words);
    written = raw_words;
  }
  counts[lane] = select(0u, written, error == ENCODE_OK);
  errors[lane] = error;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn compact(
  @builtin(workgroup_id) wg: vec3<u32>,
  @builtin(local_invocation_index) local: u32,
) {
  if (wg.x >= params.lane_count) {
    return;
  }
  let lane = params.lane_first + wg.x;
  let n = counts[lane];
  let src = lane * params.lane_stride;
  let to = offsets[lane];
  for (var k = local; k < n; k += WORKGROUP_SIZE) {
    output[to + k] = scratch[src + k];
  }
}
