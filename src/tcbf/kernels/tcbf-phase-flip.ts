/**
 * CPU twin of src/shaders/tcbf-phase-flip.wgsl: out(Q) = acc(Q) x sign(sin chi_even(q)) on the upsampled grid,
 * q = signed Q / extent (1/Å), chi = 2 pi W(lambda q) / lambda. The sign of sin(2 pi t), t = W / lambda in turns,
 * is read from frac(t): + in (0, 1/2), - in (1/2, 1), 0 at the crossings; no trigonometry, so float32 (GPU) and
 * float64 (here) differ only within rounding of a zero of sin chi.
 */
import { type Coefficients, parameters } from '../optics.ts';

export interface PhaseFlipSpec {
  /** Per even-order term (n odd): power n + 1, m, 1 for a sine part, C / (n + 1) in Å; float32 as on the GPU. */
  terms: Float32Array;
  lambda: number;
  /** Rows x step and cols x step of the FFT grid, Å (frequency spacing 1 / extent). */
  extentRows: number;
  extentCols: number;
}

/** The even-order terms (C10, C12, C30, C32, C34, C50, ...) of fitted coefficients. */
export function phaseFlipTerms(coefficients: Coefficients): Float32Array {
  const terms = parameters(5).filter((p) => p.n % 2 === 1 && coefficients[p.name]);
  const out = new Float32Array(4 * terms.length);
  terms.forEach((p, i) => {
    out.set([p.n + 1, p.m, p.part === 'b' ? 1 : 0, coefficients[p.name] / (p.n + 1)], 4 * i);
  });
  return out;
}

/** W(alpha) of the terms (Å): cos(m phi), sin(m phi) by angle addition and alpha^k by products, as on the GPU. */
export function termsW(terms: Float32Array, ar: number, ac: number): number {
  const alpha = Math.sqrt(ar * ar + ac * ac);
  if (alpha === 0) return 0;
  const c1 = ar / alpha;
  const s1 = ac / alpha;
  const cm = [1, 0, 0, 0, 0, 0, 0];
  const sm = [0, 0, 0, 0, 0, 0, 0];
  const an = [1, 0, 0, 0, 0, 0, 0];
  for (let k = 1; k < 7; k++) {
    cm[k] = cm[k - 1] * c1 - sm[k - 1] * s1;
    sm[k] = sm[k - 1] * c1 + cm[k - 1] * s1;
    an[k] = an[k - 1] * alpha;
  }
  let w = 0;
  for (let i = 0; i < terms.length; i += 4) {
    w += terms[i + 3] * an[terms[i]] * (terms[i + 2] ? sm[terms[i + 1]] : cm[terms[i + 1]]);
  }
  return w;
}

/** sign(sin(2 pi t)) from the fractional part of t. */
export function turnSign(t: number): number {
  const f = t - Math.floor(t);
  if (f === 0 || f === 0.5) return 0;
  return f < 0.5 ? 1 : -1;
}

export function tcbfPhaseFlip(
  acc: Float64Array,
  fineRows: number,
  fineCols: number,
  spec: PhaseFlipSpec,
): Float64Array {
  const out = new Float64Array(acc.length);
  const { lambda } = spec;
  for (let r = 0; r < fineRows; r++) {
    const qr = (r < fineRows / 2 ? r : r - fineRows) / spec.extentRows;
    for (let c = 0; c < fineCols; c++) {
      const qc = (c < fineCols / 2 ? c : c - fineCols) / spec.extentCols;
      const sign = turnSign(termsW(spec.terms, lambda * qr, lambda * qc) / lambda);
      const Q = r * fineCols + c;
      out[2 * Q] = acc[2 * Q] * sign;
      out[2 * Q + 1] = acc[2 * Q + 1] * sign;
    }
  }
  return out;
}
