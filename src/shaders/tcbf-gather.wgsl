// tcBF: the normalised virtual image of each listed bright-field pixel from the resident detector-major rows,
// on the rows x cols FFT grid: (count x inv_mean - 1) x taper_row x taper_col inside the scan, 0 in the
// padding. Packed pairs: local image i = image - out_first is the real (i even) or imaginary (i odd) part of
// complex slot i / 2 of `out`; an even image without a partner (odd list_total) also zeroes the imaginary part.
// CPU twin: src/tcbf/kernels/tcbf-gather.ts. Layout: src/gpu/resident-layout.ts.
//
// One thread per output element; thread t of [thread_first, thread_end) is image list_start + t / (rows cols),
// element t % (rows cols). One dispatch per run of images sharing a resident buffer and a spectra buffer.
// uint16 ('planes'): count = low byte + 256 x high byte, the high byte read only where the (pixel, segment)
// hot bit is set (from the full high row, or from its slot slot_table[p * segments + g] - 1 in a slotted one);
// packed layouts bind placeholders at 6, 7 and 8 that the shader never reads.

override ELEM_BYTES: u32 = 2u;
override WORKGROUP_SIZE: u32 = 256u;

struct Params {
  list_start: u32,
  row_first_pixel: u32,
  words_per_pixel: u32,
  // Rows of the bound resident buffer, row words per row tile (common/resident-tile.wgsl).
  buffer_rows: u32,
  tile_words: u32,
  scan_rows: u32,
  scan_cols: u32,
  rows: u32,
  cols: u32,
  // Even: the list index of the spectra buffer's first image.
  out_first: u32,
  list_total: u32,
  thread_first: u32,
  thread_end: u32,
  // Planes: hot bitmap words per pixel, positions per segment.
  hot_words_per_pixel: u32,
  segment_frames: u32,
  // Nonzero: `resident_hi` is a slotted high plane (slots of slot_frames bytes) addressed through `slot_table`.
  slotted: u32,
  slot_frames: u32,
  segments: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> resident: array<u32>;
@group(0) @binding(2) var<storage, read> pixels: array<u32>;
@group(0) @binding(3) var<storage, read> inv_mean: array<f32>;
// taper_row (rows values) then taper_col (cols values).
@group(0) @binding(4) var<storage, read> taper: array<f32>;
// Complex slots as float pairs (re, im).
@group(0) @binding(5) var<storage, read_write> out: array<f32>;
@group(0) @binding(6) var<storage, read> resident_hi: array<u32>;
@group(0) @binding(7) var<storage, read> hot: array<u32>;
@group(0) @binding(8) var<storage, read> slot_table: array<u32>;

// #include "common/resident-tile.wgsl"

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let t = params.thread_first + wid.x * WORKGROUP_SIZE + lid;
  if (t >= params.thread_end) {
    return;
  }
  let hw = params.rows * params.cols;
  let image = params.list_start + t / hw;
  let e = t % hw;
  let r = e / params.cols;
  let c = e % params.cols;
  var value = 0.0;
  if (r < params.scan_rows && c < params.scan_cols) {
    let s = r * params.scan_cols + c;
    // Positions per row word: 4 (uint8, and uint16's byte planes) or 1.
    let vpw = select(4u, 1u, ELEM_BYTES == 4u);
    let pixel = pixels[image];
    let at = resident_index(pixel - params.row_first_pixel, s / vpw, params.buffer_rows, params.words_per_pixel, params.tile_words);
    let word = resident[at];
    var count = word;
    if (vpw == 4u) {
      let shift = (s % 4u) * 8u;
      count = (word >> shift) & 0xffu;
      if (ELEM_BYTES == 2u) {
        let segment = s / params.segment_frames;
        let bits = hot[pixel * params.hot_words_per_pixel + segment / 32u];
        if (((bits >> (segment % 32u)) & 1u) != 0u) {
          var hi_at = at;
          if (params.slotted != 0u) {
            let slot = slot_table[pixel * params.segments + segment] - 1u;
            hi_at = (slot * params.slot_frames + s - segment * params.segment_frames) / 4u;
          }
          count += ((resident_hi[hi_at] >> shift) & 0xffu) << 8u;
        }
      }
    }
    value = (f32(count) * inv_mean[image] - 1.0) * taper[r] * taper[params.rows + c];
  }
  let local = image - params.out_first;
  let at = 2u * ((local >> 1u) * hw + e);
  out[at + (local & 1u)] = value;
  if ((local & 1u) == 0u && image + 1u == params.list_total) {
    out[at + 1u] = 0.0;
  }
}
