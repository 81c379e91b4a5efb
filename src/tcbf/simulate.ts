/**
 * A small 4D-STEM simulator for tcBF tests (docs/tcbf.md, "Simulator"): a weak phase object (smooth random
 * potential, periodic on the probe window) scanned by a probe with known aberrations, recorded as integer
 * counts on a centred detector. Deterministic for a seed (mulberry32).
 *
 * Probe Psi(k) = A(k) exp(-i chi(k)) with a soft-edged aperture A; probe at R: IFFT[Psi exp(-2 pi i k.R)];
 * pattern |FFT(psi_R t)|^2, normalised to `countsPerFrame` then rounded (noiseless) or Poisson-sampled.
 * Scan positions R_ij = step Rot(scanRotation) (i, j); the detector can be transposed (row/col swapped).
 */
import { StemflowError } from '../errors.ts';
import { fft2 } from '../products/idpc.ts';
import { mulberry32 } from '../util/prng.ts';
import { type Coefficients, chi, wavelength } from './optics.ts';

export interface SimulationSpec {
  /** Accelerating voltage, V. */
  volts: number;
  /** Convergence semi-angle, rad. */
  alpha0: number;
  /** Probe window and detector size, px (a power of two). */
  window: number;
  /** Real-space sampling of the probe window, Å. */
  dx: number;
  scanRows: number;
  scanCols: number;
  /** Scan step, Å. */
  step: number;
  /** Scan rotation, rad (positions step Rot(theta) (i, j)). */
  scanRotation?: number;
  /** Swap the detector's row and column axes. */
  transpose?: boolean;
  /** True aberrations, Cartesian, Å. */
  aberrations: Coefficients;
  /** RMS phase of the object, rad. */
  rmsPhase: number;
  /** Object spectrum ~ exp(-(q/qc)^2), qc in 1/Å. */
  qc: number;
  /** Mean counts per frame. */
  countsPerFrame: number;
  /** Poisson noise (default: noiseless, rounded counts). */
  poisson?: boolean;
  seed: number;
}

export interface Simulation {
  /** Counts, scan-major: frame (i * scanCols + j) holds window x window pixels. */
  frames: Uint16Array;
  detRows: number;
  detCols: number;
  /** Detector angular sampling, rad per pixel. */
  dTheta: number;
  lambda: number;
  /** Object phase on the window grid (window x window, sampling dx), rad. */
  phase: Float64Array;
}

