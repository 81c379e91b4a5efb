import { describe, expect, it } from 'vitest';
import { isStemflowError } from '../errors.ts';
import { mulberry32 } from '../util/prng.ts';
import { fitAberrations, modelShift, type ShiftSamples } from './fit.ts';
import { leastSquares } from './least-squares.ts';
import { parameters } from './optics.ts';

/** A disk of `radius` px at dTheta rad/px. */
function disk(radius: number, dTheta: number) {
  const r: number[] = [];
  const c: number[] = [];
  for (let u = -radius; u <= radius; u++) {
    for (let v = -radius; v <= radius; v++) {
      if (Math.hypot(u, v) <= radius) {
        r.push(u * dTheta);
        c.push(v * dTheta);
      }
    }
  }
  return { alphaRow: Float64Array.from(r), alphaCol: Float64Array.from(c) };
}

// Fifth-order truth (Å): 20 mrad, edge shifts of a few Å each.
const truth: Record<string, number> = {
  C01a: 0.3,
  C01b: -0.2,
  C10: 120,
  C12a: 25,
  C12b: -14,
  C21a: 900,
  C21b: 400,
  C23a: -300,
  C23b: 650,
  C30: 2.0e5,
  C32a: -6e4,
  C32b: 3e4,
  C34a: 4e4,
  C34b: -2e4,
  C41a: 4e6,
  C41b: -2e6,
  C43a: 3e6,
  C43b: 1e6,
  C45a: -2e6,
  C45b: 2.5e6,
  C50: 1.5e8,
  C52a: -5e7,
  C52b: 4e7,
  C54a: 3e7,
  C54b: -6e7,
  C56a: 2e7,
  C56b: 5e7,
};

function samples(rotation: number, transpose: boolean, noise = 0, seed = 1): ShiftSamples {
  const { alphaRow, alphaCol } = disk(49, 0.02 / 49);
  const next = mulberry32(seed);
  const gauss = () =>
    Math.sqrt(-2 * Math.log((next() + 0.5) / 2 ** 32)) * Math.cos((2 * Math.PI * next()) / 2 ** 32);
  const shiftRow = new Float64Array(alphaRow.length);
  const shiftCol = new Float64Array(alphaRow.length);
  for (let k = 0; k < alphaRow.length; k++) {
    const [sr, sc] = modelShift(truth, alphaRow[k], alphaCol[k], rotation, transpose);
    shiftRow[k] = sr + noise * gauss();
    shiftCol[k] = sc + noise * gauss();
  }
  return { alphaRow, alphaCol, shiftRow, shiftCol, valid: new Uint8Array(alphaRow.length).fill(1) };
}

describe('aberration fit', () => {
  it('least squares recovers an exactly consistent system with zero residual', () => {
    const A = Float64Array.from([1, 0, 1, 1, 1, 2, 1, 3]);
    const { x, rss } = leastSquares(A, Float64Array.from([1, 3, 5, 7]), 4, 2);
    expect(x[0]).toBeCloseTo(1, 12);
    expect(x[1]).toBeCloseTo(2, 12);
    expect(rss).toBeLessThan(1e-20);
  });

  it('recovers all 27 coefficients to fifth order, the rotation and the transpose from exact shifts', () => {
    for (const [rotation, transpose] of [
      [0.3, false],
      [-1.2, true],
    ] as const) {
      const s = samples(rotation, transpose);
      expect(s.alphaRow.length).toBe(7525);
      const fit = fitAberrations(s);
      expect(fit.transpose).toBe(transpose);
      expect(Math.abs(fit.rotation - rotation)).toBeLessThan(1e-7);
      for (const p of parameters(5)) {
        expect(Math.abs(fit.coefficients[p.name] - truth[p.name])).toBeLessThan(
          1e-5 * Math.abs(truth[p.name]),
        );
      }
      expect(fit.rms).toBeLessThan(1e-9);
      expect(fit.orders.map((o) => o.order)).toEqual([1, 2, 3, 4, 5]);
    }
  });

  it('with noisy shifts, the truth lies within 4 sigma and repeated fits are bit-identical', () => {
    const s = samples(0.1, false, 0.05, 3);
    const fit = fitAberrations(s);
    for (const p of parameters(5)) {
      expect(Math.abs(fit.coefficients[p.name] - truth[p.name])).toBeLessThan(4 * fit.sigma[p.name]);
    }
    expect(fit.rms).toBeGreaterThan(0.06);
    expect(fit.rms).toBeLessThan(0.08);
    const again = fitAberrations(samples(0.1, false, 0.05, 3));
    expect(again.coefficients).toEqual(fit.coefficients);
    expect(again.sigma).toEqual(fit.sigma);
    expect(again.rotation).toBe(fit.rotation);
  });

  it('rejects outliers and refuses too few shifts', () => {
    const s = samples(0.1, false);
    s.shiftRow[100] += 50;
    s.shiftCol[200] -= 80;
    const fit = fitAberrations(s);
    expect(fit.used).toBe(s.alphaRow.length - 2);
    expect(Number.isNaN(fit.residualRow[100])).toBe(true);
    expect(Math.abs(fit.coefficients.C10 - truth.C10)).toBeLessThan(1e-3);
    s.valid.fill(0, 5);
    try {
      fitAberrations(s);
      expect.unreachable();
    } catch (e) {
      expect(isStemflowError(e, 'invalid')).toBe(true);
    }
  });
});
