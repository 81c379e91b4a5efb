// Frame-major decoded batch -> detector-major resident rows, plus exact per-pixel sums (DP sums).
// Contract: docs/pass-graph.md ("Decoded slot", "Resident", "64-bit counters"); CPU twin:
// src/kernels/detector-transpose.ts; layout: src/gpu/resident-layout.ts.
//
// Decoded slot: values packed little-endian, VPW = 4 / ELEM_BYTES per u32 word (frame f of the batch at word
// f * words_per_frame, pixel p at element p). Resident rows (row p - row_first_pixel, global frame s at element s
// of the row, its words in row tiles: lo_index, common/resident-tile.wgsl): uint8 and uint32 packed like the
// slot; uint16 ('planes') as two byte planes of 4 frames per word: `resident` gets the low bytes (every word),
// `resident_hi` the high bytes (only nonzero words: the buffers start zeroed; a slotted high plane: into the
// batch's high scratch, Params.hi_*), and `hot` one bit per (pixel,
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
// common/detector-transpose-vec4.wgsl, included at the end. The host uses it only where the decoded frame rows
// are 16-byte aligned (words_per_frame % 4 == 0).

// Element size, tile constants, Params, bindings 0-6, the workgroup tile, add_dp_sum and or_hot.
// #include "detector-transpose-shared.wgsl"

// Batched loads: each thread issues all its loads of a tile before it stores any into workgroup memory (its
// words held in registers), so a thread has up to 16 loads in flight instead of one load, store, load... The
// indices are clamped into the slot and the words past the batch selected to 0, so no load is conditional.
override BATCHED_LOADS: bool = false;

// (pixel, word column) slots each thread stores per tile: TILE_P x OUT_WORDS / THREADS.
const SLOTS: u32 = 8u;
// Words each thread loads per tile, at most (planes: 16; uint8 and uint32: 8).
const MAX_LOAD_SLOTS: u32 = 16u;

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

  let block = wid.x / params.spans;
  let span = wid.x % params.spans;
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
  // HISTOGRAM: whether slot r's pixel is binned, bit r.
  var binned_slots = 0u;
  for (var r = 0u; r < SLOTS; r++) {
    if (binned(pixel0 + first_slot_pixel + r * (THREADS / OUT_WORDS))) {
      binned_slots |= 1u << r;
    }
  }
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
        let counted = (binned_slots & (1u << r)) != 0u;
        if (ELEM_BYTES == 4u) {
          word = tile[column * in_words + ((wi + column) & (in_words - 1u))];
          s = word;
          bin_value(word, counted);
        } else {
          let shift = (p % vpw) * bits;
          for (var k = 0u; k < ovpw; k++) {
            let f = column * ovpw + k;
            let v = (tile[f * in_words + ((wi + column) & (in_words - 1u))] >> shift) & value_mask;
            bin_value(v, counted);
            word |= (v & 0xffu) << (k * 8u);
            high |= (v >> 8u) << (k * 8u);
            s += v;
          }
        }
        let rw = params.out_word + fb / ovpw;
        resident[lo_index(pixel - params.row_first_pixel, rw)] = word;
        if (planes && high != 0u) {
          resident_hi[hi_index(pixel - params.row_first_pixel, rw)] = high;
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
  flush_bins(lid);
}

// main_vec4: 16 bytes per global access (bindings 1, 2 and 4 seen as vec4<u32>).
// #include "detector-transpose-vec4.wgsl"
