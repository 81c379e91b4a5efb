import { describe, expect, it } from 'vitest';
import {
  aberrationW,
  cartesian,
  compileW,
  gradientBasis,
  gradientRows,
  parameters,
  polar,
  toScanFrame,
  wavelength,
} from './optics.ts';

describe('optics', () => {
  it('gives the relativistic wavelength', () => {
    expect(Math.abs(wavelength(300e3) - 0.019687)).toBeLessThan(1e-6);
    expect(Math.abs(wavelength(200e3) - 0.025079)).toBeLessThan(1e-6);
    expect(Math.abs(wavelength(80e3) - 0.041757)).toBeLessThan(1e-6);
  });

  it('has 27 parameters to fifth order, C01 first', () => {
    const names = parameters(5).map((p) => p.name);
    expect(names.length).toBe(27);
    expect(names.slice(0, 5)).toEqual(['C01a', 'C01b', 'C10', 'C12a', 'C12b']);
    expect(parameters(1).length).toBe(5);
  });

  it('gradient basis equals the numerical gradient of W for every parameter', () => {
    const h = 1e-7;
    for (const p of parameters(5)) {
      for (const [ar, ac] of [
        [0.011, -0.004],
        [-0.007, 0.013],
        [0.002, 0.0015],
      ]) {
        const W = (r: number, c: number) => aberrationW({ [p.name]: 1 }, r, c);
        const gr = (W(ar + h, ac) - W(ar - h, ac)) / (2 * h);
        const gc = (W(ar, ac + h) - W(ar, ac - h)) / (2 * h);
        const [br, bc] = gradientBasis(p, ar, ac);
        const size = Math.hypot(ar, ac) ** p.n;
        const row = new Float64Array(27);
        const col = new Float64Array(27);
        gradientRows(parameters(5), ar, ac, row, col);
        const j = parameters(5).findIndex((q) => q.name === p.name);
        expect(Math.abs(row[j] - br)).toBeLessThan(1e-12 * Math.max(1, size));
        expect(Math.abs(col[j] - bc)).toBeLessThan(1e-12 * Math.max(1, size));
        expect(Math.abs(br - gr)).toBeLessThan(1e-6 * size);
        expect(Math.abs(bc - gc)).toBeLessThan(1e-6 * size);
      }
    }
  });

  it('compiled W equals W', () => {
    const c = Object.fromEntries(
      parameters(5).map((p, i) => [p.name, (i + 1) * 10 ** p.n * (i % 2 ? -1 : 1)]),
    );
    const w = compileW(c);
    for (const [ar, ac] of [
      [0.011, -0.004],
      [-0.007, 0.013],
      [0, 0],
    ]) {
      expect(Math.abs(w(ar, ac) - aberrationW(c, ar, ac))).toBeLessThan(
        1e-12 * Math.max(1, Math.abs(aberrationW(c, ar, ac))),
      );
    }
  });

  it('defocus shifts along alpha, astigmatism by the symmetric matrix', () => {
    const [sr, sc] = gradientBasis(parameters(1)[2], 0.01, 0.02);
    expect(sr).toBeCloseTo(0.01, 15);
    expect(sc).toBeCloseTo(0.02, 15);
    // C12a: [[1, 0], [0, -1]] alpha; C12b: [[0, 1], [1, 0]] alpha.
    expect(gradientBasis(parameters(1)[3], 0.01, 0.02).map((v) => +v.toFixed(12))).toEqual([0.01, -0.02]);
    expect(gradientBasis(parameters(1)[4], 0.01, 0.02).map((v) => +v.toFixed(12))).toEqual([0.02, 0.01]);
  });

  it('converts polar and Cartesian forms', () => {
    const [a, b] = cartesian(30, (25 * Math.PI) / 180, 2);
    const back = polar({ C12a: a, C12b: b }, 1, 2);
    expect(back.magnitude).toBeCloseTo(30, 12);
    expect(back.angle).toBeCloseTo((25 * Math.PI) / 180, 12);
  });

  it('rotates and transposes detector angles into the scan frame', () => {
    const [r, c] = toScanFrame(1, 0, Math.PI / 2, false);
    expect(r).toBeCloseTo(0, 15);
    expect(c).toBeCloseTo(1, 15);
    expect(toScanFrame(1, 2, 0, true)).toEqual([2, 1]);
  });
});
