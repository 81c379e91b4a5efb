// main_planes, the uint16 byte-plane entry point of detector-transpose.wgsl (included at its end by a line naming
// this file; it uses what common/detector-transpose-shared.wgsl and common/detector-transpose-vec4.wgsl declare).
//
// The same result and the same 16-byte accesses as main_vec4 for ELEM_BYTES = 2 and TILE_P = 64, written without
// private arrays or dynamically indexed vectors: the 4 loads of a tile, the 2 slots of a thread and the 4 row
// words of a slot are separate values, each handled by a function call with fixed arguments, so none of a
// thread's values can be placed in local memory by the compiler. Layout, alignment, swizzle and the end of the
// workgroup (DP sums and hot bits) are main_vec4's.

// vec4 `idx` of the tile's frame rows (8 a frame row), or zero outside the dispatch's frames and pixels.
fn planes_load(g0: u32, idx: u32, lead: u32, g_stop: u32, pixel0: u32, last4: u32) -> vec4<u32> {
  let g = g0 + idx / 8u;
  let q = idx % 8u;
  if (g >= lead && g < g_stop && pixel0 + q * 8u < params.pixel_end) {
    let frame = params.frame_first + g - lead;
    return decoded4[min((frame * params.words_per_frame + pixel0 / 2u) / 4u + q, last4)];
  }
  return vec4<u32>(0u);
}

// Spreads vec4 `idx` over 4 words of its frame row in the tile (rotated by swizzle, as main_vec4).
fn planes_stash(idx: u32, v: vec4<u32>) {
  let f = idx / 8u;
  let w = (idx % 8u) * 4u + swizzle(f);
  let row = f * 32u;
  tile[row + (w & 31u)] = v.x;
  tile[row + ((w + 1u) & 31u)] = v.y;
  tile[row + ((w + 2u) & 31u)] = v.z;
  tile[row + ((w + 3u) & 31u)] = v.w;
}

// The 16-bit value of tile frame f at tile word wi, bits shift.
fn planes_value(f: u32, wi: u32, shift: u32) -> u32 {
  return (tile[f * 32u + ((wi + swizzle(f)) & 31u)] >> shift) & 0xffffu;
}

// Row word of tile frames fk..fk + 3 of one pixel: (low bytes, high bytes, sum of the 4 values).
fn planes_word(fk: u32, wi: u32, shift: u32) -> vec3<u32> {
  let a = planes_value(fk, wi, shift);
  let b = planes_value(fk + 1u, wi, shift);
  let c = planes_value(fk + 2u, wi, shift);
  let d = planes_value(fk + 3u, wi, shift);
  let low = (a & 0xffu) | ((b & 0xffu) << 8u) | ((c & 0xffu) << 16u) | ((d & 0xffu) << 24u);
  let high = (a >> 8u) | ((b >> 8u) << 8u) | ((c >> 8u) << 16u) | ((d >> 8u) << 24u);
  return vec3<u32>(low, high, a + b + c + d);
}

// A slot's running state over the tiles: the 64-bit sum (lo, hi) and the mask of hot segments from seg0 on.
struct PlaneSlot {
  lo: u32,
  hi: u32,
  hot: u32,
}

// Adds one row word's values (grid frame gk on) to a slot if the word is the dispatch's.
fn planes_add(s: PlaneSlot, gk: u32, w: vec3<u32>, lead: u32, g_stop: u32, batch_frame0: u32, seg0: u32) -> PlaneSlot {
  if (gk < lead || gk >= g_stop) {
    return s;
  }
  var r = s;
  r.lo = s.lo + w.z;
  r.hi = s.hi + select(0u, 1u, r.lo < w.z);
  if (w.y != 0u) {
    r.hot |= 1u << ((batch_frame0 + gk) / params.segment_frames - seg0);
  }
  return r;
}

