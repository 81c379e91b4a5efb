/**
 * The tcBF pipeline (docs/tcbf.md): shifts of every bright-field image by cross-correlation against a
 * reference that is rebuilt with the current shift model, the aberration fit, then the tilt-corrected and
 * phase-flipped images on an upsampled grid and a half-set Fourier ring correlation. Four stages, timed:
 * preparation, initial fit, fit to fifth order, reconstruction. Backend-agnostic (CPU twins or WebGPU).
 */
import { StemflowError, throwIfAborted } from '../errors.ts';
import type { TcbfBackend } from './backend.ts';
import type { BrightFieldPixels } from './bright-field.ts';
import { type AberrationFit, fitAberrations, modelShift, type ShiftSamples, searchRotation } from './fit.ts';
import { halfSetFrc, type RingCorrelation } from './frc.ts';
import { MAX_FFT_LENGTH } from './grid.ts';
import { phaseFlipTerms } from './kernels/tcbf-phase-flip.ts';
import { leastSquares } from './least-squares.ts';

export type TcbfStage = 'preparation' | 'initial fit' | 'fit to fifth order' | 'reconstruction';

export interface TcbfOptions {
  /** Scan step, Å. */
  step: number;
  /** Wavelength, Å. */
  lambda: number;
  /** Convergence semi-angle, rad. */
  alpha0: number;
  /** Correlations are low-passed at lambda q = lowpass x alpha0 (Gaussian 1/e), default 0.5. */
  lowpass?: number;
  /** Pixels within seedFraction x alpha0 seed the first reference (at least 5 pixels), default 0.25. */
  seedFraction?: number;
  /** Correlation rounds after the seed round, default 2. */
  iterations?: number;
  /** Peak search radius after the seed round, scan px, default 4. */
  radius?: number;
  /** Upsampling of the reconstruction, default 2. */
  factor?: number;
  maxOrder?: number;
  trials?: number;
  /** Given detector-to-scan rotation (rad) and transpose; otherwise searched. */
  rotation?: number;
  transpose?: boolean;
  signal?: AbortSignal;
  onProgress?: (stage: TcbfStage, done: boolean) => void;
  /** Milliseconds of each step inside the stages (benchmark detail). */
  onTrace?: (step: string, ms: number) => void;
}

export interface TcbfResult {
  /** Measured shifts, scan px (row, col), and whether each was found. */
  shiftRow: Float64Array;
  shiftCol: Float64Array;
  valid: Uint8Array;
  fit: AberrationFit;
  /** (factor scanRows) x (factor scanCols) images. */
  imageRows: number;
  imageCols: number;
  tcbf: Float64Array;
  phaseFlip: Float64Array;
  frc: RingCorrelation;
  /** Milliseconds per stage. */
  timings: Record<TcbfStage, number>;
}

