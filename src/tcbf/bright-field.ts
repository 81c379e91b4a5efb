/**
 * Bright-field pixel selection from the mean diffraction pattern (docs/tcbf.md, "Selection"): the disk is found
 * on the 3x3 median of the pattern (an unflagged hot pixel cannot outshine it): pixels at or above `threshold` x
 * its maximum; its centre is the intensity-weighted centroid and its radius sqrt(area / pi). Selected: pixels
 * within radius - margin of the centre that are not flagged, hold counts, and are not hot (a sum above
 * `hotFactor` x the disk level, the maximum of the median pattern). Each selected pixel gets its detector angle (rad, detector frame) and 1 / its
 * mean count, used to normalise its virtual image.
 */
import { StemflowError } from '../errors.ts';
import { median3x3 } from '../products/detector-geometry.ts';

export interface BrightFieldOptions {
  /** Fraction of the maximum of the mean pattern that belongs to the disk (default 0.5). */
  threshold?: number;
  /** Pixels kept inside the disk edge, px (default 0); negative values reach beyond it. */
  margin?: number;
  /** Convergence semi-angle, rad. */
  alpha0: number;
  /** Detector angular sampling, rad per px (default alpha0 / measured disk radius). */
  dTheta?: number;
  /** 1 for pixels flagged by the detector's pixel mask (left out). */
  flagged?: ArrayLike<number> | null;
  /** Pixels whose sum exceeds hotFactor x the disk level (max of the 3x3 median) are left out (default 2). */
  hotFactor?: number;
}

export interface BrightFieldPixels {
  /** Detector pixel indices (row * detCols + col), strictly increasing. */
  pixels: Uint32Array;
  centreRow: number;
  centreCol: number;
  /** Disk radius, px. */
  radius: number;
  dTheta: number;
  /** Detector-frame angles of each selected pixel, rad. */
  alphaRow: Float64Array;
  alphaCol: Float64Array;
  /** frames / (sum of the pixel over the scan). */
  invMean: Float32Array;
}

/** `sums`: the summed diffraction pattern (exact counts over all frames), detRows x detCols. */
export function selectBrightField(
  sums: ArrayLike<number | bigint>,
  detRows: number,
  detCols: number,
  frames: number,
  options: BrightFieldOptions,
): BrightFieldPixels {
  const { threshold = 0.5, margin = 0, alpha0, flagged = null } = options;
  if (sums.length !== detRows * detCols) {
    throw new StemflowError(
      'mismatch',
      `The mean pattern has ${sums.length} values, not ${detRows} x ${detCols}.`,
    );
  }
  if (!(threshold > 0 && threshold < 1)) {
    throw new StemflowError('invalid', `The bright-field threshold must lie in (0, 1), not ${threshold}.`);
  }
  if (!(alpha0 > 0))
    throw new StemflowError('invalid', `The convergence angle must be positive, not ${alpha0}.`);
  const value = Float64Array.from({ length: sums.length }, (_, i) => (flagged?.[i] ? 0 : Number(sums[i])));
  const smooth = median3x3(value, detRows, detCols, flagged ?? undefined).values;
  const hot = options.hotFactor ?? 2;
  let max = 0;
  for (const v of smooth) max = Math.max(max, v);
  if (max <= 0) throw new StemflowError('invalid', 'The mean diffraction pattern holds no counts.');
  let area = 0;
  let weight = 0;
  let sr = 0;
  let sc = 0;
  for (let r = 0; r < detRows; r++) {
    for (let c = 0; c < detCols; c++) {
      const v = smooth[r * detCols + c];
      if (v < threshold * max) continue;
      area++;
      weight += v;
      sr += v * r;
      sc += v * c;
    }
  }
  const centreRow = sr / weight;
  const centreCol = sc / weight;
  const radius = Math.sqrt(area / Math.PI);
  const dTheta = options.dTheta ?? alpha0 / radius;
  const limit = radius - margin;
  const chosen: number[] = [];
  for (let r = 0; r < detRows; r++) {
    for (let c = 0; c < detCols; c++) {
      const i = r * detCols + c;
      const usable = !flagged?.[i] && value[i] > 0 && value[i] <= hot * max;
      if (usable && Math.hypot(r - centreRow, c - centreCol) <= limit) chosen.push(i);
    }
  }
  if (chosen.length < 8) {
    throw new StemflowError(
      'invalid',
      `Only ${chosen.length} bright-field pixels lie within ${limit.toFixed(1)} px of the disk centre; at least 8 are needed.`,
    );
  }
  const pixels = Uint32Array.from(chosen);
  return {
    pixels,
    centreRow,
    centreCol,
    radius,
    dTheta,
    alphaRow: Float64Array.from(pixels, (p) => (Math.floor(p / detCols) - centreRow) * dTheta),
    alphaCol: Float64Array.from(pixels, (p) => ((p % detCols) - centreCol) * dTheta),
    invMean: Float32Array.from(pixels, (p) => frames / value[p]),
  };
}
