/**
 * tcBF through the acquisition service on the ARINA fixture: the GPU path (resident counts of the load) and the
 * CPU path (decoded frames) select the same bright-field pixels (flagged and hot pixels left out) and give the
 * same shifts, fit and images within the float32 tolerances of docs/tcbf.md; cancelling rejects as aborted.
 */
import { describe, expect } from 'vitest';
import { isStemflowError } from '../errors';
import { nodeGpu } from '../gpu/node-gpu';
import { withGpu } from '../gpu/test-harness';
import { nodeInput } from '../source/node-input';
import { fixture, loadOracle } from '../testing/fixtures';
import { createAcquisitionService } from './acquisition-service';

const arina = loadOracle().acquisitions.arina;
const arinaPaths = [arina.master, ...arina.shards].map(fixture);

describe('acquisition service: tcBF', () => {
  withGpu(
    'GPU and CPU paths agree; flagged and hot pixels are left out; cancel rejects as aborted',
    async () => {
      const gpu = createAcquisitionService({ gpu: nodeGpu(), gpuBatchFrames: 64 });
      const cpu = createAcquisitionService();
      await gpu.openInputs(await Promise.all(arinaPaths.map(nodeInput)));
      await cpu.openInputs(await Promise.all(arinaPaths.map(nodeInput)));
      expect((await gpu.load()).backend).toBe('webgpu');
      expect((await cpu.load()).backend).toBe('cpu');
      const request = { voltage: 300e3, alpha0: 0.02, step: 1, margin: 2, maxOrder: 1, factor: 1, taper: 0 };
      const stages: string[] = [];
      const g = await gpu.tcbf(request, (s) => stages.push(s));
      const c = await cpu.tcbf(request);
      expect(stages).toEqual(['preparation', 'initial fit', 'fit to fifth order', 'reconstruction']);
      expect([g.backend, c.backend]).toEqual(['webgpu', 'cpu']);
      expect(Array.from(g.bf.pixels)).toEqual(Array.from(c.bf.pixels));
      expect(g.bf.pixels.length).toBe(608);
      const selected = new Set(g.bf.pixels);
      for (const p of arina.pixel_mask.flagged_indices) expect(selected.has(p)).toBe(false);
      // The planted unflagged 65535 at (47, 47) in frame 24 makes that pixel hot.
      expect(selected.has(47 * 96 + 47)).toBe(false);
      for (let k = 0; k < g.shiftRow.length; k++) {
        expect(Math.abs(g.shiftRow[k] - c.shiftRow[k])).toBeLessThan(1e-4);
        expect(Math.abs(g.shiftCol[k] - c.shiftCol[k])).toBeLessThan(1e-4);
      }
      for (const name of Object.keys(c.fit.coefficients)) {
        expect(Math.abs(g.fit.coefficients[name] - c.fit.coefficients[name])).toBeLessThan(1e-4);
      }
      expect([g.imageRows, g.imageCols]).toEqual([6, 10]);
      let range = 0;
      let error = 0;
      for (let i = 0; i < c.tcbf.length; i++) {
        range = Math.max(range, Math.abs(c.tcbf[i]));
        error = Math.max(error, Math.abs(g.tcbf[i] - c.tcbf[i]), Math.abs(g.phaseFlip[i] - c.phaseFlip[i]));
      }
      expect(range).toBeGreaterThan(0);
      expect(error).toBeLessThan(1e-3 * range);

      // Each run's rejection is handled from the start: it may reject while the test awaits something else.
      const pending = gpu.tcbf(request).catch((e) => e);
      await gpu.cancelTcbf();
      expect(isStemflowError(await pending, 'aborted')).toBe(true);
      // Opening other files while a tcBF runs on the resident counts stops it (its counts are given back to
      // the pool and overwritten by the next load); the next acquisition's tcBF runs.
      const running = gpu.tcbf(request).catch((e) => e);
      await gpu.openInputs(await Promise.all(arinaPaths.map(nodeInput)));
      expect(isStemflowError(await running, 'aborted')).toBe(true);
      expect((await gpu.load()).backend).toBe('webgpu');
      expect(Array.from((await gpu.tcbf(request)).bf.pixels)).toEqual(Array.from(c.bf.pixels));
      await gpu.close();
      await cpu.close();
    },
  );
});
