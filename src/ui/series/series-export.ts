/**
 * Exports of the series panel (DOM-free): the virtual image of every shown acquisition as one NPY stack
 * (float64, shape (acquisitions, scan rows, scan cols): every integer sum below 2^53 is exact) and a JSON
 * record of what made it: the acquisitions in stack order, the mask (runs of pixel indices), where it came
 * from, and the flagged-pixel policy.
 */
import { encodeNpy } from '../../io/npy';
import type { SeriesDetector } from './series-mask';

export const SERIES_EXPORT_VERSION = 1;

/** Runs [first pixel, count] of the mask's nonzero pixels, in pixel order. */
export function maskRuns(mask: ArrayLike<number>): [number, number][] {
  const runs: [number, number][] = [];
  for (let p = 0; p < mask.length; p++) {
    if (!mask[p]) continue;
    const last = runs[runs.length - 1];
    if (last && last[0] + last[1] === p) last[1]++;
    else runs.push([p, 1]);
  }
  return runs;
}

export function seriesStackNpy(
  images: readonly (Float64Array | Uint32Array)[],
  scan: [number, number],
): Uint8Array {
  const n = scan[0] * scan[1];
  const stack = new Float64Array(images.length * n);
  images.forEach((im, i) => {
    stack.set(im.subarray(0, n), i * n);
  });
  return encodeNpy(stack, [images.length, scan[0], scan[1]]);
}

export function seriesExportRecord(o: {
  acquisitions: { index: number; name: string }[];
  scan: [number, number];
  detector: [number, number];
  mask: ArrayLike<number>;
  source: { kind: 'series controls'; shape: SeriesDetector } | { kind: 'detector panel'; detector: string };
  queryMs: number;
}): string {
  return JSON.stringify(
    {
      kind: 'stemflow series virtual images',
      version: SERIES_EXPORT_VERSION,
      stack: {
        file: 'NPY, float64, shape (acquisitions, scan rows, scan cols); exact integer sums',
        shape: [o.acquisitions.length, o.scan[0], o.scan[1]],
      },
      acquisitions: o.acquisitions,
      detector: o.detector,
      mask: {
        pixels: maskRuns(o.mask).reduce((a, r) => a + r[1], 0),
        runs: maskRuns(o.mask),
        source: o.source,
        flagged: "pixels flagged in an acquisition's pixel mask are left out of its sums",
      },
      queryMs: o.queryMs,
    },
    null,
    2,
  );
}
