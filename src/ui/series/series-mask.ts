import { annulus, disk, regionMask } from '../../products/detector-geometry';

/** The series panel's detector: a preset shape about a centre, with inner and outer radii in pixels. */
export interface SeriesDetector {
  preset: 'bf' | 'abf' | 'adf' | 'all';
  cx: number;
  cy: number;
  inner: number;
  outer: number;
}

/** Default radii for a detector of `rows` x `cols`: BF disk r/8, ABF r/16..r/8, ADF 1.5 r/8..0.48 rows. */
export function defaultSeriesDetector(
  rows: number,
  cols: number,
  preset: SeriesDetector['preset'],
): SeriesDetector {
  const bf = rows / 8;
  const common = { preset, cx: cols / 2, cy: rows / 2 };
  if (preset === 'bf') return { ...common, inner: 0, outer: bf };
  if (preset === 'abf') return { ...common, inner: bf / 2, outer: bf };
  if (preset === 'adf') return { ...common, inner: bf * 1.5, outer: rows * 0.48 };
  return { ...common, inner: 0, outer: Math.hypot(rows, cols) };
}

/** The binary mask (1 = counted) of the detector; the series leaves flagged pixels out itself. */
export function seriesMask(d: SeriesDetector, rows: number, cols: number): Uint8Array {
  if (d.preset === 'all') return new Uint8Array(rows * cols).fill(1);
  if (d.inner <= 0) return regionMask(disk(d.cx, d.cy, d.outer), rows, cols);
  return regionMask(annulus(d.cx, d.cy, d.inner, d.outer), rows, cols);
}
