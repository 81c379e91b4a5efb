// Frame-major decoded batch -> detector-major resident rows, plus exact per-pixel sums (DP sums).
// Contract: docs/pass-graph.md ("Decoded slot", "Resident", "64-bit counters"); CPU twin:
// src/kernels/detector-transpose.ts; layout: src/gpu/resident-layout.ts.
//
// Decoded slot: values packed little-endian, VPW = 4 / ELEM_BYTES per u32 word (frame f of the batch at word
// f * words_per_frame, pixel p at element p). Resident rows (pixel p's row at word
// (p - row_first_pixel) * words_per_pixel, global frame s at element s): uint8 and uint32 packed like the
// slot; uint16 ('planes') as two byte planes of 4 frames per word: `resident` gets the low bytes (every word),
// `resident_hi` the high bytes (only nonzero words: the buffers start zeroed), and `hot` one bit per (pixel,
// segment of segment_frames frames) holding a value above 255. One dispatch binds one row buffer (per plane)
// and covers pixels [pixel_first, pixel_end) of it; packed layouts bind placeholders at 4 and 5.
//
// A workgroup owns a block of TILE_P = 64 pixels and loops over tiles_per_group tiles of TILE_F = 32 * OVPW
// frames (OVPW: row values per word; 128 frames for uint8 and uint16, 32 for uint32). The load phase reads
// 64 / VPW contiguous words per frame (coalesced), the store phase writes 32 contiguous words (128 bytes) per
// pixel row and plane. The stored index rotates each frame row by (frame / OVPW) words so that both phases
// are free of bank conflicts (uint8: 2-way in the store phase). Every thread keeps the 64-bit sums of its 8
// (pixel, word column) slots in registers over all tiles (and, for planes, a mask of the segments where it
// wrote a high word); at the end the workgroup reduces them per pixel in workgroup memory and adds them to
// dp_sums with 2 global atomics per pixel (lo, then hi plus the carry), and ORs the hot bits with at most 2.
// Frames past frame_end in the last tile read as 0, so the last partial word of a batch gets zeros there.
//
// `main_vec4` does the same work with 16-byte global accesses (vec4<u32> views of the same bindings): see
// below. The host uses it only where the decoded frame rows are 16-byte aligned (words_per_frame % 4 == 0).

override ELEM_BYTES: u32 = 2u;
// Batched loads: each thread issues all its loads of a tile before it stores any into workgroup memory (its
// words held in registers), so a thread has up to 16 loads in flight instead of one load, store, load... The
// indices are clamped into the slot and the words past the batch selected to 0, so no load is conditional.
override BATCHED_LOADS: bool = false;

const THREADS: u32 = 256u;
const TILE_P: u32 = 64u;
// Words of the largest tile (planes: 128 frames x 32 words; uint8 and uint32 use 2048).
const TILE_WORDS: u32 = 4096u;
// Output words per pixel row per tile.
const OUT_WORDS: u32 = 32u;
// (pixel, word column) slots each thread stores per tile: TILE_P x OUT_WORDS / THREADS.
const SLOTS: u32 = 8u;
// Words each thread loads per tile, at most (planes: 16; uint8 and uint32: 8).
const MAX_LOAD_SLOTS: u32 = 16u;

