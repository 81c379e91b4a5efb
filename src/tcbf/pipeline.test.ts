import { describe, expect, it } from 'vitest';
import { isStemflowError } from '../errors.ts';
import { selectBrightField } from './bright-field.ts';
import { createCpuBackend } from './cpu-backend.ts';
import { tcbfGrid } from './grid.ts';
import { polar } from './optics.ts';
import { runTcbf, type TcbfOptions } from './pipeline.ts';
import type { SimulationSpec } from './simulate.ts';
import { baseSpec, brightField, type ResidentScan, residentScan } from './test-support.ts';

const deg = Math.PI / 180;

async function run(scan: ResidentScan, margin: number, options: Partial<TcbfOptions> = {}, taper = 0) {
  const bf = brightField(scan, margin);
  const { scanRows, scanCols } = scan.spec;
  const backend = createCpuBackend({
    layout: scan.layout,
    resident: scan.resident,
    pixels: bf.pixels,
    invMean: bf.invMean,
    grid: tcbfGrid(scanRows, scanCols, taper),
  });
  const result = await runTcbf(
    backend,
    bf,
    { rows: scanRows, cols: scanCols },
    { step: scan.spec.step, lambda: scan.sim.lambda, alpha0: scan.spec.alpha0, maxOrder: 1, ...options },
  );
  return { bf, result };
}

function correlation(a: Float64Array, b: Float64Array): number {
  const mean = (x: Float64Array) => x.reduce((s, v) => s + v, 0) / x.length;
  const ma = mean(a);
  const mb = mean(b);
  let ab = 0;
  let aa = 0;
  let bb = 0;
  for (let i = 0; i < a.length; i++) {
    ab += (a[i] - ma) * (b[i] - mb);
    aa += (a[i] - ma) ** 2;
    bb += (b[i] - mb) ** 2;
  }
  return ab / Math.sqrt(aa * bb);
}

/** The object phase at the scan positions (step = 2 dx, no rotation). */
function phaseAtPositions(scan: ResidentScan): Float64Array {
  const { scanRows, scanCols, window } = scan.spec;
  return Float64Array.from({ length: scanRows * scanCols }, (_, i) => {
    const r = Math.floor(i / scanCols);
    const c = i % scanCols;
    return scan.sim.phase[2 * r * window + 2 * c];
  });
}

