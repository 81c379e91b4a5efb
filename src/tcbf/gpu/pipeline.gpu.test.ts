/**
 * The whole tcBF pipeline on WebGPU against the same pipeline on the CPU twins, on the simulated scan of
 * docs/tcbf.md (resident buffers built directly from the simulated counts): the same shifts within 0.01 px,
 * the same coefficients within 0.1 %, the same images within 1e-3 of their range; bit-identical repeats on the
 * GPU; every buffer freed.
 */
import { describe, expect } from 'vitest';
import { isStemflowError } from '../../errors.ts';
import { trackBuffers, withGpu } from '../../gpu/test-harness.ts';
import { createCpuBackend } from '../cpu-backend.ts';
import { tcbfGrid } from '../grid.ts';
import { polar } from '../optics.ts';
import { runTcbf, type TcbfOptions } from '../pipeline.ts';
import { baseSpec, brightField, residentScan } from '../test-support.ts';
import { createGpuBackend } from './gpu-backend.ts';
import { planTcbf } from './plan.ts';

const deg = Math.PI / 180;

describe('tcBF pipeline on WebGPU', () => {
  // Several resident buffers (pixelsPerBufferLimit) and, below, several spectra buffers and batches.
  const scan = residentScan(baseSpec(), 1000);
  const bf = brightField(scan, 6);
  const grid = tcbfGrid(32, 32, 0);
  const options: TcbfOptions = { step: 0.5, lambda: scan.sim.lambda, alpha0: 0.015, maxOrder: 1, factor: 2 };

  withGpu(
    'matches the CPU twins, recovers the aberrations, repeats bit-identically and frees its buffers',
    async (ctx) => {
      expect(scan.layout.rowBuffers).toBe(5);
      const cpu = await runTcbf(
        createCpuBackend({
          layout: scan.layout,
          resident: scan.resident,
          pixels: bf.pixels,
          invMean: bf.invMean,
          grid,
        }),
        bf,
        { rows: 32, cols: 32 },
        options,
      );
      const resident = scan.resident.map((w) => ctx.upload(w));
      const tracker = trackBuffers(ctx.device);
      const results = [];
      try {
        for (let repeat = 0; repeat < 2; repeat++) {
          const backend = createGpuBackend({
            device: ctx.device,
            layout: scan.layout,
            resident,
            pixels: bf.pixels,
            invMean: bf.invMean,
            grid,
            bufferBytesLimit: 20 * 32 * 32 * 8,
            scratchBytes: 8 * 32 * 32 * 8,
          });
          expect(backend.plan.spectraImages).toEqual([40, 40, 21]);
          expect(backend.plan.batch).toBe(16);
          expect(backend.plan.spectraBytes).toBe((20 + 20 + 11) * 32 * 32 * 8);
          try {
            results.push(await runTcbf(backend, bf, { rows: 32, cols: 32 }, options));
          } finally {
            backend.dispose();
          }
        }
        expect(tracker.alive()).toBe(0);
      } finally {
        tracker.stop();
      }
      const [gpu, again] = results;
      expect(again.shiftRow).toEqual(gpu.shiftRow);
      expect(again.fit.coefficients).toEqual(gpu.fit.coefficients);
      expect(again.tcbf).toEqual(gpu.tcbf);
      expect(again.phaseFlip).toEqual(gpu.phaseFlip);

      let shiftError = 0;
      for (let k = 0; k < bf.pixels.length; k++) {
        shiftError = Math.max(
          shiftError,
          Math.abs(gpu.shiftRow[k] - cpu.shiftRow[k]),
          Math.abs(gpu.shiftCol[k] - cpu.shiftCol[k]),
        );
      }
      expect(shiftError).toBeLessThan(0.01);
      expect(Math.abs(gpu.fit.coefficients.C10 / cpu.fit.coefficients.C10 - 1)).toBeLessThan(1e-3);
      expect(Math.abs(gpu.fit.rotation - cpu.fit.rotation)).toBeLessThan(0.05 * deg);
      expect(Math.abs(gpu.fit.coefficients.C10 / 200 - 1)).toBeLessThan(0.005);
      const c12 = polar(gpu.fit.coefficients, 1, 2);
      expect(Math.abs(c12.magnitude - 30)).toBeLessThan(0.5);
      expect(Math.abs(c12.angle - 25 * deg)).toBeLessThan(1 * deg);
      for (const key of ['tcbf', 'phaseFlip'] as const) {
        let range = 0;
        let error = 0;
        for (let i = 0; i < cpu[key].length; i++) {
          range = Math.max(range, Math.abs(cpu[key][i]));
          error = Math.max(error, Math.abs(gpu[key][i] - cpu[key][i]));
        }
        expect(error).toBeLessThan(1e-3 * range);
      }
    },
    120_000,
  );

  withGpu('refuses a plan above the budget before allocating', async (ctx) => {
    const resident = Array.from({ length: scan.layout.bufferBytes.length }, () => ctx.storage(16));
    const tracker = trackBuffers(ctx.device);
    try {
      expect(() =>
        createGpuBackend({
          device: ctx.device,
          layout: scan.layout,
          resident: [],
          pixels: bf.pixels,
          invMean: bf.invMean,
          grid,
        }),
      ).toThrow(/resident layout has \d+ buffers, not 0/);
      try {
        createGpuBackend({
          device: ctx.device,
          layout: scan.layout,
          resident,
          pixels: bf.pixels,
          invMean: bf.invMean,
          grid,
          budgetBytes: 2 ** 18,
        });
        expect.unreachable();
      } catch (e) {
        expect(isStemflowError(e, 'budget')).toBe(true);
      }
      expect(tracker.created()).toBe(0);
    } finally {
      tracker.stop();
    }
    // The benchmark's plan: 7,644 images of 512 x 512 in 2 GiB bindings.
    const plan = planTcbf({
      count: 7644,
      rows: 512,
      cols: 512,
      factor: 2,
      maxBindingBytes: 2 ** 31 - 4,
      maxBufferBytes: 2 ** 40,
    });
    expect(plan.imagesPerBuffer).toBe(2046);
    expect(plan.spectraImages).toEqual([2046, 2046, 2046, 1506]);
    expect(plan.spectraBytes).toBe(3822 * 2 ** 21);
  });
});
