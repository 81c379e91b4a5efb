// What both entry points of detector-transpose.wgsl (main, and main_vec4 in common/detector-transpose-vec4.wgsl)
// share, through an include line naming this file (scripts/wgsl-include.mjs): the element size, the tile
// constants, `struct Params` (its layout is read from the final source by structLayout, src/gpu/uniform-layout.ts),
// bindings 0-6, the workgroup tile, and the two global writes of a workgroup's per-pixel results (add_dp_sum,
// or_hot). Contract and layouts: the header of detector-transpose.wgsl.

override ELEM_BYTES: u32 = 2u;

const THREADS: u32 = 256u;
const TILE_P: u32 = 64u;
// Words of the tile (planes: 128 frames x 32 words; uint8 and uint32 use 2048, and so does the pass over a decoded
// slot of byte planes, detector-transpose-planes.wgsl, whose main_vec4 reads bytes; it runs no other entry point).
const TILE_WORDS: u32 = select(4096u, 2048u, PLANES);
// Output words per pixel row per tile.
const OUT_WORDS: u32 = 32u;

struct Params {
  // Global pixels [pixel_first, pixel_end) of this dispatch; pixel_first is a multiple of VPW.
  pixel_first: u32,
  pixel_end: u32,
  // main_vec4: pixel_first is the block origin (a multiple of TILE_P), pixels below pixel_begin are not
  // this dispatch's; main ignores it (pixel_begin == pixel_first).
  pixel_begin: u32,
  // Frame spans (tiles_per_group tiles each) of a pixel block: workgroup w takes block w / spans (TILE_P pixels
  // from pixel_first) and span w % spans, so consecutive workgroups share a block (span-fastest).
  spans: u32,
  // Global pixel of row 0 of the bound resident buffer, its rows, and row words per row tile
  // (common/resident-tile.wgsl; words_per_pixel when untiled).
  row_first_pixel: u32,
  buffer_rows: u32,
  words_per_pixel: u32,
  tile_words: u32,
  words_per_frame: u32,
  // Batch-local frames [frame_first, frame_end) of this dispatch; frame_first is a multiple of TILE_F.
  frame_first: u32,
  frame_end: u32,
  tiles_per_group: u32,
  // Row word of batch-local frame 0 (the batch's first global frame / OVPW).
  out_word: u32,
  // Planes: the batch's first global frame, frames per hot segment, hot bitmap words per pixel.
  first_frame: u32,
  segment_frames: u32,
  hot_words_per_pixel: u32,
  // Planes: where high words (nonzero ones only) go. A full high plane: the rows of `resident`
  // (hi_words_per_pixel == words_per_pixel, hi_word_base 0). A slotted one: the batch's high scratch (rows of
  // hi_words_per_pixel words from global row word hi_word_base), which gpu/passes/high-pool-place.ts moves into
  // the slots.
  hi_words_per_pixel: u32,
  hi_word_base: u32,
  // Row words per tile of the high words' rows: tile_words for a full high plane, hi_words_per_pixel (untiled)
  // for a batch's high scratch.
  hi_tile_words: u32,
  // A slotted high plane: the batch's own hot bits (`batch_hot`, batch_hot_words a pixel; bit g - batch_seg_first
  // for segment g), which tell high-pool-place which pairs have words in this batch; 0 words otherwise.
  batch_seg_first: u32,
  batch_hot_words: u32,
  // detector-transpose-planes.wgsl (a decoded slot of byte planes, src/kernels/decoded-planes.ts): the frame's
  // word of its high plane and of its span mark, pixels a span, and the pixel before which every 16-pixel vec4
  // of the high plane this dispatch reads is zeroed after the read (a vec4 that the next row buffer's dispatch
  // also reads is left to it). 0 elsewhere.
  high_word: u32,
  mark_word: u32,
  span_pixels: u32,
  clear_end: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> decoded: array<u32>;
@group(0) @binding(2) var<storage, read_write> resident: array<u32>;
// Per global pixel: lo, hi.
@group(0) @binding(3) var<storage, read_write> dp_sums: array<atomic<u32>>;
// Planes: the high plane's row buffer (or the batch's high scratch) and the hot bitmap (bit g of word p * hot_words_per_pixel + g / 32).
@group(0) @binding(4) var<storage, read_write> resident_hi: array<u32>;
@group(0) @binding(5) var<storage, read_write> hot: array<atomic<u32>>;
@group(0) @binding(6) var<storage, read_write> batch_hot: array<atomic<u32>>;

var<workgroup> tile: array<u32, TILE_WORDS>;

// resident_index: where a row word lives in a tiled row buffer.
// #include "resident-tile.wgsl"

// Index (u32 words) of row word `w` of row `row` in the bound resident buffer, and of high word `w` (a global
// row word) in the high plane's row buffer or the batch's high scratch.
fn lo_index(row: u32, w: u32) -> u32 {
  return resident_index(row, w, params.buffer_rows, params.words_per_pixel, params.tile_words);
}
fn hi_index(row: u32, w: u32) -> u32 {
  return resident_index(row, w - params.hi_word_base, params.buffer_rows, params.hi_words_per_pixel, params.hi_tile_words);
}

// Adds a pixel's 64-bit sum (lo, hi) of this workgroup's frames to dp_sums: 2 atomics, the carry into the high word.
fn add_dp_sum(pixel: u32, lo: u32, hi: u32) {
  if ((lo | hi) != 0u) {
    let old = atomicAdd(&dp_sums[2u * pixel], lo);
    atomicAdd(&dp_sums[2u * pixel + 1u], hi + select(0u, 1u, old + lo < old));
  }
}

// Sets a pixel's hot bits: `m` holds the segments from seg0 on (at most 2 bitmap words); and, for a slotted high
// plane, the same bits in the batch's own bitmap (from batch_seg_first on).
fn or_hot(pixel: u32, seg0: u32, m: u32) {
  if (m != 0u) {
    let at = pixel * params.hot_words_per_pixel + seg0 / 32u;
    let shift = seg0 % 32u;
    atomicOr(&hot[at], m << shift);
    if (shift != 0u && (m >> (32u - shift)) != 0u) {
      atomicOr(&hot[at + 1u], m >> (32u - shift));
    }
    if (params.batch_hot_words != 0u) {
      let rel = seg0 - params.batch_seg_first;
      let b_at = pixel * params.batch_hot_words + rel / 32u;
      let b_shift = rel % 32u;
      atomicOr(&batch_hot[b_at], m << b_shift);
      if (b_shift != 0u && (m >> (32u - b_shift)) != 0u) {
        atomicOr(&batch_hot[b_at + 1u], m >> (32u - b_shift));
      }
    }
  }
}
