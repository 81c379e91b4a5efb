// Batched radix-2 decimation-in-time FFT of complex lines, one workgroup per line, the line held in workgroup
// memory (N <= 1024). CPU twin: src/tcbf/kernels/fft.ts (same line addressing, same butterfly order).
//
// Line l of the dispatch (l = line_first + workgroup) starts at element
//   offset + (l / lines_per_image) * image_stride + (l % lines_per_image) * line_step
// and its N elements are elem_stride apart: rows (line_step N, stride 1) or columns (line_step 1, stride cols)
// of a batch of images. Twiddles exp(-2 pi i j / N), j < N / 2, come from the host (float64 rounded to float32);
// the inverse conjugates them. The output is multiplied by `scale`.

override N: u32 = 512u;
override LOG_N: u32 = 9u;
override WORKGROUP_SIZE: u32 = 256u;

struct Params {
  line_first: u32,
  line_count: u32,
  lines_per_image: u32,
  image_stride: u32,
  line_step: u32,
  elem_stride: u32,
  offset: u32,
  inverse: u32,
  scale: f32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read_write> data: array<vec2<f32>>;
@group(0) @binding(2) var<storage, read> twiddles: array<vec2<f32>>;

var<workgroup> line: array<vec2<f32>, N>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  if (wid.x >= params.line_count) {
    return;
  }
  let l = params.line_first + wid.x;
  let base = params.offset + (l / params.lines_per_image) * params.image_stride +
    (l % params.lines_per_image) * params.line_step;
  for (var i = lid; i < N; i += WORKGROUP_SIZE) {
    line[i] = data[base + (reverseBits(i) >> (32u - LOG_N)) * params.elem_stride];
  }
  workgroupBarrier();
  let sign = select(1.0, -1.0, params.inverse != 0u);
  for (var half = 1u; half < N; half <<= 1u) {
    let tw_step = N / (2u * half);
    for (var j = lid; j < N / 2u; j += WORKGROUP_SIZE) {
      let pos = j % half;
      let a = (j - pos) * 2u + pos;
      let b = a + half;
      let w0 = twiddles[pos * tw_step];
      let w = vec2<f32>(w0.x, sign * w0.y);
      let x = line[b];
      let t = vec2<f32>(w.x * x.x - w.y * x.y, w.x * x.y + w.y * x.x);
      let y = line[a];
      line[b] = y - t;
      line[a] = y + t;
    }
    workgroupBarrier();
  }
  for (var i = lid; i < N; i += WORKGROUP_SIZE) {
    data[base + i * params.elem_stride] = line[i] * params.scale;
  }
}
