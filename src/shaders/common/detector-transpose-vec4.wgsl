// main_vec4, the 16-byte entry point of detector-transpose.wgsl, included at its end by a line naming this file
// (scripts/wgsl-include.mjs); it uses what common/detector-transpose-shared.wgsl declares.
//
// The same result as `main` (words, high words only where nonzero, hot bits, DP sums), moving 16 bytes per
// global load and store. Load phase: each thread loads whole vec4 of frame rows (a warp: 4 frame rows of
// 128 bytes for uint16), all its loads of a tile before it stores any, and spreads each vec4 over 4 words of
// workgroup memory. Store phase: each thread owns 2 (pixel, vec4 column) slots, 4 row words = 4 x OVPW frames,
// and writes each with one vec4 store (a warp: 4 pixel rows of 128 contiguous bytes). The stored index of frame
// row f is rotated by swizzle(f) so that both phases are free of bank conflicts (uint32: 2-way in the load
// phase).
//
// No private arrays and no dynamically indexed vectors: a thread's loads, its slots' sums and masks, and a
// slot's row words are separate values, each handled by a function with fixed arguments. Keeping them in
// arrays (the first form of this entry point) ran at 369-408 GB/s of decoded uint16 on the H200 against 602-699
// for this form, in the same rounds (docs/performance.md, tenth session).
//
// Alignment: the host binds pixel_first = the block origin, a multiple of TILE_P (so every tile row starts at
// a multiple of 4 words when words_per_frame is), and masks pixels below pixel_begin. The frame grid starts
// `lead` frames before frame_first so that every output vec4 is aligned: grid frame g is batch-local frame
// frame_first + g - lead, and only grid frames [lead, ...) are the dispatch's. Each output vec4 belongs to one
// thread; words outside the dispatch's frames (the first vec4's leading words, the last one's trailing words)
// are left untouched (component stores), as are high words that are zero.

// `decoded4` (binding 1), IN_BYTES, PLANES and the planes form's helpers are declared by the including pass
// (detector-transpose.wgsl, -histogram, -planes).
@group(0) @binding(2) var<storage, read_write> resident4: array<vec4<u32>>;
@group(0) @binding(4) var<storage, read_write> resident_hi4: array<vec4<u32>>;

// Values per decoded word, row values per resident word (4 for the byte planes), frames per tile, decoded words
// and vec4 per tile frame row, vec4 each thread loads per tile (planes: 4, uint8 and uint32: 2), frames per
// output vec4. (Output vec4 per pixel row per tile: OUT_WORDS / 4 = 8; slots per thread: 64 x 8 / 256 = 2.)
override VPW: u32 = 4u / IN_BYTES;
// (4 for 1 and 2 bytes, 1 for 4; plain operators, so that every WGSL implementation folds it.)
override OVPW: u32 = 4u >> (2u * (ELEM_BYTES >> 2u));
override TILE_F: u32 = OUT_WORDS * OVPW;
override IN_WORDS: u32 = TILE_P / VPW;
override IN_VEC4: u32 = IN_WORDS / 4u;
override LOAD4: u32 = TILE_F * IN_VEC4 / THREADS;
override VEC_F: u32 = 4u * OVPW;

// Rotation of tile frame row f. Load phase (one vec4 component per instruction): the frame rows a warp covers
// (4 consecutive for planes, 4 of one parity for uint8, 2 for uint32) get distinct offsets mod 4. Store phase
// (frame j of each vec4 column c = 0..7): the 8 rows 4 x OVPW x c + j get offsets 4 apart (planes, uint32:
// 20c + j, 4c + const) or distinct mod 16 (uint8: 10c + j / 2), so the warp's 4 pixels' words do not collide.
fn swizzle(f: u32) -> u32 {
  if (IN_BYTES == 2u) {
    return f + 4u * (f >> 4u);
  }
  if (IN_BYTES == 1u) {
    return (f >> 1u) + 2u * (f >> 4u);
  }
  return 4u * (f >> 2u) + 2u * (f & 1u);
}

