import { afterAll, expect, it } from 'vitest';
import { gpuTestContext, runGpuTest, withGpu } from './test-harness.ts';

afterAll(async () => (await gpuTestContext()).destroy());

it('fails a test body that makes an invalid GPU call', async () => {
  const base = await gpuTestContext();
  const run = runGpuTest(base, async (ctx) => {
    ctx.createBuffer({ size: 4, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.STORAGE });
  });
  await expect(run).rejects.toThrow(/The GPU reported 1 error/);
  expect(base.failure()).toBeUndefined();
});

it('destroys the buffers a test made', async () => {
  const base = await gpuTestContext();
  let kept: GPUBuffer | undefined;
  await runGpuTest(base, async (ctx) => {
    kept = ctx.storage(16);
  });
  base.device.pushErrorScope('validation');
  base.device.queue.writeBuffer(kept!, 0, new Uint32Array(4));
  base.device.queue.submit([]);
  const error = await base.device.popErrorScope();
  expect(error?.message).toMatch(/destroyed/);
});

withGpu('uploads and reads back odd-sized and 64-bit arrays', async (ctx) => {
  const bytes = Uint8Array.from([1, 2, 3, 250, 251]);
  expect(await ctx.readBack(ctx.upload(bytes), Uint8Array, 5)).toEqual(bytes);
  const big = BigUint64Array.from([0n, 2n ** 63n + 5n, 2n ** 40n]);
  expect(await ctx.readBack(ctx.upload(big), BigUint64Array)).toEqual(big);
});
