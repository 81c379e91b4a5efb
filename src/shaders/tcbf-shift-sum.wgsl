// tcBF: the sum of shifted bright-field spectra on the factor-upsampled grid. For output frequency Q of the
// fr x fc grid (signed Qs), q = Q mod (rows, cols):
//   acc(Q) (+)= sum_j w_j S_j(q) exp(-2 pi i phi_j),  phi_j = fract(fract(Qs_r s_r / rows) + fract(Qs_c s_c / cols))
// with (s_r, s_c, w_j) from `shifts` (scan px). Each cycle term is reduced modulo 1 before the multiplication by
// 2 pi, so large shifts keep float32 phase precision. Spectra are packed pairs: slot p holds Z = S_2p + i S_2p+1,
// so with Zm = Z(-q): S_2p = (Z + conj Zm) / 2, S_2p+1 = (Z - conj Zm) / 2i. One thread per Q; one dispatch per spectra buffer,
// adding into `acc` in a fixed order (no atomics: bit-identical repeats). CPU twin: src/tcbf/kernels/tcbf-shift-sum.ts.

override WORKGROUP_SIZE: u32 = 256u;

struct Params {
  // Images [0, image_count) of the bound spectra buffer (slots [0, ceil(image_count / 2))); their shifts start
  // at shift_first.
  image_count: u32,
  shift_first: u32,
  rows: u32,
  cols: u32,
  fine_rows: u32,
  fine_cols: u32,
  clear: u32,
  thread_first: u32,
  thread_end: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> spectra: array<vec2<f32>>;
@group(0) @binding(2) var<storage, read> shifts: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> acc: array<vec2<f32>>;

// (cos 2 pi x, sin 2 pi x) to about float32 rounding: x reduced to [-1/4, 1/4] turns by symmetry, then Taylor
// series (error < 6e-8 at pi/2). The builtin sin/cos may err by 2^-11 (Vulkan), too coarse for summing
// thousands of images.
fn cos_sin_turns(x: f32) -> vec2<f32> {
  var t = x - floor(x + 0.5);
  var sign_c = 1.0;
  if (t > 0.25) {
    t = 0.5 - t;
    sign_c = -1.0;
  } else if (t < -0.25) {
    t = -0.5 - t;
    sign_c = -1.0;
  }
  let a = 6.283185307179586 * t;
  let a2 = a * a;
  let s = a * (1.0 + a2 * (-1.0 / 6.0 + a2 * (1.0 / 120.0 + a2 * (-1.0 / 5040.0 + a2 * (1.0 / 362880.0 +
    a2 * (-1.0 / 39916800.0))))));
  let c = 1.0 + a2 * (-0.5 + a2 * (1.0 / 24.0 + a2 * (-1.0 / 720.0 + a2 * (1.0 / 40320.0 + a2 * (-1.0 / 3628800.0 +
    a2 * (1.0 / 479001600.0))))));
  return vec2<f32>(sign_c * c, s);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let q = params.thread_first + wid.x * WORKGROUP_SIZE + lid;
  if (q >= params.thread_end) {
    return;
  }
  let qr = q / params.fine_cols;
  let qc = q % params.fine_cols;
  let sr = f32(select(i32(qr), i32(qr) - i32(params.fine_rows), qr >= params.fine_rows / 2u));
  let sc = f32(select(i32(qc), i32(qc) - i32(params.fine_cols), qc >= params.fine_cols / 2u));
  let src = (qr % params.rows) * params.cols + (qc % params.cols);
  let mirror = ((params.rows - qr % params.rows) % params.rows) * params.cols +
    ((params.cols - qc % params.cols) % params.cols);
  let hw = params.rows * params.cols;
  var sum = select(acc[q], vec2<f32>(0.0, 0.0), params.clear != 0u);
  for (var j = 0u; j < params.image_count; j++) {
    let s = shifts[params.shift_first + j];
    if (s.z == 0.0) {
      continue;
    }
    let phi = fract(fract(sr * s.x / f32(params.rows)) + fract(sc * s.y / f32(params.cols)));
    let cs = cos_sin_turns(phi);
    let c = cs.x;
    let n = -cs.y;
    let z = spectra[(j >> 1u) * hw + src];
    let m = spectra[(j >> 1u) * hw + mirror];
    let a = select(0.5 * vec2<f32>(z.x + m.x, z.y - m.y), 0.5 * vec2<f32>(z.y + m.y, m.x - z.x), (j & 1u) == 1u);
    sum += s.z * vec2<f32>(a.x * c - a.y * n, a.x * n + a.y * c);
  }
  acc[q] = sum;
}