struct Params {
  // Global pixels [pixel_first, pixel_end) of this dispatch; pixel_first is a multiple of VPW.
  pixel_first: u32,
  pixel_end: u32,
  // main_vec4: pixel_first is the block origin (a multiple of TILE_P), pixels below pixel_begin are not
  // this dispatch's; main ignores it (pixel_begin == pixel_first).
  pixel_begin: u32,
  // ceil((pixel_end - pixel_first) / TILE_P): workgroup w takes block w % pixel_blocks.
  pixel_blocks: u32,
  // Global pixel of row 0 of the bound resident buffer.
  row_first_pixel: u32,
  words_per_pixel: u32,
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
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> decoded: array<u32>;
@group(0) @binding(2) var<storage, read_write> resident: array<u32>;
// Per global pixel: lo, hi.
@group(0) @binding(3) var<storage, read_write> dp_sums: array<atomic<u32>>;
// Planes: the high plane's row buffer and the hot bitmap (bit g of word p * hot_words_per_pixel + g / 32).
@group(0) @binding(4) var<storage, read_write> resident_hi: array<u32>;
@group(0) @binding(5) var<storage, read_write> hot: array<atomic<u32>>;

var<workgroup> tile: array<u32, TILE_WORDS>;

// Adds a pixel's 64-bit sum (lo, hi) of this workgroup's frames to dp_sums: 2 atomics, the carry into the high word.
fn add_dp_sum(pixel: u32, lo: u32, hi: u32) {
  if ((lo | hi) != 0u) {
    let old = atomicAdd(&dp_sums[2u * pixel], lo);
    atomicAdd(&dp_sums[2u * pixel + 1u], hi + select(0u, 1u, old + lo < old));
  }
}

// Sets a pixel's hot bits: `m` holds the segments from seg0 on (at most 2 bitmap words).
fn or_hot(pixel: u32, seg0: u32, m: u32) {
  if (m != 0u) {
    let at = pixel * params.hot_words_per_pixel + seg0 / 32u;
    let shift = seg0 % 32u;
    atomicOr(&hot[at], m << shift);
    if (shift != 0u && (m >> (32u - shift)) != 0u) {
      atomicOr(&hot[at + 1u], m >> (32u - shift));
    }
  }
}

@compute @workgroup_size(THREADS)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let planes = ELEM_BYTES == 2u;
  let vpw = 4u / ELEM_BYTES;
  // Row values per word: 4 for the byte planes.
  let ovpw = select(vpw, 4u, planes);
  let bits = ELEM_BYTES * 8u;
  let value_mask = select(0xffu, 0xffffu, ELEM_BYTES == 2u);
  let tile_f = OUT_WORDS * ovpw;
  // Input words per frame row of the tile (16, 32 or 64); a power of two.
  let in_words = TILE_P / vpw;
  // Words each thread loads per tile (16 for planes, 8 otherwise).
  let load_slots = tile_f * in_words / THREADS;

  let block = wid.x % params.pixel_blocks;
  let span = wid.x / params.pixel_blocks;
  let pixel0 = params.pixel_first + block * TILE_P;
  let f_begin = params.frame_first + span * params.tiles_per_group * tile_f;
  let f_stop = min(params.frame_end, f_begin + params.tiles_per_group * tile_f);

  // Store phase: slot r of this thread is pixel lid / 32 + 8 r, word column lid % 32 (fixed over tiles).
  let column = lid % OUT_WORDS;
  let first_slot_pixel = lid / OUT_WORDS;
  var lo: array<u32, SLOTS>;
  var hi: array<u32, SLOTS>;
  // Planes: segments (relative to seg0) where the slot wrote a nonzero high word; at most 17 (span <= 2048).
  var hot_mask: array<u32, SLOTS>;
  let seg0 = select(0u, (params.first_frame + f_begin) / max(params.segment_frames, 1u), planes);

  let last_word = arrayLength(&decoded) - 1u;
  for (var f0 = f_begin; f0 < f_stop; f0 += tile_f) {
    if (BATCHED_LOADS) {
      var words: array<u32, MAX_LOAD_SLOTS>;
      for (var r = 0u; r < load_slots; r++) {
        let idx = lid + r * THREADS;
        let frame = f0 + idx / in_words;
        let pixel = pixel0 + (idx % in_words) * vpw;
        let word = decoded[min(frame * params.words_per_frame + pixel / vpw, last_word)];
        words[r] = select(0u, word, frame < f_stop && pixel < params.pixel_end);
      }
      for (var r = 0u; r < load_slots; r++) {
        let idx = lid + r * THREADS;
        let f = idx / in_words;
        tile[f * in_words + ((idx % in_words + f / ovpw) & (in_words - 1u))] = words[r];
      }
    } else {
      for (var r = 0u; r < load_slots; r++) {
        let idx = lid + r * THREADS;
        let f = idx / in_words;
        let w = idx % in_words;
        let frame = f0 + f;
        let pixel = pixel0 + w * vpw;
        var word = 0u;
        if (frame < f_stop && pixel < params.pixel_end) {
          word = decoded[frame * params.words_per_frame + pixel / vpw];
        }
        tile[f * in_words + ((w + f / ovpw) & (in_words - 1u))] = word;
      }
    }
    workgroupBarrier();
    let fb = f0 + column * ovpw;
    for (var r = 0u; r < SLOTS; r++) {
      let p = first_slot_pixel + r * (THREADS / OUT_WORDS);
      let pixel = pixel0 + p;
      if (pixel < params.pixel_end && fb < f_stop) {
        var word = 0u;
        var high = 0u;
        var s = 0u;
        let wi = p / vpw;
        if (ELEM_BYTES == 4u) {
          word = tile[column * in_words + ((wi + column) & (in_words - 1u))];
          s = word;
        } else {
          let shift = (p % vpw) * bits;
          for (var k = 0u; k < ovpw; k++) {
            let f = column * ovpw + k;
            let v = (tile[f * in_words + ((wi + column) & (in_words - 1u))] >> shift) & value_mask;
            word |= (v & 0xffu) << (k * 8u);
            high |= (v >> 8u) << (k * 8u);
            s += v;
          }
        }
        let at = (pixel - params.row_first_pixel) * params.words_per_pixel + params.out_word + fb / ovpw;
        resident[at] = word;
        if (planes && high != 0u) {
          resident_hi[at] = high;
          hot_mask[r] |= 1u << ((params.first_frame + fb) / params.segment_frames - seg0);
        }
        let l = lo[r] + s;
        hi[r] += select(0u, 1u, l < s);
        lo[r] = l;
      }
    }
    workgroupBarrier();
  }

