/**
 * The aberration fit (docs/tcbf.md, "Fit"): measured parallax shifts s_k (Å, scan frame) of the bright-field
 * pixels at detector angles alpha_k are explained by s = grad W(Rot(theta) Flip alpha_k). For a fixed rotation
 * theta and transpose the coefficients are linear (least squares); theta is found by a global search
 * (`trials` angles for each transpose, first-order model), then refined by Newton steps on the residual of the
 * full model, and the coefficients are fitted order by order (C01+C1, +C2, ... up to `maxOrder`).
 */
import { StemflowError } from '../errors.ts';
import { conditionOf, leastSquares } from './least-squares.ts';
import { type Coefficients, gradientRows, type Parameter, parameters, toScanFrame } from './optics.ts';

export interface ShiftSamples {
  /** Detector-frame angles, rad. */
  alphaRow: Float64Array;
  alphaCol: Float64Array;
  /** Measured shifts, Å, scan frame. */
  shiftRow: Float64Array;
  shiftCol: Float64Array;
  /** 1 where the shift was measured. */
  valid: Uint8Array;
}

export interface OrderFit {
  order: number;
  parameters: number;
  /** RMS of the residual shift vectors, Å. */
  rms: number;
  condition: number;
}

export interface AberrationFit {
  /** Detector-to-scan rotation theta, rad, |theta| <= pi/2. */
  rotation: number;
  transpose: boolean;
  coefficients: Coefficients;
  /** One standard deviation per coefficient, Å. */
  sigma: Coefficients;
  orders: OrderFit[];
  /** Residual (measured - model) shifts, Å; NaN where not used. */
  residualRow: Float64Array;
  residualCol: Float64Array;
  /** Pixels used (valid and not rejected as outliers). */
  used: number;
  rms: number;
}

export interface FitOptions {
  maxOrder?: number;
  /** Global search: angles tried over [-pi/2, pi/2) (default 200). */
  trials?: number;
  /** Given rotation and transpose (skips the search); the Newton refinement still runs unless `fixRotation`. */
  rotation?: number;
  transpose?: boolean;
  fixRotation?: boolean;
}

/** Rows of the design matrix for the given rotation: 2 per pixel (row shift, col shift). */
function design(
  samples: ShiftSamples,
  used: Uint32Array,
  params: Parameter[],
  rotation: number,
  transpose: boolean,
) {
  const p = params.length;
  const A = new Float64Array(2 * used.length * p);
  const y = new Float64Array(2 * used.length);
  const row = new Float64Array(p);
  const col = new Float64Array(p);
  used.forEach((k, i) => {
    const [ar, ac] = toScanFrame(samples.alphaRow[k], samples.alphaCol[k], rotation, transpose);
    gradientRows(params, ar, ac, row, col);
    A.set(row, 2 * i * p);
    A.set(col, (2 * i + 1) * p);
    y[2 * i] = samples.shiftRow[k];
    y[2 * i + 1] = samples.shiftCol[k];
  });
  return { A, y };
}

/**
 * RSS(theta) of the best linear fit for every rotation at O(p^2) each. With beta = Rot(theta) alpha,
 * grad W(beta) = Rot(theta) grad W'(alpha), where W' has every (a, b) pair rotated by m theta (a bijection of
 * the parameters of each order). So RSS(theta) = min |Rot(-theta) s - G c'|^2 with G the design at theta = 0:
 * G^T Rot(-theta) s = cos(theta) u + sin(theta) v, and RSS = |s|^2 - w^T (G^T G)^-1 w (normal equations,
 * columns scaled; used to rank and refine rotations, the coefficients come from QR).
 */
class RotationObjective {
  private readonly chol: Float64Array;
  private readonly u: Float64Array;
  private readonly v: Float64Array;
  private readonly yy: number;
  private readonly p: number;

  constructor(samples: ShiftSamples, used: Uint32Array, params: Parameter[], transpose: boolean) {
    const p = params.length;
    this.p = p;
    const G = new Float64Array(p * p);
    const u = new Float64Array(p);
    const v = new Float64Array(p);
    const row = new Float64Array(p);
    const col = new Float64Array(p);
    let yy = 0;
    for (const k of used) {
      const [ar, ac] = toScanFrame(samples.alphaRow[k], samples.alphaCol[k], 0, transpose);
      gradientRows(params, ar, ac, row, col);
      const sr = samples.shiftRow[k];
      const sc = samples.shiftCol[k];
      yy += sr * sr + sc * sc;
      for (let i = 0; i < p; i++) {
        u[i] += row[i] * sr + col[i] * sc;
        v[i] += row[i] * sc - col[i] * sr;
        for (let j = 0; j <= i; j++) G[i * p + j] += row[i] * row[j] + col[i] * col[j];
      }
    }
    // Scale to unit diagonal, then Cholesky (lower).
    const d = Float64Array.from({ length: p }, (_, i) => 1 / Math.sqrt(G[i * p + i] || 1));
    for (let i = 0; i < p; i++) {
      u[i] *= d[i];
      v[i] *= d[i];
      for (let j = 0; j <= i; j++) G[i * p + j] *= d[i] * d[j];
    }
    for (let i = 0; i < p; i++) {
      for (let j = 0; j <= i; j++) {
        let t = G[i * p + j];
        for (let m = 0; m < j; m++) t -= G[i * p + m] * G[j * p + m];
        G[i * p + j] = i === j ? Math.sqrt(Math.max(t, 1e-300)) : t / G[j * p + j];
      }
    }
    this.chol = G;
    this.u = u;
    this.v = v;
    this.yy = yy;
  }

