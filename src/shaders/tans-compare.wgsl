// Exhaustive verification of an archive record: decode every tANS lane (docs/archive-format.md) and compare
// each value with the reference values (the source, decoded by bslz4-decode.wgsl, frame-major, packed at the
// dtype's width from word frame * words_per_frame). Only counts come back: mismatches per block of
// block_frames frames and the lanes with an error (atomic adds; a lane's error code is what the CPU twin,
// src/archive/tans-compare.ts `tansCompare`, returns per lane, and the lanes it counts are those whose code
// is not LANE_OK). One invocation per lane; invocations are numbered slice-major
// (g = slice * frames + frame), so a workgroup's lanes walk the same pixels in lockstep.

// Overrides WORKGROUP_SIZE, TABLE_LOG, BITS, TOKENS; bindings 0-4: params (the Params below), data, offsets,
// cells, class_map.
// #include "common/tans-lane-bindings.wgsl"

struct Params {
  // Invocations [lane_first, lane_first + lane_count) of frames * slices.
  lane_first: u32,
  lane_count: u32,
  frames: u32,
  slices: u32,
  slice_pixels: u32,
  pixels: u32,
  words_per_frame: u32,
  block_frames: u32,
  // Index in `mismatches` of the record's first block.
  block_base: u32,
  data_words: u32,
  // Detector columns: neighbour contexts restart at each row.
  cols: u32,
  // A piece of a record: lane k's stream is words [offsets[offset_base + k], offsets[offset_base + k + 1])
  // of the record, at data[that - word_base] (the piece's words start at word_base).
  offset_base: u32,
  word_base: u32,
}

@group(0) @binding(5) var<storage, read> reference: array<u32>;
@group(0) @binding(6) var<storage, read_write> mismatches: array<atomic<u32>>;
// One word: lanes with an error (not LANE_OK).
@group(0) @binding(7) var<storage, read_write> lane_errors: array<atomic<u32>>;

const LANE_OK: u32 = 0u;
const LANE_BAD_RANGE: u32 = 1u;
const LANE_TOO_LONG: u32 = 2u;
const LANE_NO_STOP_BIT: u32 = 3u;
const LANE_UNDERRUN: u32 = 4u;
const LANE_BAD_END: u32 = 5u;
const LANE_BAD_TOKEN: u32 = 6u;

// #include "common/tans-context.wgsl"

// The lane's bit reader: start, p, lane_words, open_window(), read_bits(k).
// #include "common/tans-bits.wgsl"

// Reference values are read a word at a time: the word is kept while the pixels walk through it (one load per
// 2 values at 16 bits, per 4 at 8 bits; the lanes of a warp walk the same pixels of different frames).
var<private> ref_at: u32;
var<private> ref_word: u32;

fn reference_word(at: u32) -> u32 {
  if (at != ref_at) {
    ref_at = at;
    ref_word = reference[at];
  }
  return ref_word;
}

fn reference_value(frame: u32, pixel: u32) -> u32 {
  let base = frame * params.words_per_frame;
  if (BITS == 16u) {
    return (reference_word(base + (pixel >> 1u)) >> ((pixel & 1u) * 16u)) & 0xffffu;
  }
  if (BITS == 8u) {
    return (reference_word(base + (pixel >> 2u)) >> ((pixel & 3u) * 8u)) & 0xffu;
  }
  return reference[base + pixel];
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

  var error = LANE_OK;
  var produced = 0u;
  var bad = 0u;
  // Offsets below word_base wrap to large values, which the range check refuses.
  let s0 = offsets[params.offset_base + lane] - params.word_base;
  let s1 = offsets[params.offset_base + lane + 1u] - params.word_base;
  start = s0;
  ref_at = 0xffffffffu;
  if (!(s0 <= s1 && s1 <= params.data_words)) {
    error = LANE_BAD_RANGE;
  } else if (s1 - s0 > raw_words) {
    error = LANE_TOO_LONG;
  } else if (s1 - s0 == raw_words) {
    for (var i = 0u; i < count; i++) {
      bad += select(0u, 1u, raw_value(i) != reference_value(frame, first + i));
    }
    produced = count;
  } else if (s1 == s0 || data[s1 - 1u] == 0u) {
    error = LANE_NO_STOP_BIT;
  } else {
    p = (s1 - s0 - 1u) * 32u + firstLeadingBit(data[s1 - 1u]);
    if (p < TABLE_LOG) {
      error = LANE_UNDERRUN;
    } else {
      lane_words = s1 - s0;
      open_window();
      var s = read_bits(TABLE_LOG);
      var l1 = 0u;
      var l2 = 0u;
      var col = first % params.cols;
      for (var i = 0u; i < count; i++) {
        let pixel = first + i;
        if (col == 0u) {
          l1 = 0u;
          l2 = 0u;
        }
        let context = class_map[pixel] * 9u + neighbour_bucket(l1, l2);
        let cell = cells[context * L + s];
        let token = (cell >> 16u) & 0xffu;
        if (token >= TOKENS) {
          error = LANE_BAD_TOKEN;
          break;
        }
        let nb = (cell >> 12u) & 15u;
        var eb = 0u;
        if (token >= 16u) {
          eb = 2u + ((token - 16u) >> 2u);
        }
        if (p < eb + nb) {
          error = LANE_UNDERRUN;
          break;
        }
        var v = token;
        if (token >= 16u) {
          v = ((4u | (token & 3u)) << eb) + read_bits(eb);
        }
        bad += select(0u, 1u, v != reference_value(frame, pixel));
        produced = i + 1u;
        l2 = l1;
        l1 = v;
        col = select(col + 1u, 0u, col + 1u == params.cols);
        s = (cell & 0xfffu) + read_bits(nb);
      }
      if (error == LANE_OK && (s != 0u || p != 0u)) {
        error = LANE_BAD_END;
      }
    }
  }
  if (error != LANE_OK) {
    bad += count - produced;
    atomicAdd(&lane_errors[0], 1u);
  }
  if (bad > 0u) {
    atomicAdd(&mismatches[params.block_base + frame / params.block_frames], bad);
  }
}
