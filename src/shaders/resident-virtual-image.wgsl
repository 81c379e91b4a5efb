// Exact virtual image from the resident (detector-major) data: for every scan position, the sum over a
// binary mask's pixels as a 64-bit integer (lo, hi u32). Contract: docs/pass-graph.md ("Resident",
// "64-bit counters"); layout: src/gpu/resident-layout.ts; CPU twin: src/kernels/resident-virtual-image.ts.
//
// One dispatch per resident buffer: `pixels[list_start .. list_start + list_count)` are the mask's pixels in
// the bound buffer (global indices, row = pixel - row_first_pixel). A workgroup is COLUMNS x SLICES threads
// (COLUMNS = WORKGROUP_SIZE / SLICES): each owns one vec4 column of the rows (4 words = 4 * VPW consecutive
// scan positions) and one of SLICES contiguous parts of the pixel list, and reads its 16 bytes of each row of
// its part: a warp reads 512 contiguous bytes per row. The loop is unrolled by 4 rows, so SLICES x 4 rows'
// loads are in flight per column. Sums stay in u32 lanes for at most FLUSH rows (FLUSH x max value < 2^32),
// then move into 64-bit totals; uint32 values carry on every add. The slices are added in workgroup memory,
// and slice 0 adds the column's totals to `image` (read-modify-write, no atomics: dispatches run in order
// and each position belongs to one workgroup), or subtracts them when `subtract` is set (u64 with borrow,
// wrapping mod 2^64 like the twin): live mask updates add the pixels a mask gained, subtract those it lost,
// and start a mask of more than half the detector from the frame totals minus its complement.
//
// uint16 ('planes'): `resident` is the low byte plane (4 positions per word, like uint8) and `resident_hi` the
// high plane, read only for rows whose (pixel, segment) bit is set in `hot`: a column lies in one segment
// (segments are multiples of 128 positions), and with segments a multiple of 512 a whole workgroup does, so
// the branch is uniform. Each lane adds lo + 256 x hi (at most 65,535, as uint16 did). A compact high plane
// (`compact`) holds only the hot segments, in slots of slot_frames bytes: pixel p's hot segment g is slot
// hot_base[p] + (its hot segments before g). Packed layouts bind placeholders at 4, 5 and 6 that the shader
// never reads (and full high planes at 6).

override ELEM_BYTES: u32 = 2u;
override WORKGROUP_SIZE: u32 = 256u;
// Parts of the pixel list per column (a divisor of WORKGROUP_SIZE).
override SLICES: u32 = 8u;

