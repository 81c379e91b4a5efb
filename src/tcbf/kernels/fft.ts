/**
 * CPU twin of src/shaders/fft.wgsl: batched radix-2 decimation-in-time FFT of complex lines (interleaved
 * re, im), each of length n = 2^k. Line l of a dispatch starts at
 *   offset + floor(l / linesPerImage) * imageStride + (l mod linesPerImage) * lineStep
 * and its elements are `elemStride` apart (all in complex elements), so one routine does the rows (lineStep n,
 * stride 1) and the columns (lineStep 1, stride cols) of a batch of images. Forward kernel exp(-2 pi i jk/n);
 * the inverse uses exp(+2 pi i jk/n); the output is multiplied by `scale`. float64 here, float32 on the GPU.
 */

export interface FftLines {
  n: number;
  lineFirst: number;
  lineCount: number;
  linesPerImage: number;
  imageStride: number;
  lineStep: number;
  elemStride: number;
  offset: number;
  inverse: boolean;
  scale: number;
}

/** exp(-2 pi i j / n) for j < n / 2, interleaved (computed in float64; the GPU gets it rounded to float32). */
export function twiddles(n: number): Float64Array {
  const out = new Float64Array(n);
  for (let j = 0; j < n / 2; j++) {
    out[2 * j] = Math.cos((2 * Math.PI * j) / n);
    out[2 * j + 1] = -Math.sin((2 * Math.PI * j) / n);
  }
  return out;
}

export function bitReverse(i: number, bits: number): number {
  let r = 0;
  for (let b = 0; b < bits; b++) r |= ((i >> b) & 1) << (bits - 1 - b);
  return r;
}

export function fftLines(data: Float64Array, job: FftLines, tw: Float64Array = twiddles(job.n)): void {
  const { n } = job;
  const bits = Math.log2(n);
  const re = new Float64Array(n);
  const im = new Float64Array(n);
  const sign = job.inverse ? -1 : 1;
  for (let l = job.lineFirst; l < job.lineFirst + job.lineCount; l++) {
    const base =
      job.offset +
      Math.floor(l / job.linesPerImage) * job.imageStride +
      (l % job.linesPerImage) * job.lineStep;
    for (let i = 0; i < n; i++) {
      const src = 2 * (base + bitReverse(i, bits) * job.elemStride);
      re[i] = data[src];
      im[i] = data[src + 1];
    }
    for (let half = 1; half < n; half <<= 1) {
      const twStep = n / (2 * half);
      for (let j = 0; j < n / 2; j++) {
        const pos = j % half;
        const a = (j - pos) * 2 + pos;
        const b = a + half;
        const wr = tw[2 * pos * twStep];
        const wi = sign * tw[2 * pos * twStep + 1];
        const tr = wr * re[b] - wi * im[b];
        const ti = wr * im[b] + wi * re[b];
        re[b] = re[a] - tr;
        im[b] = im[a] - ti;
        re[a] += tr;
        im[a] += ti;
      }
    }
    for (let i = 0; i < n; i++) {
      const dst = 2 * (base + i * job.elemStride);
      data[dst] = re[i] * job.scale;
      data[dst + 1] = im[i] * job.scale;
    }
  }
}

/**
 * 2-D FFT of `count` rows x cols images starting at complex element `offset`: the rows pass, then the columns
 * pass (the order the GPU records them). The inverse is scaled by 1 / (rows cols).
 */
export function fft2dBatch(
  data: Float64Array,
  offset: number,
  count: number,
  rows: number,
  cols: number,
  inverse: boolean,
): void {
  const hw = rows * cols;
  fftLines(data, rowPass(offset, count, rows, cols, inverse));
  fftLines(data, columnPass(offset, count, rows, cols, inverse, inverse ? 1 / hw : 1));
}

export function rowPass(
  offset: number,
  count: number,
  rows: number,
  cols: number,
  inverse: boolean,
): FftLines {
  return {
    n: cols,
    lineFirst: 0,
    lineCount: count * rows,
    linesPerImage: rows,
    imageStride: rows * cols,
    lineStep: cols,
    elemStride: 1,
    offset,
    inverse,
    scale: 1,
  };
}

export function columnPass(
  offset: number,
  count: number,
  rows: number,
  cols: number,
  inverse: boolean,
  scale: number,
): FftLines {
  return {
    n: rows,
    lineFirst: 0,
    lineCount: count * cols,
    linesPerImage: cols,
    imageStride: rows * cols,
    lineStep: 1,
    elemStride: cols,
    offset,
    inverse,
    scale,
  };
}
