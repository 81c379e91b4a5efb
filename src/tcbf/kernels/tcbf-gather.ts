/**
 * CPU twin of src/shaders/tcbf-gather.wgsl: the normalised virtual image of each listed bright-field pixel,
 * read from the resident detector-major rows, on a rows x cols grid (a power of two in each direction, at least
 * the scan): value = (count x invMean - 1) x taperRow[r] x taperCol[c] for r < scanRows, c < scanCols, and 0 in
 * the padding (taper entries there are 0). Images are packed in pairs: image 2p is the real part and image
 * 2p + 1 the imaginary part of complex slot p (0 when the count is odd), so one complex FFT transforms two
 * real images (docs/tcbf.md, "Packed pairs").
 */
import type { ResidentLayout } from '../../gpu/resident-layout.ts';
import { residentValueAt } from '../../kernels/detector-transpose.ts';

export interface GatherJob {
  layout: ResidentLayout;
  /** Resident words per buffer (Uint32Array per GPU buffer, layout.bufferBytes order). */
  resident: readonly Uint32Array[];
  /** Global detector pixel of each image. */
  pixels: ArrayLike<number>;
  invMean: Float32Array;
  scanRows: number;
  scanCols: number;
  rows: number;
  cols: number;
  taperRow: Float32Array;
  taperCol: Float32Array;
}

export function tcbfGather(job: GatherJob): Float64Array {
  const { rows, cols, scanRows, scanCols } = job;
  const hw = rows * cols;
  const out = new Float64Array(2 * Math.ceil(job.pixels.length / 2) * hw);
  for (let j = 0; j < job.pixels.length; j++) {
    const p = job.pixels[j];
    for (let r = 0; r < scanRows; r++) {
      for (let c = 0; c < scanCols; c++) {
        const count = residentValueAt(job.layout, job.resident, p, r * scanCols + c);
        out[2 * ((j >> 1) * hw + r * cols + c) + (j & 1)] =
          (count * job.invMean[j] - 1) * job.taperRow[r] * job.taperCol[c];
      }
    }
  }
  return out;
}

/** sin^2 edge taper of `width` px over `n` samples, zero from `n` to `padded`. */
export function edgeTaper(n: number, padded: number, width: number): Float32Array {
  const out = new Float32Array(padded);
  for (let i = 0; i < n; i++) {
    const d = Math.min(i + 0.5, n - i - 0.5);
    out[i] = width > 0 && d < width ? Math.sin((Math.PI / 2) * (d / width)) ** 2 : 1;
  }
  return out;
}