// vec4 `idx` of the tile's frame rows (IN_VEC4 a frame row), or zero outside the dispatch's frames and pixels.
fn vec4_load(g0: u32, idx: u32, lead: u32, g_stop: u32, pixel0: u32, last4: u32) -> vec4<u32> {
  let g = g0 + idx / IN_VEC4;
  let q = idx % IN_VEC4;
  if (g >= lead && g < g_stop && pixel0 + q * 4u * VPW < params.pixel_end) {
    let frame = params.frame_first + g - lead;
    return decoded4[min((frame * params.words_per_frame + pixel0 / VPW) / 4u + q, last4)];
  }
  return vec4<u32>(0u);
}

// Spreads vec4 `idx` over 4 words of its frame row in the tile, rotated by swizzle.
fn vec4_stash(idx: u32, v: vec4<u32>) {
  let f = idx / IN_VEC4;
  let w = (idx % IN_VEC4) * 4u + swizzle(f);
  let row = f * IN_WORDS;
  let m = IN_WORDS - 1u;
  tile[row + (w & m)] = v.x;
  tile[row + ((w + 1u) & m)] = v.y;
  tile[row + ((w + 2u) & m)] = v.z;
  tile[row + ((w + 3u) & m)] = v.w;
}

// The value of tile frame f at tile word wi, bits shift.
fn vec4_value(f: u32, wi: u32, shift: u32) -> u32 {
  let t = tile[f * IN_WORDS + ((wi + swizzle(f)) & (IN_WORDS - 1u))];
  if (IN_BYTES == 4u) {
    return t;
  }
  return (t >> shift) & select(0xffu, 0xffffu, IN_BYTES == 2u);
}

// Row word of tile frames fk..fk + OVPW - 1 of one pixel: (row word, high-plane word, sum of its values). The row
// word packs 4 values as bytes (uint8; uint16's low plane, its high bytes in the high-plane word) or is the value
// (uint32).
// Counts the values in the histogram when `counted` (binned).
fn vec4_word(fk: u32, wi: u32, shift: u32, counted: bool) -> vec3<u32> {
  if (ELEM_BYTES == 4u) {
    let v = vec4_value(fk, wi, shift);
    bin_value(v, counted);
    return vec3<u32>(v, 0u, v);
  }
  let a = vec4_value(fk, wi, shift);
  let b = vec4_value(fk + 1u, wi, shift);
  let c = vec4_value(fk + 2u, wi, shift);
  let d = vec4_value(fk + 3u, wi, shift);
  bin_value(a, counted);
  bin_value(b, counted);
  bin_value(c, counted);
  bin_value(d, counted);
  let low = (a & 0xffu) | ((b & 0xffu) << 8u) | ((c & 0xffu) << 16u) | ((d & 0xffu) << 24u);
  let high = (a >> 8u) | ((b >> 8u) << 8u) | ((c >> 8u) << 16u) | ((d >> 8u) << 24u);
  return vec3<u32>(low, high, a + b + c + d);
}

// A slot's running state over the tiles: the 64-bit sum (lo, hi) and, for planes, the mask of hot segments
// from seg0 on.
struct Slot4 {
  lo: u32,
  hi: u32,
  hot: u32,
}

// Adds one row word's values (grid frame gk on) to a slot if the word is the dispatch's.
fn vec4_add(s: Slot4, gk: u32, w: vec3<u32>, lead: u32, g_stop: u32, batch_frame0: u32, seg0: u32) -> Slot4 {
  if (gk < lead || gk >= g_stop) {
    return s;
  }
  var r = s;
  r.lo = s.lo + w.z;
  r.hi = s.hi + select(0u, 1u, r.lo < w.z);
  if (ELEM_BYTES == 2u && w.y != 0u) {
    r.hot |= 1u << ((batch_frame0 + gk) / params.segment_frames - seg0);
  }
  return r;
}