  rss(theta: number): number {
    const { p, chol } = this;
    const c = Math.cos(theta);
    const s = Math.sin(theta);
    const w = new Float64Array(p);
    let explained = 0;
    for (let i = 0; i < p; i++) {
      let t = c * this.u[i] + s * this.v[i];
      for (let m = 0; m < i; m++) t -= chol[i * p + m] * w[m];
      w[i] = t / chol[i * p + i];
      explained += w[i] * w[i];
    }
    return this.yy - explained;
  }
}

/** The rotation and transpose of a general affine fit s = c + M alpha_det (polar decomposition seed). */
export function affineRotation(
  samples: ShiftSamples,
  used: Uint32Array,
): { rotation: number; transpose: boolean } {
  const linear = (values: Float64Array) => {
    const A = new Float64Array(used.length * 3);
    const y = new Float64Array(used.length);
    used.forEach((k, i) => {
      A.set([1, samples.alphaRow[k], samples.alphaCol[k]], i * 3);
      y[i] = values[k];
    });
    return leastSquares(A, y, used.length, 3).x;
  };
  const [, a, b] = linear(samples.shiftRow);
  const [, c, d] = linear(samples.shiftCol);
  const transpose = a * d - b * c < 0;
  // M Flip swaps the columns; theta makes P = M' Rot(-theta) symmetric.
  const [m00, m01, m10, m11] = transpose ? [b, a, d, c] : [a, b, c, d];
  let rotation = Math.atan2(m10 - m01, m00 + m11);
  if (rotation > Math.PI / 2) rotation -= Math.PI;
  if (rotation <= -Math.PI / 2) rotation += Math.PI;
  return { rotation, transpose };
}

/** Indices of the valid, finite samples. */
export function usableSamples(samples: ShiftSamples): Uint32Array {
  const out: number[] = [];
  for (let k = 0; k < samples.valid.length; k++) {
    if (samples.valid[k] && Number.isFinite(samples.shiftRow[k] + samples.shiftCol[k])) out.push(k);
  }
  return Uint32Array.from(out);
}

/**
 * Global search of the rotation: `trials` angles evenly over [-pi/2, pi/2); the first-order model (C01, C10,
 * C12) with the smallest residual wins. The transpose comes from the sign of det M of the affine fit (a
 * transposed detector turns defocus into a traceless, astigmatism-like matrix, so the residual alone cannot
 * tell them apart: the solution with |C12| < |C10| is taken), unless given.
 */
export function searchRotation(
  samples: ShiftSamples,
  trials = 200,
  given?: boolean,
): { rotation: number; transpose: boolean } {
  const used = usableSamples(samples);
  const transpose = given ?? affineRotation(samples, used).transpose;
  const objective = new RotationObjective(samples, used, parameters(1), transpose);
  let best = Number.POSITIVE_INFINITY;
  let rotation = 0;
  for (let i = 0; i < trials; i++) {
    const theta = -Math.PI / 2 + (Math.PI * (i + 0.5)) / trials;
    const rss = objective.rss(theta);
    if (rss < best) {
      best = rss;
      rotation = theta;
    }
  }
  return { rotation, transpose };
}

