import { afterAll, describe, expect, it } from 'vitest';
import { isStemflowError } from '../errors.ts';
import { acquireDevice, deviceOnDemand, type GpuContext, MAXIMISED_LIMITS } from './device.ts';
import { nodeGpu } from './node-gpu.ts';

const opened: GpuContext[] = [];
afterAll(() => {
  for (const ctx of opened) ctx.destroy();
});

async function open(options?: Parameters<typeof acquireDevice>[1]): Promise<GpuContext> {
  const ctx = await acquireDevice(nodeGpu(), options);
  opened.push(ctx);
  return ctx;
}

describe('acquireDevice', () => {
  it("requests the adapter's maximum limits and its optional features", async () => {
    const adapter = await nodeGpu().requestAdapter();
    expect(adapter, 'no adapter: source scripts/gpu-env.sh (VK_ICD_FILENAMES)').toBeTruthy();
    const ctx = await open();
    const max = adapter!.limits as unknown as Record<string, number>;
    for (const name of MAXIMISED_LIMITS) expect(ctx.limits[name], name).toBe(max[name]);
    for (const f of ['subgroups', 'timestamp-query'])
      expect(ctx.features.has(f)).toBe(adapter!.features.has(f));
    expect(typeof ctx.adapter.isFallbackAdapter).toBe('boolean');
    expect(ctx.adapter.description.length + ctx.adapter.vendor.length).toBeGreaterThan(0);
  });

  it('accepts extra limits within the adapter', async () => {
    const ctx = await open({ requiredLimits: { maxComputeWorkgroupSizeX: 128 } });
    expect(ctx.limits.maxComputeWorkgroupSizeX).toBeGreaterThanOrEqual(128);
  });

  it("refuses a limit above the adapter's with a 'budget' error", async () => {
    const huge = { maxBufferSize: 2 ** 52 };
    await expect(acquireDevice(nodeGpu(), { requiredLimits: huge })).rejects.toSatisfy((e) =>
      isStemflowError(e, 'budget'),
    );
  });

  it("turns a missing adapter into a 'device' error", async () => {
    const gpu = { requestAdapter: async () => null } as unknown as GPU;
    await expect(acquireDevice(gpu)).rejects.toSatisfy(
      (e) => isStemflowError(e, 'device') && /No WebGPU adapter/.test((e as Error).message),
    );
  });

  it("records an uncaptured error as a 'device' failure", async () => {
    const ctx = await open();
    expect(ctx.failure()).toBeUndefined();
    ctx.device.createBuffer({ size: 4, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.STORAGE });
    for (let i = 0; i < 50 && !ctx.failure(); i++) await new Promise((r) => setTimeout(r, 20));
    expect(ctx.failure()?.kind).toBe('device');
    expect(() => ctx.throwIfFailed()).toThrow(/The GPU reported an error/);
  });

  it('resolves `lost` on destroy without recording a failure', async () => {
    const ctx = await acquireDevice(nodeGpu());
    ctx.destroy();
    const lost = await ctx.lost;
    expect(lost.kind).toBe('device');
    expect(ctx.failure()).toBeUndefined();
  });
});

describe('deviceOnDemand', () => {
  it('keeps one device, requests a new one after a loss or a failed request', async () => {
    let requests = 0;
    let failNext = true;
    const get = deviceOnDemand(async () => {
      requests++;
      if (failNext) {
        failNext = false;
        throw new Error('no adapter yet');
      }
      const adapter = await nodeGpu().requestAdapter();
      return adapter!.requestDevice();
    });
    await expect(get()).rejects.toThrow(/no adapter yet/);
    const first = await get();
    expect(await get()).toBe(first);
    expect(requests).toBe(2);
    first.destroy();
    await first.lost;
    const second = await get();
    expect(second).not.toBe(first);
    expect(requests).toBe(3);
    // The new device works.
    const b = second.createBuffer({ size: 4, usage: GPUBufferUsage.COPY_DST | GPUBufferUsage.MAP_READ });
    second.queue.writeBuffer(b, 0, Uint32Array.of(7));
    await b.mapAsync(GPUMapMode.READ);
    expect(new Uint32Array(b.getMappedRange())[0]).toBe(7);
    second.destroy();
  });
});
