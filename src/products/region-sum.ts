import { StemflowError } from '../errors';

/**
 * The diffraction pattern summed over a rectangle of scan positions, exact. DOM-free.
 *
 * A scan region holds rows row0..row1 and columns col0..col1 (inclusive, row-major scan). Each of its rows is
 * one run of consecutive frames, so a source reads it in (row1 - row0 + 1) contiguous requests.
 *
 * Exactness: the sums are accumulated in float64, which is exact while every partial sum stays below 2^53.
 * `regionSumBound` is the largest sum the region could reach (frames x the dtype's largest count); a region
 * whose bound reaches 2^53 is refused (it would need over 2^21 uint32 frames) rather than rounded.
 */
export interface ScanRegion {
  row0: number;
  row1: number;
  col0: number;
  col1: number;
}

export function regionFrameCount(r: ScanRegion): number {
  return (r.row1 - r.row0 + 1) * (r.col1 - r.col0 + 1);
}

/** The region with corners in any order, clamped to the scan; null when it misses the scan entirely. */
export function normalizeRegion(
  a: { row: number; col: number },
  b: { row: number; col: number },
  scan: [number, number],
): ScanRegion | null {
  const clamp = (v: number, n: number) => Math.min(n - 1, Math.max(0, Math.floor(v)));
  if (!(scan[0] > 0 && scan[1] > 0)) return null;
  const rows = [a.row, b.row].sort((x, y) => x - y);
  const cols = [a.col, b.col].sort((x, y) => x - y);
  if (rows[1] < 0 || cols[1] < 0 || rows[0] >= scan[0] || cols[0] >= scan[1]) return null;
  return {
    row0: clamp(rows[0], scan[0]),
    row1: clamp(rows[1], scan[0]),
    col0: clamp(cols[0], scan[1]),
    col1: clamp(cols[1], scan[1]),
  };
}

/** The runs of consecutive frame indices covering the region: [first frame, count] per scan row. */
export function regionRuns(r: ScanRegion, scanCols: number): [number, number][] {
  const runs: [number, number][] = [];
  for (let row = r.row0; row <= r.row1; row++) runs.push([row * scanCols + r.col0, r.col1 - r.col0 + 1]);
  return runs;
}

/** Checks a region against the scan shape and the exactness bound; throws a typed error otherwise. */
export function checkRegion(r: ScanRegion, scan: [number, number], maxCount: number): void {
  const ok = (v: number, n: number) => Number.isInteger(v) && v >= 0 && v < n;
  if (!ok(r.row0, scan[0]) || !ok(r.row1, scan[0]) || !ok(r.col0, scan[1]) || !ok(r.col1, scan[1]))
    throw new StemflowError(
      'invalid',
      `The scan region rows ${r.row0}..${r.row1}, columns ${r.col0}..${r.col1} is outside the ${scan[0]} x ${scan[1]} scan`,
    );
  if (r.row1 < r.row0 || r.col1 < r.col0)
    throw new StemflowError(
      'invalid',
      'The scan region is empty (its last row or column comes before its first)',
    );
  if (regionSumBound(r, maxCount) >= 2 ** 53)
    throw new StemflowError(
      'budget',
      `Summing ${regionFrameCount(r)} frames could exceed 2^53 counts per pixel, beyond exact float64 sums`,
    );
}

export function regionSumBound(r: ScanRegion, maxCount: number): number {
  return regionFrameCount(r) * maxCount;
}

/** Adds `count` consecutive frames of `pixels` values each into `target` (per pixel). */
export function addFrames(
  target: Float64Array,
  frames: ArrayLike<number>,
  count: number,
  pixels: number,
): void {
  for (let f = 0; f < count; f++) {
    const base = f * pixels;
    for (let p = 0; p < pixels; p++) target[p] += frames[base + p];
  }
}