// Stores slot (pixel p of the block, vec4 column `column`) of the tile at grid frame g0 and adds it to the state.
fn vec4_slot(
  s0: Slot4,
  p: u32,
  column: u32,
  g0: u32,
  pixel0: u32,
  lead: u32,
  g_stop: u32,
  word0: u32,
  batch_frame0: u32,
  seg0: u32,
  counted: bool,
) -> Slot4 {
  let pixel = pixel0 + p;
  let gc = g0 + column * VEC_F;
  if (pixel < params.pixel_begin || pixel >= params.pixel_end || gc + VEC_F <= lead || gc >= g_stop) {
    return s0;
  }
  let wi = p / VPW;
  let shift = (p % VPW) * IN_BYTES * 8u;
  let fk = column * VEC_F;
  let w0 = vec4_word(fk, wi, shift, counted);
  let w1 = vec4_word(fk + OVPW, wi, shift, counted);
  let w2 = vec4_word(fk + 2u * OVPW, wi, shift, counted);
  let w3 = vec4_word(fk + 3u * OVPW, wi, shift, counted);
  var s = vec4_add(s0, gc, w0, lead, g_stop, batch_frame0, seg0);
  s = vec4_add(s, gc + OVPW, w1, lead, g_stop, batch_frame0, seg0);
  s = vec4_add(s, gc + 2u * OVPW, w2, lead, g_stop, batch_frame0, seg0);
  s = vec4_add(s, gc + 3u * OVPW, w3, lead, g_stop, batch_frame0, seg0);
  let words = vec4<u32>(w0.x, w1.x, w2.x, w3.x);
  let full = gc >= lead && gc + 3u * OVPW < g_stop;
  let row = pixel - params.row_first_pixel;
  let rw = word0 + gc / OVPW;
  let at = lo_index(row, rw) / 4u;
  if (full) {
    resident4[at] = words;
  } else {
    for (var k = 0u; k < 4u; k++) {
      let gk = gc + k * OVPW;
      if (gk >= lead && gk < g_stop) {
        resident4[at][k] = words[k];
      }
    }
  }
  let highs = vec4<u32>(w0.y, w1.y, w2.y, w3.y);
  if (ELEM_BYTES == 2u && any(highs != vec4<u32>(0u))) {
    vec4_store_highs(hi_index(row, rw) / 4u, highs, full, gc, lead, g_stop);
  }
  return s;
}

// A slot's high words (frames gc, gc + OVPW, ... of the grid) at vec4 hi_at of the full high row or the batch's
// high scratch (Params.hi_*): the whole vec4 when all four are the dispatch's (`full`) and nonzero, else each
// nonzero one of the dispatch's frames. (`&`, not `&&`: SwiftShader compiled the planes pass, which stores through
// here twice, 75 x slower with short circuits.)
fn vec4_store_highs(hi_at: u32, highs: vec4<u32>, full: bool, gc: u32, lead: u32, g_stop: u32) {
  if (full & all(highs != vec4<u32>(0u))) {
    resident_hi4[hi_at] = highs;
  } else {
    for (var k = 0u; k < 4u; k++) {
      let gk = gc + k * OVPW;
      if ((gk >= lead) & (gk < g_stop) & (highs[k] != 0u)) {
        resident_hi4[hi_at][k] = highs[k];
      }
    }
  }
}

// PLANES: vec4 `idx` of the tile's frame rows of the high plane, zero outside the dispatch and for a frame whose
// mark leaves this block's span out; the vec4 read is zeroed in the slot (below clear_end: see Params).
fn vec4_load_high(g0: u32, idx: u32, lead: u32, g_stop: u32, pixel0: u32, last4: u32, span: u32) -> vec4<u32> {
  let g = g0 + idx / IN_VEC4;
  let q = idx % IN_VEC4;
  let first = pixel0 + q * 4u * VPW;
  if ((g >= lead) & (g < g_stop) & (first < params.pixel_end) & frame_marked(g, lead, span, last4)) {
    let frame = params.frame_first + g - lead;
    let at = min((frame * params.words_per_frame + params.high_word + pixel0 / VPW) / 4u + q, last4);
    let v = decoded4[at];
    if (any(v != vec4<u32>(0u)) & (first + 4u * VPW <= params.clear_end)) {
      clear_decoded4(at);
    }
    return v;
  }
  return vec4<u32>(0u);
}

// PLANES: whether grid frame g (inside the dispatch's frames) has a high byte in span `span`.
fn frame_marked(g: u32, lead: u32, span: u32, last4: u32) -> bool {
  let frame = params.frame_first + g - lead;
  let mark = decoded4[min((frame * params.words_per_frame + params.mark_word) / 4u, last4)].x;
  return ((mark >> span) & 1u) != 0u;
}

