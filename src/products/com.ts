/**
 * Centre of mass (CoM) of each diffraction frame inside a detector mask, the basis of DPC imaging:
 * CoMx = sum(col * I) / sum(I) - cx, CoMy = sum(row * I) / sum(I) - cy, in detector pixels.
 *
 * The weighted sums are exact integers. On the GPU they come from the exact unweighted virtual-image pass by
 * splitting each weight into its bits: sum(w_p I_p) = sum_b 2^b * sum(I_p over pixels whose weight has bit b),
 * so a 192-column detector needs 8 masks per axis. The CPU twin sums the weights directly. The final division
 * is the same float64 operation on the same integers, so both give identical results.
 */
import { maskPixelList } from './frame-stats';

export interface ComSums {
  /** Per scan position: sum(I), sum(col * I), sum(row * I) over the mask's unflagged pixels. */
  total: Float64Array;
  sumX: Float64Array;
  sumY: Float64Array;
}

export interface ComImages {
  /** CoM offset from the reference centre in detector pixels; NaN where the mask saw no counts. */
  comX: Float64Array;
  comY: Float64Array;
}

/** Bits needed for weights 0..n-1. */
export function weightBits(n: number): number {
  return Math.max(1, Math.ceil(Math.log2(Math.max(2, n))));
}

/** The bit masks of the column and row weights inside `mask` (flagged pixels are excluded by the caller). */
export function comBitMasks(
  mask: Uint8Array,
  rows: number,
  cols: number,
): { x: Uint8Array[]; y: Uint8Array[] } {
  const x = Array.from({ length: weightBits(cols) }, () => new Uint8Array(rows * cols));
  const y = Array.from({ length: weightBits(rows) }, () => new Uint8Array(rows * cols));
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      const p = r * cols + c;
      if (!mask[p]) continue;
      for (let b = 0; b < x.length; b++) if ((c >> b) & 1) x[b][p] = 1;
      for (let b = 0; b < y.length; b++) if ((r >> b) & 1) y[b][p] = 1;
    }
  }
  return { x, y };
}

/** Weighted sums from the bit-mask images: sum_b 2^b * image_b (exact: integers below 2^53). */
export function combineBits(images: Float64Array[]): Float64Array {
  const out = new Float64Array(images[0]?.length ?? 0);
  images.forEach((image, b) => {
    const scale = 2 ** b;
    for (let i = 0; i < out.length; i++) out[i] += scale * image[i];
  });
  return out;
}

/** CPU twin: the exact sums straight from decoded frames (values as numbers, frame-major). */
export function comSumsFromFrames(
  frames: ArrayLike<number>,
  rows: number,
  cols: number,
  mask: Uint8Array,
  flagged: Uint8Array | null,
): ComSums {
  const pixels = rows * cols;
  const count = frames.length / pixels;
  const total = new Float64Array(count);
  const sumX = new Float64Array(count);
  const sumY = new Float64Array(count);
  const list = maskPixelList(mask, flagged);
  for (let f = 0; f < count; f++) {
    let t = 0;
    let sx = 0;
    let sy = 0;
    for (const p of list) {
      const v = frames[f * pixels + p];
      t += v;
      sx += (p % cols) * v;
      sy += Math.floor(p / cols) * v;
    }
    total[f] = t;
    sumX[f] = sx;
    sumY[f] = sy;
  }
  return { total, sumX, sumY };
}

/** CoM offsets from the sums, relative to (cx, cy). */
export function comImages({ total, sumX, sumY }: ComSums, cx: number, cy: number): ComImages {
  const comX = new Float64Array(total.length);
  const comY = new Float64Array(total.length);
  for (let i = 0; i < total.length; i++) {
    comX[i] = total[i] > 0 ? sumX[i] / total[i] - cx : Number.NaN;
    comY[i] = total[i] > 0 ? sumY[i] / total[i] - cy : Number.NaN;
  }
  return { comX, comY };
}