export function simulate4dstem(spec: SimulationSpec): Simulation {
  const n = spec.window;
  if (n & (n - 1) || n < 8)
    throw new StemflowError('invalid', `The window ${n} must be a power of two >= 8.`);
  const lambda = wavelength(spec.volts);
  const dk = 1 / (n * spec.dx);
  const dTheta = lambda * dk;
  const next = mulberry32(spec.seed);
  const uniform = () => (next() + 0.5) / 2 ** 32;
  const gauss = () => Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform());
  const freq = (i: number) => (i < n / 2 ? i : i - n) * dk;

  const phase = objectPhase(n, dk, spec.qc, spec.rmsPhase, gauss);
  const tr = new Float64Array(n * n);
  const ti = new Float64Array(n * n);
  for (let i = 0; i < n * n; i++) {
    tr[i] = Math.cos(phase[i]);
    ti[i] = Math.sin(phase[i]);
  }

  // Probe spectrum A exp(-i chi), aperture edge softened over one pixel.
  const pr = new Float64Array(n * n);
  const pi = new Float64Array(n * n);
  for (let r = 0; r < n; r++) {
    for (let c = 0; c < n; c++) {
      const kr = freq(r);
      const kc = freq(c);
      const a = Math.min(1, Math.max(0, (spec.alpha0 - lambda * Math.hypot(kr, kc)) / dTheta + 0.5));
      if (a === 0) continue;
      const x = chi(spec.aberrations, lambda, kr, kc);
      pr[r * n + c] = a * Math.cos(x);
      pi[r * n + c] = -a * Math.sin(x);
    }
  }

  const { scanRows, scanCols, step } = spec;
  const rot = spec.scanRotation ?? 0;
  const frames = new Uint16Array(scanRows * scanCols * n * n);
  const wr = new Float64Array(n * n);
  const wi = new Float64Array(n * n);
  const intensity = new Float64Array(n * n);
  for (let i = 0; i < scanRows; i++) {
    for (let j = 0; j < scanCols; j++) {
      const Rr = step * (Math.cos(rot) * i - Math.sin(rot) * j);
      const Rc = step * (Math.sin(rot) * i + Math.cos(rot) * j);
      for (let r = 0; r < n; r++) {
        for (let c = 0; c < n; c++) {
          const t = -2 * Math.PI * (freq(r) * Rr + freq(c) * Rc);
          const k = r * n + c;
          const cr = Math.cos(t);
          const ci = Math.sin(t);
          wr[k] = pr[k] * cr - pi[k] * ci;
          wi[k] = pr[k] * ci + pi[k] * cr;
        }
      }
      fft2(wr, wi, n, n, true);
      for (let k = 0; k < n * n; k++) {
        const a = wr[k] * tr[k] - wi[k] * ti[k];
        wi[k] = wr[k] * ti[k] + wi[k] * tr[k];
        wr[k] = a;
      }
      fft2(wr, wi, n, n);
      let total = 0;
      for (let k = 0; k < n * n; k++) total += intensity[k] = wr[k] * wr[k] + wi[k] * wi[k];
      const base = (i * scanCols + j) * n * n;
      for (let r = 0; r < n; r++) {
        for (let c = 0; c < n; c++) {
          // Centred detector: frequency 0 at pixel n / 2.
          const k = ((r + n / 2) % n) * n + ((c + n / 2) % n);
          const mean = (intensity[k] / total) * spec.countsPerFrame;
          const v = spec.poisson ? poisson(mean, uniform, gauss) : Math.round(mean);
          if (v > 65535) throw new StemflowError('invalid', `A simulated count ${v} exceeds uint16.`);
          frames[base + (spec.transpose ? c * n + r : r * n + c)] = v;
        }
      }
    }
  }
  return { frames, detRows: n, detCols: n, dTheta, lambda, phase };
}

/** Smooth random phase, periodic on the n x n window, spectrum ~ exp(-(q/qc)^2), scaled to `rms`. */
function objectPhase(n: number, dk: number, qc: number, rms: number, gauss: () => number): Float64Array {
  const re = new Float64Array(n * n);
  const im = new Float64Array(n * n);
  for (let r = 0; r < n; r++) {
    for (let c = 0; c < n; c++) {
      const q = Math.hypot((r < n / 2 ? r : r - n) * dk, (c < n / 2 ? c : c - n) * dk);
      const env = r === 0 && c === 0 ? 0 : Math.exp(-((q / qc) ** 2));
      re[r * n + c] = gauss() * env;
      im[r * n + c] = gauss() * env;
    }
  }
  fft2(re, im, n, n, true);
  let sum2 = 0;
  for (let i = 0; i < n * n; i++) sum2 += re[i] * re[i];
  const scale = rms / Math.sqrt(sum2 / (n * n));
  for (let i = 0; i < n * n; i++) re[i] *= scale;
  return re;
}

/** Poisson sample: Knuth's product method below 30, a rounded normal above (documented approximation). */
function poisson(mean: number, uniform: () => number, gauss: () => number): number {
  if (mean <= 0) return 0;
  if (mean >= 30) return Math.max(0, Math.round(mean + Math.sqrt(mean) * gauss()));
  const limit = Math.exp(-mean);
  let k = 0;
  let p = uniform();
  while (p > limit) {
    k++;
    p *= uniform();
  }
  return k;
}