struct Params {
  list_start: u32,
  list_count: u32,
  row_first_pixel: u32,
  // words_per_pixel / 4.
  vec4_per_pixel: u32,
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
  // Nonzero: `resident_hi` is the compact high plane (slots of slot_frames bytes), addressed through `hot_base`.
  compact: u32,
  slot_frames: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> resident: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> pixels: array<u32>;
@group(0) @binding(3) var<storage, read_write> image: array<vec2<u32>>;
@group(0) @binding(4) var<storage, read> resident_hi: array<vec4<u32>>;
@group(0) @binding(5) var<storage, read> hot: array<u32>;
@group(0) @binding(6) var<storage, read> hot_base: array<u32>;

// One round of the slice reduction: lo and hi vec4 of every thread of slices 1..SLICES-1.
var<workgroup> partial_lo: array<vec4<u32>, WORKGROUP_SIZE>;
var<workgroup> partial_hi: array<vec4<u32>, WORKGROUP_SIZE>;

// Lane sums of the current flush block: value k of each word goes to a_k (uint32: a0 = lo, a1 = carries).
var<private> a0: vec4<u32>;
var<private> a1: vec4<u32>;
var<private> a2: vec4<u32>;
var<private> a3: vec4<u32>;
// 64-bit totals, lo and hi, per value k of each word.
var<private> l0: vec4<u32>;
var<private> l1: vec4<u32>;
var<private> l2: vec4<u32>;
var<private> l3: vec4<u32>;
var<private> h0: vec4<u32>;
var<private> h1: vec4<u32>;
var<private> h2: vec4<u32>;
var<private> h3: vec4<u32>;

fn accumulate(v: vec4<u32>) {
  if (ELEM_BYTES == 4u) {
    let s = a0 + v;
    a1 += select(vec4<u32>(0u), vec4<u32>(1u), s < v);
    a0 = s;
  } else {
    a0 += v & vec4<u32>(0xffu);
    a1 += (v >> vec4<u32>(8u)) & vec4<u32>(0xffu);
    a2 += (v >> vec4<u32>(16u)) & vec4<u32>(0xffu);
    a3 += v >> vec4<u32>(24u);
  }
}

// Planes: value k of each word is byte k of `lo` plus 256 x byte k of `hi`.
fn accumulate_planes(lo: vec4<u32>, hi: vec4<u32>) {
  let m = vec4<u32>(0xffu);
  let mh = vec4<u32>(0xff00u);
  a0 += (lo & m) + ((hi & m) << vec4<u32>(8u));
  a1 += ((lo >> vec4<u32>(8u)) & m) + (hi & mh);
  a2 += ((lo >> vec4<u32>(16u)) & m) + ((hi >> vec4<u32>(8u)) & mh);
  a3 += (lo >> vec4<u32>(24u)) + ((hi >> vec4<u32>(16u)) & mh);
}

fn carry(sum: vec4<u32>, addend: vec4<u32>) -> vec4<u32> {
  return select(vec4<u32>(0u), vec4<u32>(1u), sum < addend);
}

fn flush() {
  if (ELEM_BYTES == 4u) {
    l0 += a0;
    h0 += a1 + carry(l0, a0);
  } else {
    l0 += a0;
    h0 += carry(l0, a0);
    l1 += a1;
    h1 += carry(l1, a1);
    l2 += a2;
    h2 += carry(l2, a2);
    l3 += a3;
    h3 += carry(l3, a3);
  }
  a0 = vec4<u32>(0u);
  a1 = vec4<u32>(0u);
  a2 = vec4<u32>(0u);
  a3 = vec4<u32>(0u);
}

fn row(i: u32) -> u32 {
  return (pixels[i] - params.row_first_pixel) * params.vec4_per_pixel;
}

// Where a thread's column lies: its segment, and that segment's bitmap word and bit.
struct Segment {
  index: u32,
  word: u32,
  bit: u32,
}

// Planes: the high-plane vec4 of list entry i (row vec4 `at`, column `column`), or zeros when its segment is
// cold.
fn high(i: u32, at: u32, column: u32, seg: Segment) -> vec4<u32> {
  let p = pixels[i];
  let bits = hot[p * params.hot_words_per_pixel + seg.word];
  if (((bits >> seg.bit) & 1u) == 0u) {
    return vec4<u32>(0u);
  }
  if (params.compact == 0u) {
    return resident_hi[at];
  }
  var slot = hot_base[p] + countOneBits(bits & ((1u << seg.bit) - 1u));
  for (var k = 0u; k < seg.word; k++) {
    slot += countOneBits(hot[p * params.hot_words_per_pixel + k]);
  }
  return resident_hi[slot * (params.slot_frames / 16u) + column - seg.index * (params.segment_frames / 16u)];
}

// Adds row entries [i, i + 4) (unrolled, so that 4 loads per thread are in flight).
fn rows4(i: u32, column: u32, seg: Segment) {
  let r0 = row(i) + column;
  let r1 = row(i + 1u) + column;
  let r2 = row(i + 2u) + column;
  let r3 = row(i + 3u) + column;
  let v0 = resident[r0];
  let v1 = resident[r1];
  let v2 = resident[r2];
  let v3 = resident[r3];
  if (ELEM_BYTES == 2u) {
    accumulate_planes(v0, high(i, r0, column, seg));
    accumulate_planes(v1, high(i + 1u, r1, column, seg));
    accumulate_planes(v2, high(i + 2u, r2, column, seg));
    accumulate_planes(v3, high(i + 3u, r3, column, seg));
  } else {
    accumulate(v0);
    accumulate(v1);
    accumulate(v2);
    accumulate(v3);
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
  // Rows per flush block: FLUSH * max value <= 2^32 - 1 (uint32 carries on every add instead).
  let flush_rows = select(select(16843009u, 65537u, ELEM_BYTES == 2u), 0xffffffffu, ELEM_BYTES == 4u);
  let part = (params.list_count + SLICES - 1u) / SLICES;
  var i = params.list_start + min(params.list_count, slice * part);
  var end = params.list_start + min(params.list_count, slice * part + part);
  if (!in_range) {
    end = i;
  }
  // Planes: the column's 16 positions lie in one hot segment.
  let segment = column * 16u / max(params.segment_frames, 1u);
  let seg = Segment(segment, segment / 32u, segment % 32u);
  while (i < end) {
    let stop = select(end, i + flush_rows, end - i > flush_rows);
    while (i + 4u <= stop) {
      rows4(i, column, seg);
      i += 4u;
    }
    while (i < stop) {
      let at = row(i) + column;
      if (ELEM_BYTES == 2u) {
        accumulate_planes(resident[at], high(i, at, column, seg));
      } else {
        accumulate(resident[at]);
      }
      i += 1u;
    }
    flush();
  }

  var lo0 = l0;
  var hi0 = h0;
  var lo1 = l1;
  var hi1 = h1;
  var lo2 = l2;
  var hi2 = h2;
  var lo3 = l3;
  var hi3 = h3;
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