  // Reduce the 32 columns of each of the 64 pixels: lo words first, then hi words. The row of pixel p is
  // rotated by p so that thread p's serial reads hit distinct banks.
  var sum_lo = 0u;
  var sum_hi = 0u;
  for (var r = 0u; r < SLOTS; r++) {
    let p = first_slot_pixel + r * (THREADS / OUT_WORDS);
    tile[p * OUT_WORDS + ((column + p) & (OUT_WORDS - 1u))] = lo[r];
  }
  workgroupBarrier();
  if (lid < TILE_P) {
    for (var j = 0u; j < OUT_WORDS; j++) {
      let v = tile[lid * OUT_WORDS + ((j + lid) & (OUT_WORDS - 1u))];
      sum_lo += v;
      sum_hi += select(0u, 1u, sum_lo < v);
    }
  }
  workgroupBarrier();
  for (var r = 0u; r < SLOTS; r++) {
    let p = first_slot_pixel + r * (THREADS / OUT_WORDS);
    tile[p * OUT_WORDS + ((column + p) & (OUT_WORDS - 1u))] = hi[r];
  }
  workgroupBarrier();
  if (lid < TILE_P) {
    for (var j = 0u; j < OUT_WORDS; j++) {
      sum_hi += tile[lid * OUT_WORDS + ((j + lid) & (OUT_WORDS - 1u))];
    }
    let pixel = pixel0 + lid;
    if (pixel < params.pixel_end) {
      add_dp_sum(pixel, sum_lo, sum_hi);
    }
  }

  // Planes: OR the 32 columns' segment masks of each pixel, then set its bits (at most 2 bitmap words).
  if (planes) {
    workgroupBarrier();
    for (var r = 0u; r < SLOTS; r++) {
      let p = first_slot_pixel + r * (THREADS / OUT_WORDS);
      tile[p * OUT_WORDS + ((column + p) & (OUT_WORDS - 1u))] = hot_mask[r];
    }
    workgroupBarrier();
    if (lid < TILE_P) {
      var m = 0u;
      for (var j = 0u; j < OUT_WORDS; j++) {
        m |= tile[lid * OUT_WORDS + ((j + lid) & (OUT_WORDS - 1u))];
      }
      let pixel = pixel0 + lid;
      if (pixel < params.pixel_end) {
        or_hot(pixel, seg0, m);
      }
    }
  }
}

// ---- main_vec4: 16 bytes per global access ----
//
// The same result as `main` (words, high words only where nonzero, hot bits, DP sums), moving 16 bytes per
// global load and store. Load phase: each thread loads whole vec4 of frame rows (a warp: 4 frame rows of
// 128 bytes for uint16), all its loads of a tile before it stores any, and spreads each vec4 over 4 words of
// workgroup memory. Store phase: each thread owns (pixel, vec4 column) slots, 4 row words = 4 x OVPW frames,
// and writes them with one vec4 store (a warp: 4 pixel rows of 128 contiguous bytes). The stored index of
// frame row f is rotated by swizzle(f) so that both phases are free of bank conflicts (uint32: 2-way in the
// load phase).
//
// Alignment: the host binds pixel_first = the block origin, a multiple of TILE_P (so every tile row starts at
// a multiple of 4 words when words_per_frame is), and masks pixels below pixel_begin. The frame grid starts
// `lead` frames before frame_first so that every output vec4 is aligned: grid frame g is batch-local frame
// frame_first + g - lead, and only grid frames [lead, ...) are the dispatch's. Each output vec4 belongs to one
// thread; words outside the dispatch's frames (the first vec4's leading words, the last one's trailing words)
// are left untouched (component stores), as are high words that are zero.

@group(0) @binding(1) var<storage, read> decoded4: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read_write> resident4: array<vec4<u32>>;
@group(0) @binding(4) var<storage, read_write> resident_hi4: array<vec4<u32>>;

