// main_vec4, the 16-byte entry point of detector-transpose.wgsl, included at its end by a line naming this file
// (scripts/wgsl-include.mjs); it uses what common/detector-transpose-shared.wgsl declares.
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