describe('tcBF on a simulated weak phase object (300 kV, 15 mrad, 32 x 32 scan, noiseless)', () => {
  const base = residentScan(baseSpec());

  it('selects the bright-field disk from the mean pattern', () => {
    const bf = brightField(base, 0);
    expect(bf.pixels.length).toBe(437);
    expect(Math.abs(bf.centreRow - 32)).toBeLessThan(0.01);
    expect(Math.abs(bf.centreCol - 32)).toBeLessThan(0.01);
    expect(Math.abs(bf.radius - 12)).toBeLessThan(0.3);
    expect(brightField(base, 6).pixels.length).toBe(101);
    const flagged = new Uint8Array(64 * 64);
    flagged[32 * 64 + 32] = 1;
    const masked = selectBrightField(base.sums, 64, 64, 1024, { alpha0: 0.015, margin: 6, flagged });
    expect(masked.pixels.length).toBe(100);
    expect(Array.from(masked.pixels)).not.toContain(32 * 64 + 32);
    // An unflagged hot pixel neither moves the disk nor is selected.
    const hot = Float64Array.from(base.sums);
    hot[33 * 64 + 31] *= 50;
    const withHot = selectBrightField(hot, 64, 64, 1024, { alpha0: 0.015, margin: 6 });
    expect(withHot.pixels.length).toBe(100);
    expect(Array.from(withHot.pixels)).not.toContain(33 * 64 + 31);
    expect(Math.abs(withHot.centreRow - 32)).toBeLessThan(0.05);
  });

  it('recovers defocus, two-fold astigmatism and the rotation; phase flipping improves the image', async () => {
    const { result } = await run(base, 6);
    const { fit } = result;
    expect(fit.transpose).toBe(false);
    expect(Math.abs(fit.rotation)).toBeLessThan(0.5 * deg);
    expect(Math.abs(fit.coefficients.C10 / 200 - 1)).toBeLessThan(0.005);
    const c12 = polar(fit.coefficients, 1, 2);
    expect(Math.abs(c12.magnitude - 30)).toBeLessThan(0.5);
    expect(Math.abs(c12.angle - 25 * deg)).toBeLessThan(1 * deg);
    expect(fit.orders[0].rms).toBeLessThan(0.03);
    expect(result.valid.every((v) => v === 1)).toBe(true);
    const phase = phaseAtPositions(base);
    const tcbf = correlation(
      Float64Array.from({ length: 1024 }, (_, i) => result.tcbf[Math.floor(i / 32) * 2 * 64 + (i % 32) * 2]),
      phase,
    );
    const flipped = correlation(
      Float64Array.from(
        { length: 1024 },
        (_, i) => result.phaseFlip[Math.floor(i / 32) * 2 * 64 + (i % 32) * 2],
      ),
      phase,
    );
    expect(result.imageRows).toBe(64);
    expect(flipped).toBeGreaterThan(0.8);
    expect(flipped).toBeGreaterThan(tcbf + 0.2);
    expect(result.frc.informationLimit).toBeGreaterThan(0.5);
    expect(Object.keys(result.timings)).toEqual([
      'preparation',
      'initial fit',
      'fit to fifth order',
      'reconstruction',
    ]);
  });

  it('repeated runs are bit-identical', async () => {
    const a = (await run(base, 6, { factor: 1 })).result;
    const b = (await run(base, 6, { factor: 1 })).result;
    expect(b.shiftRow).toEqual(a.shiftRow);
    expect(b.fit.coefficients).toEqual(a.fit.coefficients);
    expect(b.tcbf).toEqual(a.tcbf);
    expect(b.phaseFlip).toEqual(a.phaseFlip);
  });

  it('with Poisson noise at 1e5 e/Å^2: defocus within 2 %, astigmatism within 2 Å (3 sigma) and 2 degrees', async () => {
    const noisy = residentScan(baseSpec({ poisson: true, countsPerFrame: 1e5 * 0.25, seed: 11 }));
    const { result } = await run(noisy, 6);
    const c12 = polar(result.fit.coefficients, 1, 2);
    expect(Math.abs(result.fit.coefficients.C10 / 200 - 1)).toBeLessThan(0.02);
    expect(Math.abs(c12.magnitude - 30)).toBeLessThan(Math.min(2, 3 * result.fit.sigma.C12a));
    expect(Math.abs(c12.angle - 25 * deg)).toBeLessThan(2 * deg);
    expect(Math.abs(result.fit.coefficients.C10 - 200)).toBeLessThan(3 * result.fit.sigma.C10);
  });

  it('finds a transposed detector', async () => {
    const { result } = await run(residentScan(baseSpec({ transpose: true })), 6);
    expect(result.fit.transpose).toBe(true);
    expect(Math.abs(result.fit.coefficients.C10 / 200 - 1)).toBeLessThan(0.005);
    expect(Math.abs(polar(result.fit.coefficients, 1, 2).angle - 25 * deg)).toBeLessThan(1 * deg);
  });

  it('finds a rotated scan; coefficient angles are in the scan frame', async () => {
    const { result } = await run(residentScan(baseSpec({ scanRotation: 30 * deg })), 6, {}, 4);
    expect(Math.abs(result.fit.rotation + 30 * deg)).toBeLessThan(0.5 * deg);
    expect(Math.abs(result.fit.coefficients.C10 / 200 - 1)).toBeLessThan(0.02);
    const c12 = polar(result.fit.coefficients, 1, 2);
    expect(Math.abs(c12.magnitude - 30)).toBeLessThan(1);
    expect(Math.abs(c12.angle - (25 - 30) * deg)).toBeLessThan(1 * deg);
  });

  it('recovers coma and three-fold astigmatism (second order, inner half, low-passed)', async () => {
    const spec: SimulationSpec = baseSpec({ aberrations: { C10: 200, C21a: 300, C23b: 200 }, qc: 0.3 });
    const { result } = await run(residentScan(spec), 6, { maxOrder: 2, lowpass: 0.25 });
    const c = result.fit.coefficients;
    expect(Math.abs(c.C10 / 200 - 1)).toBeLessThan(0.01);
    expect(Math.hypot(c.C21a - 300, c.C21b)).toBeLessThan(0.15 * 300);
    expect(Math.hypot(c.C23a, c.C23b - 200)).toBeLessThan(0.05 * 200);
    expect(result.fit.orders.map((o) => o.order)).toEqual([1, 2]);
  });

  it('refuses invalid options with a typed error', async () => {
    for (const bad of [
      { step: 0 },
      { lambda: Number.NaN },
      { factor: 64 },
      { factor: 1.5 },
      { maxOrder: 6 },
      { trials: 0 },
    ]) {
      await expect(run(base, 6, bad)).rejects.toSatisfy((e) => isStemflowError(e, 'invalid'));
    }
  });

  it('stops with an aborted error when cancelled', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(run(base, 6, { signal: controller.signal })).rejects.toSatisfy((e) =>
      isStemflowError(e, 'aborted'),
    );
  });
});