// Output vec4 per pixel row per tile (OUT_WORDS / 4), and (pixel, vec4 column) slots per thread.
const OUT_VEC4: u32 = 8u;
const SLOTS4: u32 = 2u;
// vec4 each thread loads per tile, at most (planes: 4; uint8 and uint32: 2).
const MAX_LOAD4: u32 = 4u;

// Rotation of tile frame row f. Load phase (one vec4 component per instruction): the frame rows a warp covers
// (4 consecutive for planes, 4 of one parity for uint8, 2 for uint32) get distinct offsets mod 4. Store phase
// (frame j of each vec4 column c = 0..7): the 8 rows 4 x OVPW x c + j get offsets 4 apart (planes, uint32:
// 20c + j, 4c + const) or distinct mod 16 (uint8: 10c + j / 2), so the warp's 4 pixels' words do not collide.
fn swizzle(f: u32) -> u32 {
  if (ELEM_BYTES == 2u) {
    return f + 4u * (f >> 4u);
  }
  if (ELEM_BYTES == 1u) {
    return (f >> 1u) + 2u * (f >> 4u);
  }
  return 4u * (f >> 2u) + 2u * (f & 1u);
}

@compute @workgroup_size(THREADS)
fn main_vec4(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let planes = ELEM_BYTES == 2u;
  let vpw = 4u / ELEM_BYTES;
  let ovpw = select(vpw, 4u, planes);
  let bits = ELEM_BYTES * 8u;
  let value_mask = select(0xffu, 0xffffu, ELEM_BYTES == 2u);
  let tile_f = OUT_WORDS * ovpw;
  let in_words = TILE_P / vpw;
  let in_vec4 = in_words / 4u;
  let load4 = tile_f * in_vec4 / THREADS;
  // Frames per output vec4.
  let vec_f = 4u * ovpw;

  let block = wid.x % params.pixel_blocks;
  let span = wid.x / params.pixel_blocks;
  let pixel0 = params.pixel_first + block * TILE_P;
  // Row word of grid frame 0 (a multiple of 4), and the grid frames [lead, g_stop) of this workgroup.
  let m = (params.out_word + params.frame_first / ovpw) % 4u;
  let lead = m * ovpw;
  let word0 = params.out_word + params.frame_first / ovpw - m;
  let g_begin = span * params.tiles_per_group * tile_f;
  let g_stop = min(params.frame_end - params.frame_first + lead, g_begin + params.tiles_per_group * tile_f);
  let g_first = max(g_begin, lead);

  // Store phase: slot r of this thread is pixel lid / 8 + 32 r, vec4 column lid % 8 (fixed over tiles).
  let column = lid % OUT_VEC4;
  let first_slot_pixel = lid / OUT_VEC4;
  var lo: array<u32, SLOTS4>;
  var hi: array<u32, SLOTS4>;
  var hot_mask: array<u32, SLOTS4>;
  let batch_frame0 = params.first_frame + params.frame_first - lead;
  let seg0 = select(0u, (batch_frame0 + g_first) / max(params.segment_frames, 1u), planes);

  let last4 = arrayLength(&decoded4) - 1u;
  for (var g0 = g_begin; g0 < g_stop; g0 += tile_f) {
    var v: array<vec4<u32>, MAX_LOAD4>;
    for (var r = 0u; r < load4; r++) {
      let idx = lid + r * THREADS;
      let g = g0 + idx / in_vec4;
      let q = idx % in_vec4;
      v[r] = vec4<u32>(0u);
      if (g >= lead && g < g_stop && pixel0 + q * 4u * vpw < params.pixel_end) {
        let frame = params.frame_first + g - lead;
        v[r] = decoded4[min((frame * params.words_per_frame + pixel0 / vpw) / 4u + q, last4)];
      }
    }
    for (var r = 0u; r < load4; r++) {
      let idx = lid + r * THREADS;
      let f = idx / in_vec4;
      let w = (idx % in_vec4) * 4u;
      let rot = swizzle(f);
      for (var c = 0u; c < 4u; c++) {
        tile[f * in_words + ((w + c + rot) & (in_words - 1u))] = v[r][c];
      }
    }
    workgroupBarrier();
    for (var r = 0u; r < SLOTS4; r++) {
      let p = first_slot_pixel + r * (THREADS / OUT_VEC4);
      let pixel = pixel0 + p;
      let gc = g0 + column * vec_f;
      if (pixel >= params.pixel_begin && pixel < params.pixel_end && gc + vec_f > lead && gc < g_stop) {
        let wi = p / vpw;
        let shift = (p % vpw) * bits;
        var words = vec4<u32>(0u);
        var highs = vec4<u32>(0u);
        var full = true;
        for (var k = 0u; k < 4u; k++) {
          let fk = column * vec_f + k * ovpw;
          var word = 0u;
          var high = 0u;
          var s = 0u;
          if (ELEM_BYTES == 4u) {
            word = tile[fk * in_words + ((wi + swizzle(fk)) & (in_words - 1u))];
            s = word;
          } else {
            for (var i = 0u; i < ovpw; i++) {
              let f = fk + i;
              let t = tile[f * in_words + ((wi + swizzle(f)) & (in_words - 1u))];
              let val = (t >> shift) & value_mask;
              word |= (val & 0xffu) << (i * 8u);
              high |= (val >> 8u) << (i * 8u);
              s += val;
            }
          }
          words[k] = word;
          highs[k] = high;
          let gk = g0 + fk;
          if (gk >= lead && gk < g_stop) {
            let l = lo[r] + s;
            hi[r] += select(0u, 1u, l < s);
            lo[r] = l;
            if (planes && high != 0u) {
              hot_mask[r] |= 1u << ((batch_frame0 + gk) / params.segment_frames - seg0);
            }
          } else {
            full = false;
          }
        }
        let at = ((pixel - params.row_first_pixel) * params.words_per_pixel + word0 + gc / ovpw) / 4u;
        if (full) {
          resident4[at] = words;
        } else {
          for (var k = 0u; k < 4u; k++) {
            let gk = gc + k * ovpw;
            if (gk >= lead && gk < g_stop) {
              resident4[at][k] = words[k];
            }
          }
        }
        if (planes && any(highs != vec4<u32>(0u))) {
          if (full && all(highs != vec4<u32>(0u))) {
            resident_hi4[at] = highs;
          } else {
            for (var k = 0u; k < 4u; k++) {
              let gk = gc + k * ovpw;
              if (gk >= lead && gk < g_stop && highs[k] != 0u) {
                resident_hi4[at][k] = highs[k];
              }
            }
          }
        }
      }
    }
    workgroupBarrier();
  }

  // Reduce the 8 columns of each of the 64 pixels: column c of pixel p at c * TILE_P + (p + 4 c) % TILE_P
  // (distinct banks for a warp's 4 pixels x 8 columns, and for 32 pixels reading one column).
  var sum_lo = 0u;
  var sum_hi = 0u;
  for (var r = 0u; r < SLOTS4; r++) {
    let p = first_slot_pixel + r * (THREADS / OUT_VEC4);
    tile[column * TILE_P + ((p + 4u * column) & (TILE_P - 1u))] = lo[r];
  }
  workgroupBarrier();
  if (lid < TILE_P) {
    for (var j = 0u; j < OUT_VEC4; j++) {
      let v = tile[j * TILE_P + ((lid + 4u * j) & (TILE_P - 1u))];
      sum_lo += v;
      sum_hi += select(0u, 1u, sum_lo < v);
    }
  }
  workgroupBarrier();
  for (var r = 0u; r < SLOTS4; r++) {
    let p = first_slot_pixel + r * (THREADS / OUT_VEC4);
    tile[column * TILE_P + ((p + 4u * column) & (TILE_P - 1u))] = hi[r];
  }
  workgroupBarrier();
  let own = pixel0 + lid >= params.pixel_begin && pixel0 + lid < params.pixel_end;
  if (lid < TILE_P) {
    for (var j = 0u; j < OUT_VEC4; j++) {
      sum_hi += tile[j * TILE_P + ((lid + 4u * j) & (TILE_P - 1u))];
    }
    if (own) {
      add_dp_sum(pixel0 + lid, sum_lo, sum_hi);
    }
  }

  // Planes: OR the 8 columns' segment masks of each pixel, then set its bits (at most 2 bitmap words).
  if (planes) {
    workgroupBarrier();
    for (var r = 0u; r < SLOTS4; r++) {
      let p = first_slot_pixel + r * (THREADS / OUT_VEC4);
      tile[column * TILE_P + ((p + 4u * column) & (TILE_P - 1u))] = hot_mask[r];
    }
    workgroupBarrier();
    if (lid < TILE_P) {
      var mask = 0u;
      for (var j = 0u; j < OUT_VEC4; j++) {
        mask |= tile[j * TILE_P + ((lid + 4u * j) & (TILE_P - 1u))];
      }
      if (own) {
        or_hot(pixel0 + lid, seg0, mask);
      }
    }
  }
}
