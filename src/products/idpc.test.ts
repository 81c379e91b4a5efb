import { describe, expect, it } from 'vitest';
import { fft, integrateDpc } from './idpc';

describe('iDPC (Fourier integration of the centre-of-mass field)', () => {
  it('the FFT matches a direct DFT and inverts', () => {
    const n = 16;
    const re = Float64Array.from({ length: n }, (_, i) => Math.sin(i * 0.7) + (i % 3));
    const im = new Float64Array(n);
    const [r0, i0] = [re.slice(), im.slice()];
    fft(re, im);
    for (let k = 0; k < n; k++) {
      let sr = 0;
      let si = 0;
      for (let t = 0; t < n; t++) {
        sr += r0[t] * Math.cos((-2 * Math.PI * k * t) / n);
        si += r0[t] * Math.sin((-2 * Math.PI * k * t) / n);
      }
      expect(re[k]).toBeCloseTo(sr, 10);
      expect(im[k]).toBeCloseTo(si, 10);
    }
    fft(re, im, true);
    for (let t = 0; t < n; t++) expect(re[t]).toBeCloseTo(r0[t], 12);
    expect(Math.max(...i0)).toBe(0);
  });

  it('recovers a periodic phase from its gradient (tolerance 1e-9), up to a constant', () => {
    const rows = 32;
    const cols = 64;
    const phase = (r: number, c: number) =>
      Math.sin((2 * Math.PI * c) / cols) * 3 + Math.cos((4 * Math.PI * r) / rows);
    const gx = new Float64Array(rows * cols);
    const gy = new Float64Array(rows * cols);
    const truth = new Float64Array(rows * cols);
    for (let r = 0; r < rows; r++) {
      for (let c = 0; c < cols; c++) {
        truth[r * cols + c] = phase(r, c);
        gx[r * cols + c] = ((2 * Math.PI) / cols) * 3 * Math.cos((2 * Math.PI * c) / cols);
        gy[r * cols + c] = ((-4 * Math.PI) / rows) * Math.sin((4 * Math.PI * r) / rows);
      }
    }
    const mean = truth.reduce((a, b) => a + b, 0) / truth.length;
    const got = integrateDpc(gx, gy, rows, cols, false);
    for (let i = 0; i < got.length; i++) expect(Math.abs(got[i] - (truth[i] - mean))).toBeLessThan(1e-9);
  });

  it('mirrored (any scan size), a linear ramp comes back as a ramp, and the DFT path agrees', () => {
    const rows = 20;
    const cols = 30;
    const gx = new Float64Array(rows * cols).fill(1);
    const gy = new Float64Array(rows * cols);
    const got = integrateDpc(gx, gy, rows, cols);
    const mid = Math.floor(rows / 2) * cols;
    // A constant gradient is a ramp of slope 1 (the mirrored field is a triangle wave, so away from the fold).
    for (let c = 6; c < cols - 7; c++) expect(got[mid + c + 1] - got[mid + c]).toBeCloseTo(1, 1);
  });
});
