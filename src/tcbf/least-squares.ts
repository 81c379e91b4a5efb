/**
 * Linear least squares by Householder QR (columns scaled to unit norm first), with the parameter covariance
 * sigma^2 (G^T G)^-1, sigma^2 = RSS / (rows - cols). Deterministic: a fixed order of operations in float64.
 * Because QR is column by column, the residual of every leading subset of columns comes for free
 * (`prefixRss`): the aberration fit orders its parameters by radial order.
 */
import { StemflowError } from '../errors.ts';

export interface LeastSquares {
  x: Float64Array;
  /** Standard deviations of x. */
  sigma: Float64Array;
  /** Residual sum of squares. */
  rss: number;
  /** RSS of the fit to the first j + 1 columns only. */
  prefixRss: Float64Array;
  /** |R_jj| of the column-scaled problem; max/min over a prefix is a cheap condition estimate. */
  diagonal: Float64Array;
  /** max |R_ii| / min |R_ii| over all columns. */
  condition: number;
}

/** Solves min |A x - y| for A (rows x cols, row-major). */
export function leastSquares(A: Float64Array, y: Float64Array, rows: number, cols: number): LeastSquares {
  if (rows <= cols) {
    throw new StemflowError(
      'invalid',
      `A least-squares fit of ${cols} parameters needs more than ${rows} equations.`,
    );
  }
  // Column-major copy, each column scaled to unit norm.
  const a = new Float64Array(rows * cols);
  const scale = new Float64Array(cols);
  for (let j = 0; j < cols; j++) {
    let s = 0;
    for (let i = 0; i < rows; i++) s += A[i * cols + j] ** 2;
    scale[j] = s > 0 ? Math.sqrt(s) : 1;
    for (let i = 0; i < rows; i++) a[j * rows + i] = A[i * cols + j] / scale[j];
  }
  const b = Float64Array.from(y);
  let yy = 0;
  for (const v of b) yy += v * v;
  const diagonal = new Float64Array(cols);
  const prefixRss = new Float64Array(cols);
  const v = new Float64Array(rows);
  let explained = 0;
  for (let k = 0; k < cols; k++) {
    const ck = k * rows;
    let norm = 0;
    for (let i = k; i < rows; i++) norm += a[ck + i] ** 2;
    norm = Math.sqrt(norm);
    if (norm === 0)
      throw new StemflowError('invalid', `Least squares: parameter ${k} is not constrained by the data.`);
    const alpha = a[ck + k] > 0 ? -norm : norm;
    for (let i = k; i < rows; i++) v[i] = a[ck + i];
    v[k] -= alpha;
    let vv = 0;
    for (let i = k; i < rows; i++) vv += v[i] * v[i];
    for (let j = k; j < cols; j++) {
      const cj = j * rows;
      let d = 0;
      for (let i = k; i < rows; i++) d += v[i] * a[cj + i];
      const f = (2 * d) / vv;
      for (let i = k; i < rows; i++) a[cj + i] -= f * v[i];
    }
    let d = 0;
    for (let i = k; i < rows; i++) d += v[i] * b[i];
    const f = (2 * d) / vv;
    for (let i = k; i < rows; i++) b[i] -= f * v[i];
    diagonal[k] = Math.abs(a[ck + k]);
    explained += b[k] * b[k];
    prefixRss[k] = Math.max(0, yy - explained);
  }
  let rss = 0;
  for (let i = cols; i < rows; i++) rss += b[i] * b[i];
  const r = (i: number, j: number) => a[j * rows + i];
  const x = new Float64Array(cols);
  for (let i = cols - 1; i >= 0; i--) {
    let s = b[i];
    for (let j = i + 1; j < cols; j++) s -= r(i, j) * x[j];
    x[i] = s / r(i, i);
  }
  // R^-1 (upper triangular), column by column.
  const inv = new Float64Array(cols * cols);
  for (let c = 0; c < cols; c++) {
    for (let i = c; i >= 0; i--) {
      let s = i === c ? 1 : 0;
      for (let j = i + 1; j <= c; j++) s -= r(i, j) * inv[j * cols + c];
      inv[i * cols + c] = s / r(i, i);
    }
  }
  const variance = rss / (rows - cols);
  const sigma = new Float64Array(cols);
  for (let i = 0; i < cols; i++) {
    let s = 0;
    for (let j = i; j < cols; j++) s += inv[i * cols + j] ** 2;
    sigma[i] = Math.sqrt(variance * s) / scale[i];
    x[i] /= scale[i];
  }
  prefixRss[cols - 1] = rss;
  return { x, sigma, rss, prefixRss, diagonal, condition: conditionOf(diagonal, cols) };
}

/** max / min of the first `count` diagonal entries. */
export function conditionOf(diagonal: Float64Array, count: number): number {
  let lo = Number.POSITIVE_INFINITY;
  let hi = 0;
  for (let i = 0; i < count; i++) {
    lo = Math.min(lo, diagonal[i]);
    hi = Math.max(hi, diagonal[i]);
  }
  return hi / lo;
}
