// Exact virtual image from the resident (detector-major) data: for every scan position, the sum over a
// binary mask's pixels as a 64-bit integer (lo, hi u32). Contract: docs/pass-graph.md ("Resident",
// "64-bit counters"); layout: src/gpu/resident-layout.ts; CPU twin: src/kernels/resident-virtual-image.ts.
//
// One dispatch per resident buffer: `pixels[list_start .. list_start + list_count)` are the mask's pixels in
// the bound buffer (global indices, row = pixel - row_first_pixel). A workgroup is COLUMNS x SLICES threads
// (COLUMNS = WORKGROUP_SIZE / SLICES): each owns one vec4 column of the rows (4 words = 4 * VPW consecutive
// scan positions) and one of SLICES contiguous parts of the pixel list, and reads its 16 bytes of each row of
// its part: a warp reads 512 contiguous bytes per row. The loop is unrolled by 4 rows (all their loads issued
// before any sum), so SLICES x 4 rows' loads are in flight per column. Byte rows sum in 16-bit SWAR lanes for
// at most 255 rows, then move into 64-bit totals; uint32 values carry on every add. The slices are added in workgroup memory,
// and slice 0 adds the column's totals to `image` (read-modify-write, no atomics: dispatches run in order
// and each position belongs to one workgroup), or subtracts them when `subtract` is set (u64 with borrow,
// wrapping mod 2^64 like the twin): live mask updates add the pixels a mask gained, subtract those it lost,
// and start a mask of more than half the detector from the frame totals minus its complement.
//
// uint16 ('planes'): `resident` is the low byte plane (4 positions per word, like uint8) and `resident_hi` the
// high plane, read only for rows whose (pixel, segment) bit is set in `hot`: a column lies in one segment
// (segments are multiples of 128 positions), and with segments a multiple of 512 a whole workgroup does, so
// the branch is uniform. Each lane adds lo + 256 x hi (at most 65,535, as uint16 did). A slotted high plane
// (`slotted`) holds only the hot segments, in slots of slot_frames bytes: pixel p's hot segment g is slot
// slot_table[p * segments + g] - 1. Packed layouts bind placeholders at 4, 5 and 6 that the shader never
// reads (and full high planes at 6).

override ELEM_BYTES: u32 = 2u;
override WORKGROUP_SIZE: u32 = 256u;
// Parts of the pixel list per column (a divisor of WORKGROUP_SIZE).
override SLICES: u32 = 8u;

