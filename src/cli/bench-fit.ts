/**
 * `stemflow bench fit`: tcBF with aberration fitting on a synthetic acquisition held resident on the GPU (full
 * detector-major layout, 18 GiB for 512 x 512 x 192 x 192 uint16; the disk rows are written directly from the
 * generator in src/tcbf/synthetic-resident.ts instead of through an HDF5 load). Stages are timed separately
 * (preparation, initial fit, fit to fifth order, reconstruction); the fitted coefficients are checked against
 * the truth before any time is reported.
 */
import { writeFile } from 'node:fs/promises';
import { StemflowError } from '../errors';
import { acquireDevice } from '../gpu/device';
import { nodeGpu } from '../gpu/node-gpu';
import { createResidentBuffers } from '../gpu/passes/detector-transpose';
import { planResidentLayout } from '../gpu/resident-layout';
import { residentRow } from '../kernels/detector-transpose';
import { selectBrightField } from '../tcbf/bright-field';
import { createGpuBackend } from '../tcbf/gpu/gpu-backend';
import { tcbfGrid } from '../tcbf/grid';
import { cartesian, polar, wavelength } from '../tcbf/optics';
import { runTcbf, type TcbfResult } from '../tcbf/pipeline';
import { syntheticTcbf } from '../tcbf/synthetic-resident';

export interface BenchFitOptions {
  scan: number;
  det: number;
  radius: number;
  repeat: number;
  factor: number;
  json?: string;
}

const deg = Math.PI / 180;

/** Truth of the benchmark (Å): defocus, astigmatism, coma, three-fold, spherical. */
export const BENCH_ABERRATIONS = (() => {
  const [c12a, c12b] = cartesian(40, 30 * deg, 2);
  const [c21a, c21b] = cartesian(1500, -20 * deg, 1);
  const [c23a, c23b] = cartesian(1000, 10 * deg, 3);
  return { C10: 400, C12a: c12a, C12b: c12b, C21a: c21a, C21b: c21b, C23a: c23a, C23b: c23b, C30: 2e5 };
})();