export async function runTcbf(
  backend: TcbfBackend,
  bf: BrightFieldPixels,
  scan: { rows: number; cols: number },
  options: TcbfOptions,
): Promise<TcbfResult> {
  const { step, lambda, alpha0, signal } = options;
  const lowpass = options.lowpass ?? 0.5;
  const factor = options.factor ?? 2;
  const count = backend.count;
  if (count !== bf.pixels.length)
    throw new StemflowError('mismatch', 'The backend holds other pixels than the selection.');
  const { rows, cols } = backend;
  checkOptions(options, rows, cols);
  const timings = {} as Record<TcbfStage, number>;
  let clock = performance.now();
  let traceClock = clock;
  const trace = (step: string) => {
    const now = performance.now();
    options.onTrace?.(step, now - traceClock);
    traceClock = now;
  };
  const stage = (name: TcbfStage) => {
    const now = performance.now();
    timings[name] = now - clock;
    clock = now;
    options.onProgress?.(name, true);
    throwIfAborted(signal);
  };

  throwIfAborted(signal);
  await backend.prepare();
  await backend.flush();
  trace('prepare');
  stage('preparation');

  // Seed: the innermost pixels (small shifts) make the first reference.
  const radial = Float64Array.from(bf.alphaRow, (r, k) => Math.hypot(r, bf.alphaCol[k]));
  const order = Array.from(radial.keys()).sort((a, b) => radial[a] - radial[b] || a - b);
  const seedCount = Math.max(
    5,
    order.filter((k) => radial[k] <= (options.seedFraction ?? 0.25) * alpha0).length,
  );
  const seed = new Set(order.slice(0, seedCount));
  const weight = Float32Array.from({ length: 4 * count }, (_, i) =>
    i % 4 === 2 && seed.has(i >> 2) ? 1 : 0,
  );

  const window = lowpassWindow(rows, cols, step, (lowpass * alpha0) / lambda);
  const shiftRow = new Float64Array(count);
  const shiftCol = new Float64Array(count);
  const valid = new Uint8Array(count);
  const predicted = new Float32Array(4 * count);
  const expected = new Float32Array(2 * count);
  let radius = Math.floor(Math.min(rows, cols) / 2) - 1;
  for (let round = 0; round <= (options.iterations ?? 2); round++) {
    trace(round === 0 ? 'setup' : `round ${round - 1} fit`);
    const reference = await backend.shiftSum(round === 0 ? weight : predicted, 1);
    trace(`round ${round} reference`);
    const spectrum = new Float64Array(reference.length);
    for (let i = 0; i < reference.length; i += 2) {
      spectrum[i] = reference[i] * window[i >> 1];
      spectrum[i + 1] = -reference[i + 1] * window[i >> 1];
    }
    const peaks = await backend.correlate(spectrum, expected, radius);
    trace(`round ${round} correlate`);
    throwIfAborted(signal);
    for (let k = 0; k < count; k++) {
      // The correlation peaks at -s for B_k(R) = f(R + s).
      shiftRow[k] = -peaks[4 * k];
      shiftCol[k] = -peaks[4 * k + 1];
      valid[k] = peaks[4 * k + 3];
    }
    const affine = affineShifts(bf, shiftRow, shiftCol, valid);
    for (let k = 0; k < count; k++) {
      predicted.set([affine[2 * k], affine[2 * k + 1], 1, 0], 4 * k);
      expected.set([-affine[2 * k], -affine[2 * k + 1]], 2 * k);
    }
    radius = options.radius ?? 4;
  }
  const samples: ShiftSamples = {
    alphaRow: bf.alphaRow,
    alphaCol: bf.alphaCol,
    shiftRow: shiftRow.map((v) => v * step),
    shiftCol: shiftCol.map((v) => v * step),
    valid,
  };
  const seedRotation =
    options.rotation !== undefined
      ? { rotation: options.rotation, transpose: options.transpose ?? false }
      : searchRotation(samples, options.trials ?? 200, options.transpose);
  trace('last fit and rotation search');
  stage('initial fit');

  const fit = fitAberrations(samples, {
    maxOrder: options.maxOrder ?? 5,
    trials: options.trials ?? 200,
    ...seedRotation,
  });
  trace('fit to fifth order');
  stage('fit to fifth order');

  const model = new Float32Array(4 * count);
  const halves = [new Float32Array(4 * count), new Float32Array(4 * count)];
  for (let k = 0; k < count; k++) {
    const [sr, sc] = modelShift(
      fit.coefficients,
      bf.alphaRow[k],
      bf.alphaCol[k],
      fit.rotation,
      fit.transpose,
    );
    model.set([sr / step, sc / step, 1, 0], 4 * k);
    // Checkerboard halves of the detector for the ring correlation.
    const row = Math.round(bf.alphaRow[k] / bf.dTheta + bf.centreRow);
    const col = Math.round(bf.alphaCol[k] / bf.dTheta + bf.centreCol);
    const half = (row + col) % 2;
    halves[half].set([sr / step, sc / step, 1, 0], 4 * k);
  }
  const fr = rows * factor;
  const fc = cols * factor;
  const flip = {
    terms: phaseFlipTerms(fit.coefficients),
    lambda,
    extentRows: rows * step,
    extentCols: cols * step,
  };
  trace('model shifts');
  const [tcbfFull, flipFull] = await backend.reconstruct(model, factor, flip);
  trace('reconstruct');
  const [a, b] = [await backend.shiftSum(halves[0], 1), await backend.shiftSum(halves[1], 1)];
  const frc = halfSetFrc(a, b, rows, cols, step);
  trace('half-set FRC');
  const imageRows = Math.min(fr, factor * scan.rows);
  const imageCols = Math.min(fc, factor * scan.cols);
  const norm = (factor * factor) / count;
  const crop = (full: Float64Array) => {
    const out = new Float64Array(imageRows * imageCols);
    for (let r = 0; r < imageRows; r++) {
      for (let c = 0; c < imageCols; c++) out[r * imageCols + c] = full[r * fc + c] * norm;
    }
    return out;
  };
  const result: TcbfResult = {
    shiftRow,
    shiftCol,
    valid,
    fit,
    imageRows,
    imageCols,
    tcbf: crop(tcbfFull),
    phaseFlip: crop(flipFull),
    frc,
    timings,
  };
  stage('reconstruction');
  return result;
}