struct Params {
  list_start: u32,
  list_count: u32,
  row_first_pixel: u32,
  // words_per_pixel / 4, the bound buffer's rows, and vec4 per row tile (tile_words / 4; vec4_per_pixel when
  // untiled: common/resident-tile.wgsl).
  vec4_per_pixel: u32,
  buffer_rows: u32,
  tile_vec4: u32,
  // Scan positions: image entries past it are not written.
  frames: u32,
  // vec4 columns [column_first, column_end) of this dispatch.
  column_first: u32,
  column_end: u32,
  // Nonzero: subtract the sums from `image` instead of adding them.
  subtract: u32,
  // Planes: hot bitmap words per pixel, positions per segment.
  hot_words_per_pixel: u32,
  segment_frames: u32,
  // Nonzero: `resident_hi` is a slotted high plane (slots of slot_frames bytes) addressed through `slot_table`
  // (segments per pixel: `segments`).
  slotted: u32,
  slot_frames: u32,
  segments: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> resident: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> pixels: array<u32>;
@group(0) @binding(3) var<storage, read_write> image: array<vec2<u32>>;
@group(0) @binding(4) var<storage, read> resident_hi: array<vec4<u32>>;
@group(0) @binding(5) var<storage, read> hot: array<u32>;
@group(0) @binding(6) var<storage, read> slot_table: array<u32>;

// One round of the slice reduction: lo and hi vec4 of every thread of slices 1..SLICES-1.
var<workgroup> partial_lo: array<vec4<u32>, WORKGROUP_SIZE>;
var<workgroup> partial_hi: array<vec4<u32>, WORKGROUP_SIZE>;

// Sums of the current flush block. uint32: a0 = lo, a1 = carries. Byte rows (uint8, uint16's planes): SWAR,
// 16-bit lanes of u32 (at most 255 rows of values <= 255 per block): `even` holds bytes 0 and 2 of each word
// (lanes low, high), `odd` bytes 1 and 3; `hi_even`, `hi_odd` the same for the high plane (hot rows only).
var<private> a0: vec4<u32>;
var<private> a1: vec4<u32>;
var<private> even: vec4<u32>;
var<private> odd: vec4<u32>;
var<private> hi_even: vec4<u32>;
var<private> hi_odd: vec4<u32>;
// 64-bit totals per value k of each word: lo in l_k; hi < 2^16 always (fewer than 2^32 rows of values below
// 2^16), so the hi words of values 0 and 1 share h01 (k = 0 low 16 bits, k = 1 high 16 bits), 2 and 3 h23.
// uint32: l0 and h0 (a full hi word).
var<private> l0: vec4<u32>;
var<private> l1: vec4<u32>;
var<private> l2: vec4<u32>;
var<private> l3: vec4<u32>;
var<private> h0: vec4<u32>;
var<private> h01: vec4<u32>;
var<private> h23: vec4<u32>;

const BYTES = vec4<u32>(0x00ff00ffu);
const LANE = vec4<u32>(0xffffu);

fn accumulate(v: vec4<u32>) {
  if (ELEM_BYTES == 4u) {
    let s = a0 + v;
    a1 += select(vec4<u32>(0u), vec4<u32>(1u), s < v);
    a0 = s;
  } else {
    even += v & BYTES;
    odd += (v >> vec4<u32>(8u)) & BYTES;
  }
}

// Planes, hot rows: the high plane's bytes, counted 256 times at the flush.
fn accumulate_high(v: vec4<u32>) {
  hi_even += v & BYTES;
  hi_odd += (v >> vec4<u32>(8u)) & BYTES;
}

fn carry(sum: vec4<u32>, addend: vec4<u32>) -> vec4<u32> {
  return select(vec4<u32>(0u), vec4<u32>(1u), sum < addend);
}

fn flush() {
  if (ELEM_BYTES == 4u) {
    l0 += a0;
    h0 += a1 + carry(l0, a0);
    a0 = vec4<u32>(0u);
    a1 = vec4<u32>(0u);
    return;
  }
  // Value k's block sum: low bytes + 256 x high bytes, at most 255 x 65,535 < 2^24.
  let s0 = (even & LANE) + ((hi_even & LANE) << vec4<u32>(8u));
  let s1 = (odd & LANE) + ((hi_odd & LANE) << vec4<u32>(8u));
  let s2 = (even >> vec4<u32>(16u)) + ((hi_even >> vec4<u32>(16u)) << vec4<u32>(8u));
  let s3 = (odd >> vec4<u32>(16u)) + ((hi_odd >> vec4<u32>(16u)) << vec4<u32>(8u));
  l0 += s0;
  l1 += s1;
  l2 += s2;
  l3 += s3;
  h01 += carry(l0, s0) + (carry(l1, s1) << vec4<u32>(16u));
  h23 += carry(l2, s2) + (carry(l3, s3) << vec4<u32>(16u));
  even = vec4<u32>(0u);
  odd = vec4<u32>(0u);
  hi_even = vec4<u32>(0u);
  hi_odd = vec4<u32>(0u);
}

// Where a thread's column lies: its segment, and that segment's bitmap word and bit; and its place in the row
// tiles: row r's vec4 of the column is at base + r x stride (resident_index with the tile fixed by the column).
struct Segment {
  index: u32,
  word: u32,
  bit: u32,
  base: u32,
  stride: u32,
}

// #include "common/resident-tile.wgsl"

// Vec4 index of the column's vec4 in pixel p's row.
fn row_at(p: u32, seg: Segment) -> u32 {
  return seg.base + (p - params.row_first_pixel) * seg.stride;
}

// Planes: the high-plane vec4 index of pixel p's row vec4 `at` (column `column`), whose segment is hot
// (`bits`: the pixel's bitmap word of the segment).
fn high_at(p: u32, at: u32, column: u32, seg: Segment) -> u32 {
  if (params.slotted == 0u) {
    return at;
  }
  let slot = slot_table[p * params.segments + seg.index] - 1u;
  return slot * (params.slot_frames / 16u) + column - seg.index * (params.segment_frames / 16u);
}

// Planes: the high-plane vec4 of row (p, at), or zeros when its segment is cold.
fn high(p: u32, bits: u32, at: u32, column: u32, seg: Segment) -> vec4<u32> {
  if (((bits >> seg.bit) & 1u) == 0u) {
    return vec4<u32>(0u);
  }
  return resident_hi[high_at(p, at, column, seg)];
}

// Adds row entries [i, i + 4): every load of the 4 rows is issued before any sum (4 in flight per thread).
// Planes: the 4 rows' bitmap words are read with the low plane, and the high plane only when one is hot.
fn rows4(i: u32, column: u32, seg: Segment) {
  let p0 = pixels[i];
  let p1 = pixels[i + 1u];
  let p2 = pixels[i + 2u];
  let p3 = pixels[i + 3u];
  let r0 = row_at(p0, seg);
  let r1 = row_at(p1, seg);
  let r2 = row_at(p2, seg);
  let r3 = row_at(p3, seg);
  let v0 = resident[r0];
  let v1 = resident[r1];
  let v2 = resident[r2];
  let v3 = resident[r3];
  if (ELEM_BYTES == 2u) {
    let w = params.hot_words_per_pixel;
    let b0 = hot[p0 * w + seg.word];
    let b1 = hot[p1 * w + seg.word];
    let b2 = hot[p2 * w + seg.word];
    let b3 = hot[p3 * w + seg.word];
    if ((((b0 | b1 | b2 | b3) >> seg.bit) & 1u) != 0u) {
      let u0 = high(p0, b0, r0, column, seg);
      let u1 = high(p1, b1, r1, column, seg);
      let u2 = high(p2, b2, r2, column, seg);
      let u3 = high(p3, b3, r3, column, seg);
      accumulate_high(u0);
      accumulate_high(u1);
      accumulate_high(u2);
      accumulate_high(u3);
    }
  }
  accumulate(v0);
  accumulate(v1);
  accumulate(v2);
  accumulate(v3);
}

// Adds row entry i.
fn row1(i: u32, column: u32, seg: Segment) {
  let p = pixels[i];
  let at = row_at(p, seg);
  accumulate(resident[at]);
  if (ELEM_BYTES == 2u) {
    let bits = hot[p * params.hot_words_per_pixel + seg.word];
    accumulate_high(high(p, bits, at, column, seg));
  }
}

fn store(position: u32, lo: u32, hi: u32) {
  if (position < params.frames) {
    let old = image[position];
    if (params.subtract != 0u) {
      image[position] = vec2<u32>(old.x - lo, old.y - hi - select(0u, 1u, old.x < lo));
    } else {
      let sum = old.x + lo;
      image[position] = vec2<u32>(sum, old.y + hi + select(0u, 1u, sum < lo));
    }
  }
}

// Adds the totals (lo, hi) of value k of this thread's words: slices 1.. publish, slice 0 adds them up.
fn reduce_slices(lid: u32, lo: ptr<function, vec4<u32>>, hi: ptr<function, vec4<u32>>) {
  partial_lo[lid] = *lo;
  partial_hi[lid] = *hi;
  workgroupBarrier();
  if (lid < WORKGROUP_SIZE / SLICES) {
    for (var s = 1u; s < SLICES; s++) {
      let other = partial_lo[lid + s * (WORKGROUP_SIZE / SLICES)];
      *lo += other;
      *hi += partial_hi[lid + s * (WORKGROUP_SIZE / SLICES)] + carry(*lo, other);
    }
  }
  workgroupBarrier();
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let columns = WORKGROUP_SIZE / SLICES;
  let column = params.column_first + wid.x * columns + lid % columns;
  let slice = lid / columns;
  let in_range = column < params.column_end;
  // Rows per flush block: uint32 carries on every add; byte rows' 16-bit lanes hold 255 x 255.
  let flush_rows = select(255u, 0xffffffffu, ELEM_BYTES == 4u);
  let part = (params.list_count + SLICES - 1u) / SLICES;
  var i = params.list_start + min(params.list_count, slice * part);
  var end = params.list_start + min(params.list_count, slice * part + part);
  if (!in_range) {
    end = i;
  }
  // Planes: the column's 16 positions lie in one hot segment.
  let segment = column * 16u / max(params.segment_frames, 1u);
  let base = resident_index(0u, column, params.buffer_rows, params.vec4_per_pixel, params.tile_vec4);
  let stride = resident_index(1u, column, params.buffer_rows, params.vec4_per_pixel, params.tile_vec4) - base;
  let seg = Segment(segment, segment / 32u, segment % 32u, base, stride);
  while (i < end) {
    let stop = select(end, i + flush_rows, end - i > flush_rows);
    while (i + 4u <= stop) {
      rows4(i, column, seg);
      i += 4u;
    }
    while (i < stop) {
      row1(i, column, seg);
      i += 1u;
    }
    flush();
  }

  var lo0 = l0;
  var hi0 = select(h01 & LANE, h0, ELEM_BYTES == 4u);
  var lo1 = l1;
  var hi1 = h01 >> vec4<u32>(16u);
  var lo2 = l2;
  var hi2 = h23 & LANE;
  var lo3 = l3;
  var hi3 = h23 >> vec4<u32>(16u);
  // Positions per row word: 4 (uint8, and uint16's byte planes) or 1.
  let vpw = select(4u, 1u, ELEM_BYTES == 4u);
  if (SLICES > 1u) {
    reduce_slices(lid, &lo0, &hi0);
    if (vpw > 1u) {
      reduce_slices(lid, &lo1, &hi1);
      reduce_slices(lid, &lo2, &hi2);
      reduce_slices(lid, &lo3, &hi3);
    }
  }
  if (!in_range || slice != 0u) {
    return;
  }
  for (var j = 0u; j < 4u; j++) {
    let first = (column * 4u + j) * vpw;
    store(first, lo0[j], hi0[j]);
    if (vpw > 1u) {
      store(first + 1u, lo1[j], hi1[j]);
      store(first + 2u, lo2[j], hi2[j]);
      store(first + 3u, lo3[j], hi3[j]);
    }
  }
}
