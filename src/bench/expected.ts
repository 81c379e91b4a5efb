import { flaggedFromMask } from '../products/frame-stats';
import type { SyntheticAcquisition } from './synthetic';

/**
 * Exact expected results of loading a synthetic acquisition, computed on the CPU from its distinct frames
 * and how often the scan repeats each: the benchmark checks every GPU number against these.
 */
export interface ExpectedLoad {
  frameTotals: (frame: number) => number;
  maxValue: number;
  countAbove255: bigint;
  histogram: bigint[];
  dpSums: Float64Array;
  /** Virtual image value of `mask` at scan frame i. */
  imageOf: (mask: Uint8Array) => (frame: number) => number;
}

export function expectedLoad(acq: SyntheticAcquisition): ExpectedLoad {
  const flagged = flaggedFromMask(acq.pixelMask)!;
  const k = acq.chunks.length;
  const multiplicity = new Float64Array(k);
  for (let i = 0; i < acq.frames; i++) multiplicity[acq.chunkOf(i)]++;
  const totals = new Float64Array(k);
  const histogram = new Array<bigint>(257).fill(0n);
  const dpSums = new Float64Array(acq.values[0].length);
  let maxValue = 0;
  let above = 0n;
  acq.values.forEach((frame, j) => {
    const m = multiplicity[j];
    const hist = new Float64Array(257);
    let total = 0;
    for (let p = 0; p < frame.length; p++) {
      const v = frame[p];
      dpSums[p] += m * v;
      if (flagged[p]) continue;
      total += v;
      hist[v > 255 ? 256 : v]++;
      if (m > 0 && v > maxValue) maxValue = v;
    }
    totals[j] = total;
    for (let b = 0; b < 257; b++) histogram[b] += BigInt(hist[b]) * BigInt(m);
    above += BigInt(hist[256]) * BigInt(m);
  });
  return {
    frameTotals: (i) => totals[acq.chunkOf(i)],
    maxValue,
    countAbove255: above,
    histogram,
    dpSums,
    imageOf: (mask) => {
      const sums = acq.values.map((frame) => {
        let s = 0;
        for (let p = 0; p < frame.length; p++) if (mask[p] && !flagged[p]) s += frame[p];
        return s;
      });
      return (i) => sums[acq.chunkOf(i)];
    },
  };
}