// Stores slot (pixel p of the block, vec4 column `column`) of the tile at grid frame g0 and adds it to the state.
fn planes_slot(
  s0: PlaneSlot,
  p: u32,
  column: u32,
  g0: u32,
  pixel0: u32,
  lead: u32,
  g_stop: u32,
  word0: u32,
  batch_frame0: u32,
  seg0: u32,
) -> PlaneSlot {
  let pixel = pixel0 + p;
  let gc = g0 + column * 16u;
  if (pixel < params.pixel_begin || pixel >= params.pixel_end || gc + 16u <= lead || gc >= g_stop) {
    return s0;
  }
  let wi = p / 2u;
  let shift = (p % 2u) * 16u;
  let fk = column * 16u;
  let w0 = planes_word(fk, wi, shift);
  let w1 = planes_word(fk + 4u, wi, shift);
  let w2 = planes_word(fk + 8u, wi, shift);
  let w3 = planes_word(fk + 12u, wi, shift);
  var s = planes_add(s0, gc, w0, lead, g_stop, batch_frame0, seg0);
  s = planes_add(s, gc + 4u, w1, lead, g_stop, batch_frame0, seg0);
  s = planes_add(s, gc + 8u, w2, lead, g_stop, batch_frame0, seg0);
  s = planes_add(s, gc + 12u, w3, lead, g_stop, batch_frame0, seg0);
  let words = vec4<u32>(w0.x, w1.x, w2.x, w3.x);
  let highs = vec4<u32>(w0.y, w1.y, w2.y, w3.y);
  let full = gc >= lead && gc + 12u < g_stop;
  let at = ((pixel - params.row_first_pixel) * params.words_per_pixel + word0 + gc / 4u) / 4u;
  if (full) {
    resident4[at] = words;
  } else {
    for (var k = 0u; k < 4u; k++) {
      let gk = gc + k * 4u;
      if (gk >= lead && gk < g_stop) {
        resident4[at][k] = words[k];
      }
    }
  }
  if (any(highs != vec4<u32>(0u))) {
    if (full && all(highs != vec4<u32>(0u))) {
      resident_hi4[at] = highs;
    } else {
      for (var k = 0u; k < 4u; k++) {
        let gk = gc + k * 4u;
        if (gk >= lead && gk < g_stop && highs[k] != 0u) {
          resident_hi4[at][k] = highs[k];
        }
      }
    }
  }
  return s;
}

// Reduces one u32 per (slot) over the 8 columns of each of the 64 pixels into lane p < 64: sum (op 0, with the
// carry count in .y) or OR (op 1). Column c of pixel p at c * 64 + (p + 4 c) % 64, as main_vec4.
fn planes_gather(a: u32, b: u32, p0: u32, column: u32, lid: u32) -> array<u32, 8> {
  tile[column * 64u + ((p0 + 4u * column) & 63u)] = a;
  tile[column * 64u + ((p0 + 32u + 4u * column) & 63u)] = b;
  workgroupBarrier();
  var out: array<u32, 8>;
  if (lid < 64u) {
    out = array<u32, 8>(
      tile[((lid) & 63u)],
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
fn main_planes(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let block = wid.x % params.pixel_blocks;
  let span = wid.x / params.pixel_blocks;
  let pixel0 = params.pixel_first + block * 64u;
  let m = (params.out_word + params.frame_first / 4u) % 4u;
  let lead = m * 4u;
  let word0 = params.out_word + params.frame_first / 4u - m;
  let g_begin = span * params.tiles_per_group * 128u;
  let g_stop = min(params.frame_end - params.frame_first + lead, g_begin + params.tiles_per_group * 128u);
  let g_first = max(g_begin, lead);
  let column = lid % 8u;
  let p0 = lid / 8u;
  let batch_frame0 = params.first_frame + params.frame_first - lead;
  let seg0 = (batch_frame0 + g_first) / max(params.segment_frames, 1u);
  let last4 = arrayLength(&decoded4) - 1u;

  var s0 = PlaneSlot(0u, 0u, 0u);
  var s1 = PlaneSlot(0u, 0u, 0u);
  for (var g0 = g_begin; g0 < g_stop; g0 += 128u) {
    let v0 = planes_load(g0, lid, lead, g_stop, pixel0, last4);
    let v1 = planes_load(g0, lid + 256u, lead, g_stop, pixel0, last4);
    let v2 = planes_load(g0, lid + 512u, lead, g_stop, pixel0, last4);
    let v3 = planes_load(g0, lid + 768u, lead, g_stop, pixel0, last4);
    planes_stash(lid, v0);
    planes_stash(lid + 256u, v1);
    planes_stash(lid + 512u, v2);
    planes_stash(lid + 768u, v3);
    workgroupBarrier();
    s0 = planes_slot(s0, p0, column, g0, pixel0, lead, g_stop, word0, batch_frame0, seg0);
    s1 = planes_slot(s1, p0 + 32u, column, g0, pixel0, lead, g_stop, word0, batch_frame0, seg0);
    workgroupBarrier();
  }

  let own = pixel0 + lid >= params.pixel_begin && pixel0 + lid < params.pixel_end;
  let los = planes_gather(s0.lo, s1.lo, p0, column, lid);
  let his = planes_gather(s0.hi, s1.hi, p0, column, lid);
  let hots = planes_gather(s0.hot, s1.hot, p0, column, lid);
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
      or_hot(pixel0 + lid, seg0, mask);
    }
  }
}