/** Refuses options that cannot give a meaningful result, with the reason. */
function checkOptions(o: TcbfOptions, rows: number, cols: number): void {
  const bad = (what: string) => {
    throw new StemflowError('invalid', `tcBF: ${what}.`);
  };
  for (const [name, v] of [
    ['the scan step (Å)', o.step],
    ['the wavelength (Å)', o.lambda],
    ['the convergence semi-angle (rad)', o.alpha0],
    ['the low-pass fraction', o.lowpass ?? 0.5],
    ['the seed fraction', o.seedFraction ?? 0.25],
  ] as const) {
    if (!(Number.isFinite(v) && v > 0)) bad(`${name} must be a positive number, not ${v}`);
  }
  const factor = o.factor ?? 2;
  if (!Number.isInteger(factor) || factor < 1 || Math.max(rows, cols) * factor > MAX_FFT_LENGTH) {
    bad(
      `the upsampling factor must be an integer from 1 with ${Math.max(rows, cols)} x factor <= ${MAX_FFT_LENGTH}, not ${factor}`,
    );
  }
  const order = o.maxOrder ?? 5;
  if (!Number.isInteger(order) || order < 1 || order > 5) bad(`the fit order must be 1 to 5, not ${order}`);
  const iterations = o.iterations ?? 2;
  if (!Number.isInteger(iterations) || iterations < 0 || iterations > 20) {
    bad(`the correlation rounds must be 0 to 20, not ${iterations}`);
  }
  const trials = o.trials ?? 200;
  if (!Number.isInteger(trials) || trials < 1)
    bad(`the rotation search needs at least one trial, not ${trials}`);
  const radius = o.radius ?? 4;
  if (!Number.isInteger(radius) || radius < 1)
    bad(`the peak search radius must be a positive integer, not ${radius}`);
}

/** Signed spatial frequency (1/Å) of grid index Q on a rows x cols grid spanning extentR x extentC Å. */
export function signedFrequency(
  Q: number,
  rows: number,
  cols: number,
  extentR: number,
  extentC: number,
): [number, number] {
  const r = Math.floor(Q / cols);
  const c = Q % cols;
  return [(r < rows / 2 ? r : r - rows) / extentR, (c < cols / 2 ? c : c - cols) / extentC];
}

/** Gaussian low-pass exp(-(q/qmax)^2) on the rows x cols grid of step-Å pixels. */
function lowpassWindow(rows: number, cols: number, step: number, qmax: number): Float64Array {
  return Float64Array.from({ length: rows * cols }, (_, Q) => {
    const [qr, qc] = signedFrequency(Q, rows, cols, rows * step, cols * step);
    return Math.exp(-((qr * qr + qc * qc) / (qmax * qmax)));
  });
}

/** The general affine model s = c + M alpha_det of the valid shifts, evaluated at every pixel (px). */
function affineShifts(
  bf: BrightFieldPixels,
  sr: Float64Array,
  sc: Float64Array,
  valid: Uint8Array,
): Float64Array {
  const used = Array.from(valid.keys()).filter((k) => valid[k]);
  if (used.length < 4) {
    throw new StemflowError(
      'invalid',
      `Only ${used.length} bright-field images correlate with the reference.`,
    );
  }
  const A = new Float64Array(used.length * 3);
  used.forEach((k, i) => {
    A.set([1, bf.alphaRow[k] / bf.dTheta, bf.alphaCol[k] / bf.dTheta], 3 * i);
  });
  const fitOf = (v: Float64Array) =>
    leastSquares(
      A,
      Float64Array.from(used, (k) => v[k]),
      used.length,
      3,
    ).x;
  const r = fitOf(sr);
  const c = fitOf(sc);
  const out = new Float64Array(2 * bf.pixels.length);
  for (let k = 0; k < bf.pixels.length; k++) {
    const u = bf.alphaRow[k] / bf.dTheta;
    const v = bf.alphaCol[k] / bf.dTheta;
    out[2 * k] = r[0] + r[1] * u + r[2] * v;
    out[2 * k + 1] = c[0] + c[1] * u + c[2] * v;
  }
  return out;
}
