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
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> resident: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> pixels: array<u32>;
@group(0) @binding(3) var<storage, read_write> image: array<vec2<u32>>;

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
  } else if (ELEM_BYTES == 2u) {
    a0 += v & vec4<u32>(0xffffu);
    a1 += v >> vec4<u32>(16u);
  } else {
    a0 += v & vec4<u32>(0xffu);
    a1 += (v >> vec4<u32>(8u)) & vec4<u32>(0xffu);
    a2 += (v >> vec4<u32>(16u)) & vec4<u32>(0xffu);
    a3 += v >> vec4<u32>(24u);
  }
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
    if (ELEM_BYTES == 1u) {
      l2 += a2;
      h2 += carry(l2, a2);
      l3 += a3;
      h3 += carry(l3, a3);
    }
  }
  a0 = vec4<u32>(0u);
  a1 = vec4<u32>(0u);
  a2 = vec4<u32>(0u);
  a3 = vec4<u32>(0u);
}

fn row(i: u32) -> u32 {
  return (pixels[i] - params.row_first_pixel) * params.vec4_per_pixel;
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
  while (i < end) {
    let stop = select(end, i + flush_rows, end - i > flush_rows);
    while (i + 4u <= stop) {
      let v0 = resident[row(i) + column];
      let v1 = resident[row(i + 1u) + column];
      let v2 = resident[row(i + 2u) + column];
      let v3 = resident[row(i + 3u) + column];
      accumulate(v0);
      accumulate(v1);
      accumulate(v2);
      accumulate(v3);
      i += 4u;
    }
    while (i < stop) {
      accumulate(resident[row(i) + column]);
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
  let vpw = 4u / ELEM_BYTES;
  if (SLICES > 1u) {
    reduce_slices(lid, &lo0, &hi0);
    if (vpw > 1u) {
      reduce_slices(lid, &lo1, &hi1);
    }
    if (vpw > 2u) {
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
    }
    if (vpw > 2u) {
      store(first + 2u, lo2[j], hi2[j]);
      store(first + 3u, lo3[j], hi3[j]);
    }
  }
}
