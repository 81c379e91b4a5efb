import { describe, expect } from 'vitest';
import { isStemflowError } from '../errors';
import { nodeGpu } from '../gpu/node-gpu';
import { withGpu } from '../gpu/test-harness';
import { nodeInput } from '../source/node-input';
import { fixture, loadOracle } from '../testing/fixtures';
import { createAcquisitionService } from './acquisition-service';

const arina = loadOracle().acquisitions.arina;
const arinaPaths = [arina.master, ...arina.shards].map(fixture);

describe('acquisition service on WebGPU (the worker logic with a GPU)', () => {
  withGpu('loads through the GPU graph and answers virtual images exactly, like the CPU path', async () => {
    const gpu = createAcquisitionService({ gpu: nodeGpu(), gpuBatchFrames: 64 });
    const cpu = createAcquisitionService();
    await gpu.openInputs(await Promise.all(arinaPaths.map(nodeInput)));
    await cpu.openInputs(await Promise.all(arinaPaths.map(nodeInput)));
    const stages = new Set<string | undefined>();
    const g = await gpu.load((p) => stages.add(p.stage));
    const c = await cpu.load();
    expect(g.backend).toBe('webgpu');
    expect(c.backend).toBe('cpu');
    expect(stages.has('decode')).toBe(true);
    expect(g.memory?.[0]).toMatch(/^resident /);
    expect(Array.from(g.frameTotals)).toEqual(Array.from(c.frameTotals));
    expect(Array.from(g.sumDiffraction)).toEqual(Array.from(c.sumDiffraction));
    expect([g.maxCount, g.countAbove255]).toEqual([c.maxCount, c.countAbove255]);
    const ring = new Uint8Array(96 * 96);
    for (let y = 0; y < 96; y++)
      for (let x = 0; x < 96; x++)
        if ((x - 47) ** 2 + (y - 48) ** 2 <= 30 ** 2 && (x - 47) ** 2 + (y - 48) ** 2 > 12 ** 2)
          ring[y * 96 + x] = 1;
    expect(Array.from(await gpu.virtualImage(ring))).toEqual(Array.from(await cpu.virtualImage(ring)));
    expect(await gpu.frame(24)).toEqual(await cpu.frame(24));
    // Centre of mass (DPC): the GPU's bit-mask route and the CPU twin give the same exact sums and images.
    const bf = new Uint8Array(96 * 96);
    for (let y = 0; y < 96; y++)
      for (let x = 0; x < 96; x++) if ((x - 47.3) ** 2 + (y - 47.8) ** 2 <= 18 ** 2) bf[y * 96 + x] = 1;
    bf[arina.pixel_mask.flagged_indices[3]] = 1;
    const gs = await gpu.comSums(bf);
    const cs = await cpu.comSums(bf);
    expect([Array.from(gs.total), Array.from(gs.sumX), Array.from(gs.sumY)]).toEqual([
      Array.from(cs.total),
      Array.from(cs.sumX),
      Array.from(cs.sumY),
    ]);
    const gc = await gpu.com(bf, [47.3, 47.8]);
    const cc = await cpu.com(bf, [47.3, 47.8]);
    expect(Array.from(gc.comX)).toEqual(Array.from(cc.comX));
    expect(Array.from(gc.comY)).toEqual(Array.from(cc.comY));
    expect(gc.comX.every((v) => Math.abs(v) < 5)).toBe(true);
    // A second load reuses the first one's resident buffers (kept by the service's pool), exact again; close
    // frees everything, the pool included.
    expect(g.residentReused).toBe(0);
    const memory = await gpu.gpuMemory();
    const again = await gpu.load();
    expect(again.residentReused).toBeGreaterThan(0);
    expect(Array.from(again.frameTotals)).toEqual(Array.from(c.frameTotals));
    expect(Array.from(await gpu.virtualImage(ring))).toEqual(Array.from(await cpu.virtualImage(ring)));
    expect(await gpu.gpuMemory()).toEqual(memory);
    await gpu.close();
    expect(await gpu.gpuMemory()).toEqual({ buffers: 0, bytes: 0 });
    await cpu.close();
  });

  withGpu('a cancelled load rejects as aborted and the next load works', async () => {
    const service = createAcquisitionService({ gpu: nodeGpu(), gpuBatchFrames: 64 });
    await service.openInputs([await nodeInput(fixture('many_ext_u16_32.h5'))]);
    const pending = service.load((p) => {
      if (p.stage === 'decode') void service.cancel();
    });
    const e = await pending.catch((x) => x);
    expect(isStemflowError(e, 'aborted')).toBe(true);
    const again = await service.load();
    expect(again.backend).toBe('webgpu');
    expect(Array.from(again.frameTotals)).toEqual(
      loadOracle().files['many_ext_u16_32.h5'].datasets['/data'].frame_sums,
    );
    await service.close();
  });

  withGpu('chunks the GPU decoder does not take go to the CPU path, and the result says why', async () => {
    const service = createAcquisitionService({ gpu: nodeGpu() });
    await service.openInputs([await nodeInput(fixture('gzip_u16_32.h5'))], undefined, '/gzip');
    const r = await service.load();
    expect(r.backend).toBe('cpu');
    expect(r.fallbackReason).toMatch(/bitshuffle\/LZ4 chunks only/);
    await service.close();
  });

  withGpu(
    'an injected out-of-memory releases every buffer and hands the load to the CPU path, exactly',
    async () => {
      const service = createAcquisitionService({ gpu: nodeGpu(), gpuBatchFrames: 64 });
      await service.openInputs(await Promise.all(arinaPaths.map(nodeInput)));
      const first = await service.load();
      expect(first.backend).toBe('webgpu');
      const loaded = await service.gpuMemory();
      expect(loaded.buffers).toBeGreaterThan(0);
      await service.close();
      const empty = await service.gpuMemory();
      expect(empty).toEqual({ buffers: 0, bytes: 0 });
      await service.openInputs(await Promise.all(arinaPaths.map(nodeInput)));
      await service.injectFault('gpu-out-of-memory');
      const r = await service.load();
      expect(r.backend).toBe('cpu');
      expect(r.fallbackReason).toMatch(/The GPU ran out of memory allocating the load .*injected fault/);
      expect(await service.gpuMemory()).toEqual(empty);
      expect(Array.from(r.frameTotals)).toEqual(arina.unflagged.frame_sums);
      // The fault was one-shot: the next load is on the GPU again.
      expect((await service.load()).backend).toBe('webgpu');
      await service.close();
      expect(await service.gpuMemory()).toEqual(empty);
    },
  );

  withGpu('a memory budget refuses a load on both paths before allocation, with the numbers', async () => {
    const service = createAcquisitionService({ gpu: nodeGpu(), gpuBatchFrames: 64 });
    await service.openInputs(await Promise.all(arinaPaths.map(nodeInput)));
    await service.setMemoryBudget(512 * 1024);
    const e = await service.load().catch((x) => x);
    expect(isStemflowError(e, 'budget')).toBe(true);
    expect(e.message).toMatch(
      /1\.05 MiB of counts, more than the 0\.50 MiB .*; the GPU path refused it too: /,
    );
    expect(await service.gpuMemory()).toEqual({ buffers: 0, bytes: 0 });
    await expect(service.setMemoryBudget(-1)).rejects.toThrow(/positive number of bytes/);
    await service.setMemoryBudget(null);
    const r = await service.load();
    expect(r.backend).toBe('webgpu');
    expect(Array.from(r.frameTotals)).toEqual(arina.unflagged.frame_sums);
    await service.close();
  });
});
