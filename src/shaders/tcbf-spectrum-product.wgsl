// tcBF: dst[t] = src[src_offset + t] x factor[t % hw] (complex) for t in [thread_first, thread_end): a batch of
// spectra times one spectrum (cross-correlation S_k conj(R) w, or a filter such as the phase flip).
// CPU twin: src/tcbf/kernels/tcbf-spectrum-product.ts.

override WORKGROUP_SIZE: u32 = 256u;

struct Params {
  src_offset: u32,
  hw: u32,
  thread_first: u32,
  thread_end: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> src: array<vec2<f32>>;
@group(0) @binding(2) var<storage, read> factor: array<vec2<f32>>;
@group(0) @binding(3) var<storage, read_write> dst: array<vec2<f32>>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let t = params.thread_first + wid.x * WORKGROUP_SIZE + lid;
  if (t >= params.thread_end) {
    return;
  }
  let a = src[params.src_offset + t];
  let f = factor[t % params.hw];
  dst[t] = vec2<f32>(a.x * f.x - a.y * f.y, a.x * f.y + a.y * f.x);
}
