/**
 * One fixed-seed batch of the GPU fuzz target: 48 mutated bitshuffle/LZ4 chunks decoded by the WGSL pass in
 * one dispatch (the load's decode variant on this device: the parse pass and the list decode where the device
 * binds 10 storage buffers) must give the CPU twin's error codes, words, totals and audit, and the twin must
 * agree with the CPU codec (the full run is `npm run fuzz -- --targets gpu`, see docs/robustness.md).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { prepareGpu, runGpuCase } from './target-gpu.ts';

describe('fuzz smoke run on the GPU (fixed seed)', () => {
  let state: Awaited<ReturnType<typeof prepareGpu>> | undefined;
  afterAll(() => state?.ctx?.destroy());

  it('48 mutated chunks in one batch: GPU, twin and codec agree', async () => {
    state = await prepareGpu(48);
    for (const index of [0]) {
      const r = await runGpuCase(state, 20251129, index);
      expect(r.findings.map((f) => `${f.kind}: ${f.detail}`)).toEqual([]);
      expect(r.inputs).toBe(48);
    }
  });
});
