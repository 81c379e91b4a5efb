/**
 * A large synthetic tcBF acquisition made directly in resident (detector-major) form, for the benchmark:
 * building 19 GB of frames and loading them would only time the load again. A smooth random object f on the
 * periodic scan grid is shifted by the parallax of known aberrations: bright-field pixel k records
 * B_k(R) = round(mean (1 + contrast f(R + s_k))), with s_k rounded to a quarter scan pixel (16 Fourier-shifted
 * copies of f, then whole-pixel rolls). Pixels outside the disk hold 0. Deterministic for a seed.
 */
import { fft2 } from '../products/idpc.ts';
import { mulberry32 } from '../util/prng.ts';
import { modelShift } from './fit.ts';
import type { Coefficients } from './optics.ts';

export interface SyntheticTcbfSpec {
  scan: number;
  det: number;
  /** Disk radius, px (7,644 pixels at 49.33 for det 192). */
  radius: number;
  alpha0: number;
  step: number;
  rotation: number;
  aberrations: Coefficients;
  /** Object spectrum exp(-(q/qc)^2), qc in 1/Å. */
  qc: number;
  mean: number;
  contrast: number;
  seed: number;
}

export interface SyntheticTcbf {
  /** Detector pixels of the disk, increasing. */
  pixels: Uint32Array;
  /** Exact summed pattern (0 outside the disk). */
  sums: Float64Array;
  dTheta: number;
  /** Calls `write(pixel, row)` for each disk pixel with its scan image (scan x scan uint16). */
  rows(write: (pixel: number, row: Uint16Array) => void): void;
}

export function syntheticTcbf(spec: SyntheticTcbfSpec): SyntheticTcbf {
  const { scan: n, det, radius } = spec;
  const centre = det / 2;
  const dTheta = spec.alpha0 / radius;
  const pixels: number[] = [];
  for (let u = 0; u < det; u++) {
    for (let v = 0; v < det; v++) if (Math.hypot(u - centre, v - centre) <= radius) pixels.push(u * det + v);
  }
  // Object spectrum, then 4 x 4 quarter-pixel shifted copies as counts.
  const next = mulberry32(spec.seed);
  const gauss = () =>
    Math.sqrt(-2 * Math.log((next() + 0.5) / 2 ** 32)) * Math.cos((2 * Math.PI * next()) / 2 ** 32);
  const fr = new Float64Array(n * n);
  const fi = new Float64Array(n * n);
  const freq = (i: number) => (i < n / 2 ? i : i - n) / n;
  for (let r = 0; r < n; r++) {
    for (let c = 0; c < n; c++) {
      const q = Math.hypot(freq(r), freq(c)) / spec.step;
      const env = r === 0 && c === 0 ? 0 : Math.exp(-((q / spec.qc) ** 2));
      fr[r * n + c] = gauss() * env;
      fi[r * n + c] = gauss() * env;
    }
  }
  const copies: Uint16Array[] = [];
  const sumOf: number[] = [];
  for (let a = 0; a < 4; a++) {
    for (let b = 0; b < 4; b++) {
      const re = new Float64Array(n * n);
      const im = new Float64Array(n * n);
      for (let r = 0; r < n; r++) {
        for (let c = 0; c < n; c++) {
          // f(x + d) <-> F(q) exp(2 pi i q d).
          const t = 2 * Math.PI * (freq(r) * (a / 4) + freq(c) * (b / 4));
          const k = r * n + c;
          re[k] = fr[k] * Math.cos(t) - fi[k] * Math.sin(t);
          im[k] = fr[k] * Math.sin(t) + fi[k] * Math.cos(t);
        }
      }
      fft2(re, im, n, n, true);
      let rms = 0;
      for (const v of re) rms += v * v;
      rms = Math.sqrt(rms / re.length);
      const counts = Uint16Array.from(re, (v) =>
        Math.max(0, Math.round(spec.mean * (1 + (spec.contrast * v) / rms))),
      );
      copies.push(counts);
      sumOf.push(counts.reduce((s, v) => s + v, 0));
    }
  }
  const shifts = pixels.map((p) => {
    const ar = (Math.floor(p / det) - centre) * dTheta;
    const ac = ((p % det) - centre) * dTheta;
    const [sr, sc] = modelShift(spec.aberrations, ar, ac, spec.rotation, false);
    return [Math.round((4 * sr) / spec.step), Math.round((4 * sc) / spec.step)];
  });
  const sums = new Float64Array(det * det);
  pixels.forEach((p, k) => {
    const [qr, qc] = shifts[k];
    sums[p] = sumOf[(((qr % 4) + 4) % 4) * 4 + (((qc % 4) + 4) % 4)];
  });
  return {
    pixels: Uint32Array.from(pixels),
    sums,
    dTheta,
    rows(write) {
      const row = new Uint16Array(n * n);
      pixels.forEach((p, k) => {
        const [qr, qc] = shifts[k];
        const nr = Math.floor(qr / 4);
        const nc = Math.floor(qc / 4);
        const copy = copies[(qr - 4 * nr) * 4 + (qc - 4 * nc)];
        const shiftC = ((nc % n) + n) % n;
        for (let i = 0; i < n; i++) {
          // B(i, j) = copy(i + nr, j + nc), wrapped.
          const src = ((((i + nr) % n) + n) % n) * n;
          row.set(copy.subarray(src + shiftC, src + n), i * n);
          row.set(copy.subarray(src, src + shiftC), i * n + n - shiftC);
        }
        write(p, row);
      });
    },
  };
}
