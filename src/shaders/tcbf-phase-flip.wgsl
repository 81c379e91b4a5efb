// tcBF: the phase-flip filter applied to an upsampled spectrum: out(Q) = acc(Q) x sign(sin chi_even(q)),
// q = signed Q / extent (1/Å), chi = 2 pi W(lambda q) / lambda, W = sum value alpha^power cos|sin(m phi) over the
// even-order terms. The sign of sin(2 pi t), t = W / lambda turns, comes from fract(t) (no trigonometry of a
// large angle). One thread per Q. CPU twin: src/tcbf/kernels/tcbf-phase-flip.ts.

override WORKGROUP_SIZE: u32 = 256u;

struct Params {
  fine_rows: u32,
  fine_cols: u32,
  extent_rows: f32,
  extent_cols: f32,
  lambda: f32,
  term_count: u32,
  thread_first: u32,
  thread_end: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> acc: array<vec2<f32>>;
// Per term: power n + 1, m, 1 for a sine part, C / (n + 1).
@group(0) @binding(2) var<storage, read> terms: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> out: array<vec2<f32>>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let q = params.thread_first + wid.x * WORKGROUP_SIZE + lid;
  if (q >= params.thread_end) {
    return;
  }
  let r = q / params.fine_cols;
  let c = q % params.fine_cols;
  let sr = f32(select(i32(r), i32(r) - i32(params.fine_rows), r >= params.fine_rows / 2u));
  let sc = f32(select(i32(c), i32(c) - i32(params.fine_cols), c >= params.fine_cols / 2u));
  let ar = params.lambda * sr / params.extent_rows;
  let ac = params.lambda * sc / params.extent_cols;
  let alpha = sqrt(ar * ar + ac * ac);
  // cos(m phi), sin(m phi) by angle addition and alpha^k by products (no large-angle trigonometry).
  var w = 0.0;
  if (alpha > 0.0) {
    let c1 = ar / alpha;
    let s1 = ac / alpha;
    var cm: array<f32, 7>;
    var sm: array<f32, 7>;
    var an: array<f32, 7>;
    cm[0] = 1.0;
    sm[0] = 0.0;
    an[0] = 1.0;
    for (var k = 1u; k < 7u; k++) {
      cm[k] = cm[k - 1u] * c1 - sm[k - 1u] * s1;
      sm[k] = sm[k - 1u] * c1 + cm[k - 1u] * s1;
      an[k] = an[k - 1u] * alpha;
    }
    for (var i = 0u; i < params.term_count; i++) {
      let t = terms[i];
      let m = u32(t.y);
      w += t.w * an[u32(t.x)] * select(cm[m], sm[m], t.z != 0.0);
    }
  }
  let f = fract(w / params.lambda);
  let sign = select(select(-1.0, 1.0, f < 0.5), 0.0, f == 0.0 || f == 0.5);
  out[q] = acc[q] * sign;
}