export async function benchFit(o: BenchFitOptions): Promise<number> {
  const log = (s: string) => process.stdout.write(`${s}\n`);
  const volts = 300e3;
  const alpha0 = 0.02;
  const step = 1;
  const rotation = 15 * deg;
  const t = performance.now();
  const synthetic = syntheticTcbf({
    scan: o.scan,
    det: o.det,
    radius: o.radius,
    alpha0,
    step,
    rotation,
    aberrations: BENCH_ABERRATIONS,
    qc: 0.15,
    mean: 50,
    contrast: 0.25,
    seed: 20261129,
  });
  const ctx = await acquireDevice(nodeGpu());
  const { device } = ctx;
  log(`adapter: ${ctx.adapter.vendor} ${ctx.adapter.architecture} ${ctx.adapter.description}`);
  const frames = o.scan * o.scan;
  const layout = planResidentLayout({
    frames,
    pixels: o.det * o.det,
    elemSize: 2,
    maxBindingBytes: device.limits.maxStorageBufferBindingSize,
    maxBufferBytes: device.limits.maxBufferSize,
  });
  const resident = createResidentBuffers(device, layout, 'bench resident');
  let written = 0;
  const hot = new Uint32Array(layout.hotBytes / 4);
  synthetic.rows((pixel, row) => {
    for (const { buffer, wordOffset, words } of residentRow(layout, pixel, row, hot))
      device.queue.writeBuffer(resident[buffer], wordOffset * 4, words);
    written++;
  });
  if (hot.length) device.queue.writeBuffer(resident[2 * layout.rowBuffers], 0, hot);
  await device.queue.onSubmittedWorkDone();
  const setupMs = performance.now() - t;
  log(
    `synthetic ${o.scan}x${o.scan} x ${o.det}x${o.det} uint16 resident (${(layout.totalBytes / 2 ** 30).toFixed(2)} GiB in ${layout.rowBuffers} buffers), ${written} bright-field rows written in ${(setupMs / 1000).toFixed(1)} s`,
  );
  const lambda = wavelength(volts);
  const report: Record<string, unknown> = {
    command: `stemflow bench fit --scan ${o.scan} --det ${o.det} --radius ${o.radius} --factor ${o.factor}`,
    adapter: ctx.adapter,
    scan: [o.scan, o.scan],
    detector: [o.det, o.det],
    truth: { ...BENCH_ABERRATIONS, rotationDeg: 15 },
    setupMs,
    runs: [] as unknown[],
  };
  let status = 0;
  try {
    for (let run = 0; run < o.repeat; run++) {
      const start = performance.now();
      const bf = selectBrightField(synthetic.sums, o.det, o.det, frames, {
        alpha0,
        dTheta: synthetic.dTheta,
      });
      const selectMs = performance.now() - start;
      const backend = createGpuBackend({
        device,
        layout,
        resident,
        pixels: bf.pixels,
        invMean: bf.invMean,
        grid: tcbfGrid(o.scan, o.scan, 0),
        factor: o.factor,
      });
      let result: TcbfResult;
      const steps: Record<string, number> = {};
      try {
        result = await runTcbf(
          backend,
          bf,
          { rows: o.scan, cols: o.scan },
          {
            step,
            lambda,
            alpha0,
            factor: o.factor,
            onTrace: (name, ms) => {
              steps[name] = ms;
            },
          },
        );
      } finally {
        backend.dispose();
      }
      const totalMs = performance.now() - start;
      const timings = { ...result.timings, preparation: result.timings.preparation + selectMs };
      const c = result.fit.coefficients;
      const check = {
        rotationDeg: result.fit.rotation / deg,
        C10: c.C10,
        C12: polar(c, 1, 2).magnitude,
        phi12Deg: polar(c, 1, 2).angle / deg,
        C21: polar(c, 2, 1).magnitude,
        C23: polar(c, 2, 3).magnitude,
        C30: c.C30,
      };
      const ok =
        Math.abs(check.rotationDeg - 15) < 0.2 &&
        Math.abs(check.C10 / 400 - 1) < 0.01 &&
        Math.abs(check.C12 - 40) < 2 &&
        Math.abs(check.phi12Deg - 30) < 2 &&
        Math.abs(check.C21 / 1500 - 1) < 0.1 &&
        Math.abs(check.C23 / 1000 - 1) < 0.1 &&
        Math.abs(check.C30 / 2e5 - 1) < 0.1;
      (report.runs as unknown[]).push({
        bfPixels: bf.pixels.length,
        used: result.fit.used,
        timings,
        steps,
        totalMs,
        check,
        ok,
        rmsShiftA: result.fit.rms,
        orders: result.fit.orders,
        sigma: result.fit.sigma,
        informationLimit: result.frc.informationLimit,
        plan: backend.plan,
      });
      log(
        `run ${run + 1}: ${bf.pixels.length} BF px; ${Object.entries(timings)
          .map(([k, v]) => `${k} ${v.toFixed(0)} ms`)
          .join(', ')}; total ${totalMs.toFixed(0)} ms`,
      );
      log(
        `  steps: ${Object.entries(steps)
          .map(([k, v]) => `${k} ${v.toFixed(0)}`)
          .join(', ')} (ms)`,
      );
      log(
        `  rotation ${check.rotationDeg.toFixed(3)} deg, C10 ${check.C10.toFixed(2)} Å, C12 ${check.C12.toFixed(2)} Å @ ${check.phi12Deg.toFixed(2)} deg, C21 ${check.C21.toFixed(0)} Å, C23 ${check.C23.toFixed(0)} Å, C30 ${check.C30.toFixed(0)} Å; rms ${result.fit.rms.toFixed(4)} Å; FRC limit ${result.frc.informationLimit.toFixed(3)} 1/Å ${ok ? 'OK' : 'MISMATCH'}`,
      );
      if (!ok) status = 1;
    }
    // Preparation split: the first includes allocating the spectra, the second rebuilds them in place.
    const bf = selectBrightField(synthetic.sums, o.det, o.det, frames, { alpha0, dTheta: synthetic.dTheta });
    const backend = createGpuBackend({
      device,
      layout,
      resident,
      pixels: bf.pixels,
      invMean: bf.invMean,
      grid: tcbfGrid(o.scan, o.scan, 0),
      factor: o.factor,
    });
    try {
      const split: number[] = [];
      for (let i = 0; i < 2; i++) {
        const t0 = performance.now();
        await backend.prepare();
        await backend.flush();
        split.push(performance.now() - t0);
      }
      report.prepareWithAllocationMs = split[0];
      report.prepareInPlaceMs = split[1];
      log(`preparation with allocation ${split[0].toFixed(0)} ms, in place ${split[1].toFixed(0)} ms`);
    } finally {
      backend.dispose();
    }
  } finally {
    for (const b of resident) b.destroy();
    ctx.destroy();
  }
  if (o.json) await writeFile(o.json, `${JSON.stringify(report, null, 2)}\n`);
  if (status)
    throw new StemflowError('mismatch', 'The fitted aberrations differ from the truth of the benchmark.');
  return status;
}