// PLANES: the high bytes of slot (pixel p, vec4 column) of the tile (its high plane in the workgroup tile): their
// words go where vec4_slot's high words go, their values (x 256) into the sum, and their hot bits.
fn vec4_slot_high(
  s0: Slot4,
  p: u32,
  column: u32,
  g0: u32,
  pixel0: u32,
  lead: u32,
  g_stop: u32,
  word0: u32,
  batch_frame0: u32,
  seg0: u32,
) -> Slot4 {
  let pixel = pixel0 + p;
  let gc = g0 + column * VEC_F;
  if ((pixel < params.pixel_begin) | (pixel >= params.pixel_end) | (gc + VEC_F <= lead) | (gc >= g_stop)) {
    return s0;
  }
  let wi = p / VPW;
  let shift = (p % VPW) * 8u;
  let fk = column * VEC_F;
  // (0, high word, sum of the high bytes x 256): vec4_add sets the hot bit of a nonzero high word.
  let w0 = vec4_word(fk, wi, shift, false);
  let w1 = vec4_word(fk + OVPW, wi, shift, false);
  let w2 = vec4_word(fk + 2u * OVPW, wi, shift, false);
  let w3 = vec4_word(fk + 3u * OVPW, wi, shift, false);
  var s = vec4_add(s0, gc, vec3<u32>(0u, w0.x, w0.z << 8u), lead, g_stop, batch_frame0, seg0);
  s = vec4_add(s, gc + OVPW, vec3<u32>(0u, w1.x, w1.z << 8u), lead, g_stop, batch_frame0, seg0);
  s = vec4_add(s, gc + 2u * OVPW, vec3<u32>(0u, w2.x, w2.z << 8u), lead, g_stop, batch_frame0, seg0);
  s = vec4_add(s, gc + 3u * OVPW, vec3<u32>(0u, w3.x, w3.z << 8u), lead, g_stop, batch_frame0, seg0);
  let highs = vec4<u32>(w0.x, w1.x, w2.x, w3.x);
  if (any(highs != vec4<u32>(0u))) {
    let full = (gc >= lead) & (gc + 3u * OVPW < g_stop);
    vec4_store_highs(hi_index(pixel - params.row_first_pixel, word0 + gc / OVPW) / 4u, highs, full, gc, lead, g_stop);
  }
  return s;
}

// The 8 columns' values of pixel `lid` (< 64) from every thread's two slots (pixels p0 and p0 + 32, column
// `column`): column c of pixel p at c * 64 + (p + 4 c) % 64 (distinct banks for a warp's 4 pixels x 8 columns,
// and for 32 pixels reading one column). Call in uniform control flow (barriers).
fn vec4_columns(a: u32, b: u32, p0: u32, column: u32, lid: u32) -> array<u32, 8> {
  tile[column * 64u + ((p0 + 4u * column) & 63u)] = a;
  tile[column * 64u + ((p0 + 32u + 4u * column) & 63u)] = b;
  workgroupBarrier();
  var out: array<u32, 8>;
  if (lid < 64u) {
    out = array<u32, 8>(
      tile[lid & 63u],
      tile[64u + ((lid + 4u) & 63u)],
      tile[128u + ((lid + 8u) & 63u)],
      tile[192u + ((lid + 12u) & 63u)],
      tile[256u + ((lid + 16u) & 63u)],
      tile[320u + ((lid + 20u) & 63u)],
      tile[384u + ((lid + 24u) & 63u)],
      tile[448u + ((lid + 28u) & 63u)],
    );
  }
  workgroupBarrier();
  return out;
}

