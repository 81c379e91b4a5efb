// Exact virtual image from the resident (detector-major) data: for every scan position, the sum over a
// binary mask's pixels as a 64-bit integer (lo, hi u32). Contract: docs/pass-graph.md ("Resident",
// "64-bit counters"); layout: src/gpu/resident-layout.ts; CPU twin: src/kernels/resident-virtual-image.ts.
//
// One dispatch per resident buffer: `pixels[list_start .. list_start + list_count)` are the mask's pixels in
// the bound buffer (global indices, row = pixel - row_first_pixel). Each thread owns one vec4 column of the
// rows (4 words = 4 * VPW consecutive scan positions) and loops over the pixels, reading its 16 bytes of each
// row: a warp reads 512 contiguous bytes per row. The loop is unrolled by 4 rows, so 4 independent loads are
// in flight per thread. Sums stay in u32 lanes for at most FLUSH rows (FLUSH x max value < 2^32), then move
// into 64-bit totals; uint32 values carry on every add. At the end the thread adds its totals to `image`
// (read-modify-write, no atomics: dispatches run in order and each position belongs to one thread).

override ELEM_BYTES: u32 = 2u;
override WORKGROUP_SIZE: u32 = 64u;

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
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> resident: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> pixels: array<u32>;
@group(0) @binding(3) var<storage, read_write> image: array<vec2<u32>>;

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
    let sum = old.x + lo;
    image[position] = vec2<u32>(sum, old.y + hi + select(0u, 1u, sum < lo));
  }
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let column = params.column_first + gid.x;
  if (column >= params.column_end) {
    return;
  }
  // Rows per flush block: FLUSH * max value <= 2^32 - 1 (uint32 carries on every add instead).
  let flush_rows = select(select(16843009u, 65537u, ELEM_BYTES == 2u), 0xffffffffu, ELEM_BYTES == 4u);
  var i = params.list_start;
  let end = params.list_start + params.list_count;
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

  let vpw = 4u / ELEM_BYTES;
  for (var j = 0u; j < 4u; j++) {
    let first = (column * 4u + j) * vpw;
    store(first, l0[j], h0[j]);
    if (vpw > 1u) {
      store(first + 1u, l1[j], h1[j]);
    }
    if (vpw > 2u) {
      store(first + 2u, l2[j], h2[j]);
      store(first + 3u, l3[j], h3[j]);
    }
  }
}