export function fitAberrations(samples: ShiftSamples, options: FitOptions = {}): AberrationFit {
  const { maxOrder = 5, trials = 200 } = options;
  let used = usableSamples(samples);
  if (used.length < 8)
    throw new StemflowError('invalid', `Only ${used.length} bright-field shifts were measured.`);
  const first = parameters(1);
  let { rotation, transpose } =
    options.rotation !== undefined
      ? { rotation: options.rotation, transpose: options.transpose ?? false }
      : searchRotation(samples, trials, options.transpose);
  // Outliers: drop shifts more than 6 robust sigmas off the first-order model.
  used = rejectOutliers(samples, used, first, rotation, transpose);
  const order = Math.min(maxOrder, maxOrderFor(used.length));
  const full = parameters(order);
  if (!options.fixRotation)
    rotation = newtonRotation(samples, used, full, rotation, transpose, Math.PI / Math.max(1, trials));
  if (rotation > Math.PI / 2) rotation -= Math.PI;
  if (rotation <= -Math.PI / 2) rotation += Math.PI;

  // One QR of the full design: parameters are ordered by radial order, so each order's residual is a prefix.
  const { A, y } = design(samples, used, full, rotation, transpose);
  const final = leastSquares(A, y, 2 * used.length, full.length);
  const orders: OrderFit[] = [];
  for (let o = 1; o <= order; o++) {
    const count = parameters(o).length;
    orders.push({
      order: o,
      parameters: count,
      rms: Math.sqrt(final.prefixRss[count - 1] / used.length),
      condition: conditionOf(final.diagonal, count),
    });
  }
  const coefficients: Record<string, number> = {};
  const sigma: Record<string, number> = {};
  full.forEach((p, j) => {
    coefficients[p.name] = final.x[j];
    sigma[p.name] = final.sigma[j];
  });
  const residualRow = new Float64Array(samples.shiftRow.length).fill(Number.NaN);
  const residualCol = new Float64Array(samples.shiftRow.length).fill(Number.NaN);
  const p = full.length;
  used.forEach((k, i) => {
    let mr = 0;
    let mc = 0;
    for (let j = 0; j < p; j++) {
      mr += A[2 * i * p + j] * final.x[j];
      mc += A[(2 * i + 1) * p + j] * final.x[j];
    }
    residualRow[k] = y[2 * i] - mr;
    residualCol[k] = y[2 * i + 1] - mc;
  });
  return {
    rotation,
    transpose,
    coefficients,
    sigma,
    orders,
    residualRow,
    residualCol,
    used: used.length,
    rms: Math.sqrt(final.rss / used.length),
  };
}

const ALL_PARAMETERS = parameters(5);
const basisRow = new Float64Array(ALL_PARAMETERS.length);
const basisCol = new Float64Array(ALL_PARAMETERS.length);

/** The model shift (Å, scan frame) at a detector angle. */
export function modelShift(
  coefficients: Coefficients,
  alphaRow: number,
  alphaCol: number,
  rotation: number,
  transpose: boolean,
): [number, number] {
  const [ar, ac] = toScanFrame(alphaRow, alphaCol, rotation, transpose);
  gradientRows(ALL_PARAMETERS, ar, ac, basisRow, basisCol);
  let sr = 0;
  let sc = 0;
  for (let j = 0; j < ALL_PARAMETERS.length; j++) {
    const v = coefficients[ALL_PARAMETERS[j].name];
    if (!v) continue;
    sr += v * basisRow[j];
    sc += v * basisCol[j];
  }
  return [sr, sc];
}

/** The highest order whose parameters the samples can determine with room to spare (2N >= 4p). */
function maxOrderFor(n: number): number {
  let order = 1;
  for (let o = 2; o <= 5; o++) if (2 * n >= 4 * parameters(o).length) order = o;
  return order;
}

function rejectOutliers(
  samples: ShiftSamples,
  used: Uint32Array,
  params: Parameter[],
  rotation: number,
  transpose: boolean,
): Uint32Array {
  const { A, y } = design(samples, used, params, rotation, transpose);
  const p = params.length;
  const { x } = leastSquares(A, y, 2 * used.length, p);
  const size = new Float64Array(used.length);
  for (let i = 0; i < used.length; i++) {
    let r0 = y[2 * i];
    let r1 = y[2 * i + 1];
    for (let j = 0; j < p; j++) {
      r0 -= A[2 * i * p + j] * x[j];
      r1 -= A[(2 * i + 1) * p + j] * x[j];
    }
    size[i] = Math.hypot(r0, r1);
  }
  const sorted = Float64Array.from(size).sort();
  const median = sorted[sorted.length >> 1];
  const limit = 6 * 1.4826 * median + 1e-12;
  const kept = used.filter((_, i) => size[i] <= limit);
  return kept.length >= 8 ? kept : used;
}

/** Newton steps on RSS(theta) with central differences, within +-2 `span` of the start. */
function newtonRotation(
  samples: ShiftSamples,
  used: Uint32Array,
  params: Parameter[],
  start: number,
  transpose: boolean,
  span: number,
): number {
  const objective = new RotationObjective(samples, used, params, transpose);
  const f = (t: number) => objective.rss(t);
  const h = 1e-4;
  let theta = start;
  for (let iter = 0; iter < 12; iter++) {
    const f0 = f(theta);
    const fp = f(theta + h);
    const fm = f(theta - h);
    const d1 = (fp - fm) / (2 * h);
    const d2 = (fp - 2 * f0 + fm) / (h * h);
    let step = d2 > 0 ? -d1 / d2 : -Math.sign(d1) * span;
    step = Math.max(-span, Math.min(span, step));
    let next = theta + step;
    // Halve until the residual does not grow.
    for (let i = 0; i < 20 && Math.abs(step) > 1e-8 && f(next) > f0; i++) {
      step /= 2;
      next = theta + step;
    }
    if (Math.abs(next - start) > 2 * span) break;
    const done = Math.abs(next - theta) < 1e-8;
    theta = next;
    if (done) break;
  }
  return theta;
}