@compute @workgroup_size(THREADS)
fn main_vec4(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  // Row word of grid frame 0 (a multiple of 4), and the grid frames [lead, g_stop) of this workgroup.
  let m = (params.out_word + params.frame_first / OVPW) % 4u;
  let lead = m * OVPW;
  // Span-fastest (Params.spans): the workgroups resident at once write fewer rows, each in longer runs.
  let block = wid.x / params.spans;
  let span = wid.x % params.spans;
  let pixel0 = params.pixel_first + block * TILE_P;
  let word0 = params.out_word + params.frame_first / OVPW - m;
  let g_begin = span * params.tiles_per_group * TILE_F;
  let g_stop = min(params.frame_end - params.frame_first + lead, g_begin + params.tiles_per_group * TILE_F);
  let g_first = max(g_begin, lead);
  // Store phase: this thread's slots are pixels p0 and p0 + 32, vec4 column lid % 8 (fixed over tiles).
  let column = lid % 8u;
  let p0 = lid / 8u;
  let batch_frame0 = params.first_frame + params.frame_first - lead;
  let seg0 = select(0u, (batch_frame0 + g_first) / max(params.segment_frames, 1u), ELEM_BYTES == 2u);
  let last4 = arrayLength(&decoded4) - 1u;
  // PLANES: the span of the marks that this block's pixels lie in (span_pixels is a multiple of TILE_P).
  let mark_span = select(0u, pixel0 / max(params.span_pixels, 1u), PLANES);

  var s0 = Slot4(0u, 0u, 0u);
  var s1 = Slot4(0u, 0u, 0u);
  let counted0 = binned(pixel0 + p0);
  let counted1 = binned(pixel0 + p0 + 32u);
  for (var g0 = g_begin; g0 < g_stop; g0 += TILE_F) {
    let v0 = vec4_load(g0, lid, lead, g_stop, pixel0, last4);
    let v1 = vec4_load(g0, lid + THREADS, lead, g_stop, pixel0, last4);
    var v2 = vec4<u32>(0u);
    var v3 = vec4<u32>(0u);
    if (LOAD4 > 2u) {
      v2 = vec4_load(g0, lid + 2u * THREADS, lead, g_stop, pixel0, last4);
      v3 = vec4_load(g0, lid + 3u * THREADS, lead, g_stop, pixel0, last4);
    }
    if (PLANES && lid < TILE_F) {
      let g = g0 + lid;
      // `&`, not `&&`, here and in the high phase: SwiftShader compiled this pass 75 x slower with the short circuits.
      if ((g >= lead) & (g < g_stop) & frame_marked(g, lead, mark_span, last4)) {
        tile_mark_or();
      }
    }
    vec4_stash(lid, v0);
    vec4_stash(lid + THREADS, v1);
    if (LOAD4 > 2u) {
      vec4_stash(lid + 2u * THREADS, v2);
      vec4_stash(lid + 3u * THREADS, v3);
    }
    workgroupBarrier();
    s0 = vec4_slot(s0, p0, column, g0, pixel0, lead, g_stop, word0, batch_frame0, seg0, counted0);
    s1 = vec4_slot(s1, p0 + 32u, column, g0, pixel0, lead, g_stop, word0, batch_frame0, seg0, counted1);
    workgroupBarrier();
    // PLANES: the high plane of the tile, only when a frame of it is marked in this block's span (rare: most
    // frames hold no count above 255).
    if (PLANES && tile_mark_take(lid) != 0u) {
      let h0 = vec4_load_high(g0, lid, lead, g_stop, pixel0, last4, mark_span);
      let h1 = vec4_load_high(g0, lid + THREADS, lead, g_stop, pixel0, last4, mark_span);
      vec4_stash(lid, h0);
      vec4_stash(lid + THREADS, h1);
      workgroupBarrier();
      s0 = vec4_slot_high(s0, p0, column, g0, pixel0, lead, g_stop, word0, batch_frame0, seg0);
      s1 = vec4_slot_high(s1, p0 + 32u, column, g0, pixel0, lead, g_stop, word0, batch_frame0, seg0);
      workgroupBarrier();
    }
  }

  // Per pixel: the 8 columns' sums (and, for planes, hot masks), then 2 global atomics (and at most 2 more).
  let own = pixel0 + lid >= params.pixel_begin && pixel0 + lid < params.pixel_end;
  let los = vec4_columns(s0.lo, s1.lo, p0, column, lid);
  let his = vec4_columns(s0.hi, s1.hi, p0, column, lid);
  var hots: array<u32, 8>;
  if (ELEM_BYTES == 2u) {
    hots = vec4_columns(s0.hot, s1.hot, p0, column, lid);
  }
  if (lid < 64u) {
    var sum_lo = 0u;
    var sum_hi = 0u;
    var mask = 0u;
    for (var j = 0u; j < 8u; j++) {
      sum_lo += los[j];
      sum_hi += select(0u, 1u, sum_lo < los[j]) + his[j];
      mask |= hots[j];
    }
    if (own) {
      add_dp_sum(pixel0 + lid, sum_lo, sum_hi);
      if (ELEM_BYTES == 2u) {
        or_hot(pixel0 + lid, seg0, mask);
      }
    }
  }
  flush_bins(lid);
}
