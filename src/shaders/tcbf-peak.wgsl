// tcBF: the cross-correlation peak of each image (packed pairs: image j is the real part of complex slot j / 2
// when j is even, its imaginary part when odd; the pair's correlations come from one inverse FFT): the maximum in a
// box of +-radius (wrapped) around the expected position rounded (floor(x + 0.5)), ties to the lowest index,
// then a three-point parabola per axis. Output (row, col, value, found) per image; row/col are signed offsets
// in (-rows/2, rows/2]. One workgroup per image. CPU twin: src/tcbf/kernels/tcbf-peak.ts.

override WORKGROUP_SIZE: u32 = 256u;

struct Params {
  // Index of the dispatch's first image in `expected` / `peaks`; images in `corr` start at 0.
  image_first: u32,
  image_count: u32,
  rows: u32,
  cols: u32,
  radius_rows: u32,
  radius_cols: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
// Complex slots as float pairs (re, im).
@group(0) @binding(1) var<storage, read> corr: array<f32>;
@group(0) @binding(2) var<storage, read> expected: array<vec2<f32>>;
@group(0) @binding(3) var<storage, read_write> peaks: array<vec4<f32>>;

var<workgroup> best_value: array<f32, WORKGROUP_SIZE>;
var<workgroup> best_index: array<u32, WORKGROUP_SIZE>;

fn wrap(v: i32, n: u32) -> u32 {
  let m = v % i32(n);
  return u32(select(m, m + i32(n), m < 0));
}

fn better(v: f32, i: u32, bv: f32, bi: u32) -> bool {
  return v > bv || (v == bv && i < bi);
}

fn parabola(a: f32, b: f32, c: f32) -> vec2<f32> {
  let d = a - 2.0 * b + c;
  if (!(d < 0.0)) {
    return vec2<f32>(0.0, 0.0);
  }
  let x = 0.5 * (a - c) / d;
  return select(vec2<f32>(0.0, 0.0), vec2<f32>(x, 1.0), abs(x) <= 1.0);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  if (wid.x >= params.image_count) {
    return;
  }
  let j = wid.x;
  let hw = params.rows * params.cols;
  // Float index of element 0 of this image's part.
  let base = 2u * (j >> 1u) * hw + (j & 1u);
  let e = expected[params.image_first + j];
  let er = i32(floor(e.x + 0.5));
  let ec = i32(floor(e.y + 0.5));
  let width = 2u * params.radius_cols + 1u;
  let total = (2u * params.radius_rows + 1u) * width;
  var bv = bitcast<f32>(0xff7fffffu);
  var bi = 0xffffffffu;
  for (var k = lid; k < total; k += WORKGROUP_SIZE) {
    let dr = i32(k / width) - i32(params.radius_rows);
    let dc = i32(k % width) - i32(params.radius_cols);
    let idx = wrap(er + dr, params.rows) * params.cols + wrap(ec + dc, params.cols);
    let v = corr[base + 2u * idx];
    if (better(v, idx, bv, bi)) {
      bv = v;
      bi = idx;
    }
  }
  best_value[lid] = bv;
  best_index[lid] = bi;
  workgroupBarrier();
  for (var s = WORKGROUP_SIZE / 2u; s > 0u; s >>= 1u) {
    if (lid < s && better(best_value[lid + s], best_index[lid + s], best_value[lid], best_index[lid])) {
      best_value[lid] = best_value[lid + s];
      best_index[lid] = best_index[lid + s];
    }
    workgroupBarrier();
  }
  if (lid != 0u) {
    return;
  }
  let b = best_value[0];
  let i = best_index[0];
  let r = i32(i / params.cols);
  let c = i32(i % params.cols);
  let pr = parabola(
    corr[base + 2u * (wrap(r - 1, params.rows) * params.cols + u32(c))],
    b,
    corr[base + 2u * (wrap(r + 1, params.rows) * params.cols + u32(c))],
  );
  let pc = parabola(
    corr[base + 2u * (u32(r) * params.cols + wrap(c - 1, params.cols))],
    b,
    corr[base + 2u * (u32(r) * params.cols + wrap(c + 1, params.cols))],
  );
  let sr = select(r, r - i32(params.rows), r > i32(params.rows / 2u));
  let sc = select(c, c - i32(params.cols), c > i32(params.cols / 2u));
  peaks[params.image_first + j] = vec4<f32>(f32(sr) + pr.x, f32(sc) + pc.x, b, pr.y * pc.y);
}
