import { describe, expect, it } from 'vitest';
import { isStemflowError } from '../errors';
import { describePlan, planGpuLoad } from './load-plan';
import {
  DEFAULT_DECODE_VARIANT,
  DEFAULT_LOAD_DECODE_VARIANT,
  LOAD_DECODE_VARIANT_NO_SUBGROUPS,
} from './passes/bslz4-decode-variants';

const H200 = {
  maxBufferSize: 2 ** 40,
  maxStorageBufferBindingSize: 2 ** 31 - 4,
  maxStorageBuffersPerShaderStage: 10,
};

/** The plan of the full ARINA scan (512 x 512 x 192 x 192 uint16, 12,100-byte chunks) on the H200's limits. */
function fullScan(extra: Partial<Parameters<typeof planGpuLoad>[0]> = {}) {
  const frames = 512 * 512;
  return planGpuLoad({
    frames,
    detector: [192, 192],
    elemSize: 2,
    chunkSizes: new Uint32Array(frames).fill(12_100),
    limits: H200,
    ...extra,
  });
}

describe('GPU load memory plan', () => {
  it('plans the full ARINA scan with slot pools: low plane + 1/16 of the high plane + bitmap + table', () => {
    const frames = 512 * 512;
    const plan = fullScan();
    const pixels = 192 * 192;
    expect(plan.resident.high).toBe('slots');
    // 64 segments of 4,096 positions a pixel; pools of 4 slots a pixel (1/16), 4 KiB each.
    expect(plan.resident.hotSlots.reduce((a, b) => a + b)).toBe(pixels * 4);
    expect(plan.residentBytes).toBe(pixels * frames + pixels * 4 * 4096 + pixels * 8 + pixels * 64 * 4);
    expect(plan.maxPoolSlots.reduce((a, b) => a + b)).toBe(pixels * 64);
    // High scratch: a batch's high bytes (8,192 positions a pixel) and its own hot bits (a word a pixel) in
    // each of 3 slots; one decoded batch; two batches' chunks, index entries and lists (parsing ahead: batch k's
    // dispatch parses batch k + 1); the decode's scratch for one dispatch of 8,192 frames.
    expect(plan.batchFrames).toBe(8192);
    expect(plan.highScratchWordsPerPixel).toBe(2048);
    expect(plan.parseAhead).toBe(true);
    // (+ the pixel flags as bits: a word per 32 pixels.)
    expect(plan.decodeScratchBytes).toBe(8192 * 8192 + pixels / 8 + 2 * 8192 * 9 * (256 * 8 + 8));
    expect(plan.scratchBytes).toBe(
      2 * 8192 * 12_100 +
        8192 * pixels * 2 +
        2 * 8192 * 8 +
        3 * (pixels * (8192 + 4) + 16 * 5) +
        plan.decodeScratchBytes,
    );
    expect(plan.peakBytes).toBeLessThanOrEqual(1.1 * plan.residentBytes + 2 ** 30);
    expect(describePlan(plan)[0]).toMatch(
      /resident 9\.57 GiB = low plane 9\.00 GiB \+ high bytes in slot pools 576\.0 MiB \(147456 slots of 4096 positions; .* to at most 9\.00 GiB\) \+ hot bitmap 288\.0 KiB \+ slot table 9\.0 MiB/,
    );
  });

  it('a decoded slot of byte planes: 16 bytes more a frame, uint16 into byte-plane rows and a multi variant only', () => {
    const base = fullScan();
    const planes = fullScan({ decodedPlanes: true });
    expect([base.decodedPlanes, planes.decodedPlanes]).toEqual([false, true]);
    expect([base.wordsPerFrame, planes.wordsPerFrame]).toEqual([18432, 18436]);
    expect(planes.decodedSlotBytes - base.decodedSlotBytes).toBe(8192 * 16);
    expect(planes.peakBytes - base.peakBytes).toBe(8192 * 16);
    expect(describePlan(planes)[1]).toMatch(/ decoded \(byte planes\) \+/);
    expect(planes.peakBytes).toBeLessThanOrEqual(1.1 * planes.residentBytes + 2 ** 30);
    // Not for uint8 or uint32, nor for the fused decode.
    for (const elemSize of [1, 4] as const) {
      const plan = planGpuLoad({
        frames: 1024,
        detector: [192, 192],
        elemSize,
        chunkSizes: new Uint32Array(1024).fill(12_100),
        limits: H200,
        decodedPlanes: true,
      });
      expect(plan.decodedPlanes).toBe(false);
    }
    expect(fullScan({ decodedPlanes: true, decodeVariant: 'base' }).decodedPlanes).toBe(false);
  });

  it('copying ahead: a third set of index entries, nothing else, and only where batches are parsed ahead', () => {
    const base = fullScan();
    const ahead = fullScan({ copyAhead: true });
    expect([base.copyAhead, base.indexSets]).toEqual([false, 2]);
    expect([ahead.copyAhead, ahead.indexSets]).toEqual([true, 3]);
    expect(ahead.scratchBytes - base.scratchBytes).toBe(8192 * 8);
    expect(describePlan(ahead)[1]).toMatch(/ \+ 3 x 64\.0 KiB index/);
    expect(ahead.peakBytes).toBeLessThanOrEqual(1.1 * ahead.residentBytes + 2 ** 30);
    // Without parsing ahead, or with two batches, there is nothing to copy ahead of.
    expect(fullScan({ copyAhead: true, parseAhead: false }).copyAhead).toBe(false);
    const two = planGpuLoad({
      frames: 2 * 8192,
      detector: [192, 192],
      elemSize: 2,
      chunkSizes: new Uint32Array(2 * 8192).fill(12_100),
      limits: H200,
      copyAhead: true,
    });
    expect([two.batches, two.parseAhead, two.copyAhead, two.indexSets]).toEqual([2, true, false, 2]);
  });

  it('plans the full ARINA scan (512x512x192x192 uint16) within 1.1 x resident + 1 GiB', () => {
    const frames = 512 * 512;
    const plan = fullScan({ highPlane: 'full' });
    // Two byte planes and the hot bitmap (64 segments of 4,096 positions: 8 bytes per pixel).
    expect(plan.residentBytes).toBe(192 * 192 * frames * 2 + 192 * 192 * 8);
    expect(plan.resident.rowBuffers).toBe(5);
    expect(plan.batches).toBe(32);
    expect(plan.compressedSlotBytes).toBe(8192 * 12_100);
    expect(plan.decodedSlotBytes).toBe(8192 * 192 * 192 * 2);
    expect(plan.peakBytes).toBeLessThanOrEqual(1.1 * plan.residentBytes + 2 ** 30);
    expect(describePlan(plan)[4]).toMatch(
      /compacted after the load .* resident 9\.00 GiB \+ the hot segments \(4\.0 KiB each; .* at most 9\.00 GiB\); while compacting .* at most 20\.00 GiB/,
    );
    expect(describePlan(plan)[0]).toMatch(
      /resident 18\.00 GiB = low plane 9\.00 GiB \+ high plane 9\.00 GiB .* hot bitmap 288\.0 KiB .* in 5 buffer/,
    );
  });

  it('counts the decode scratch and lists of the default variant in scratch and peak, and prints them', () => {
    const plan = fullScan({ highPlane: 'full', subgroups: true });
    expect(plan.decodeVariant).toBe(DEFAULT_LOAD_DECODE_VARIANT);
    // scratch-keep-pat-listg-gf-zp-ba-mb-qx-wg32-x1-stage16, one dispatch a batch: 8,192 workgroups x 1 block in flight x
    // 8 KiB, the pixel flags as bits (36,864 / 32 words), and the lists of 8,192 x 9 blocks (256 sequences of 8
    // bytes and a verdict of 8 bytes each).
    // Parsing ahead (the default), two sets of lists, chunks and index entries.
    const lists = 8192 * 9 * (256 * 8 + 8);
    const flagBits = (192 * 192) / 8;
    expect(plan.decodeScratchBytes).toBe(8192 * 8192 + flagBits + 2 * lists);
    const batchBytes = 2 * 8192 * 12_100 + 8192 * 192 * 192 * 2 + 2 * 8192 * 8;
    expect(plan.scratchBytes).toBe(batchBytes + 8192 * 8192 + flagBits + 2 * lists);
    expect(plan.peakBytes).toBe(plan.residentBytes + plan.scratchBytes + plan.resultBytes);
    expect(describePlan(plan)[1]).toBe(
      "scratch 1.09 GiB: 2 x a batch's 94.5 MiB compressed (the next batch parsed while one decodes) + 576.0 MiB decoded + 2 x 64.0 KiB index + decode scratch 353.1 MiB (scratch-keep-pat-listg-gf-zp-ba-mb-qx-wg32-x1-stage16)",
    );
    // Without parsing ahead: one set of each.
    const single = fullScan({ highPlane: 'full', parseAhead: false, subgroups: true });
    expect(single.parseAhead).toBe(false);
    expect(plan.scratchBytes - single.scratchBytes).toBe(8192 * 12_100 + 8192 * 8 + lists);
    expect(describePlan(single)[1]).toBe(
      "scratch 879.2 MiB: a batch's 94.5 MiB compressed + 576.0 MiB decoded + 64.0 KiB index + decode scratch 208.6 MiB (scratch-keep-pat-listg-gf-zp-ba-mb-qx-wg32-x1-stage16)",
    );
    // A budget that only the plan without it fits: the load goes without, rather than being refused.
    const tight = fullScan({ highPlane: 'full', budgetBytes: single.peakBytes, subgroups: true });
    expect(tight.parseAhead).toBe(false);
    expect(tight.peakBytes).toBe(single.peakBytes);
    // The fused variant has no global scratch (nor lists to parse ahead); a small batch needs a small one.
    const base = fullScan({ highPlane: 'full', decodeVariant: 'base' });
    expect(base.decodeScratchBytes).toBe(0);
    expect(base.parseAhead).toBe(false);
    expect(single.peakBytes - base.peakBytes).toBe(8192 * 8192 + flagBits + lists);
    const small = planGpuLoad({
      frames: 100,
      detector: [4, 4],
      elemSize: 2,
      chunkSizes: new Uint32Array(100).fill(10),
      limits: H200,
      batchFrames: 64,
    });
    // (Two batches: parsed ahead, two sets of lists.)
    expect(small.parseAhead).toBe(true);
    expect(small.decodeScratchBytes).toBe(64 * 8192 + 4 + 2 * 64 * 1 * (256 * 8 + 8));
  });

  it('picks the list variant only where the device binds its 10 storage buffers a stage', () => {
    // 8 (the WebGPU default, or a device that says nothing): the default decode, no lists.
    for (const maxStorageBuffersPerShaderStage of [8, 9, undefined]) {
      const plan = fullScan({ highPlane: 'full', limits: { ...H200, maxStorageBuffersPerShaderStage } });
      expect(plan.decodeVariant).toBe(DEFAULT_DECODE_VARIANT);
      expect(plan.decodeScratchBytes).toBe(8192 * 2 * 8192 + (192 * 192) / 8);
    }
    // 10 or more: the list variant, with `qx` where the device has the `subgroups` feature.
    const limits = { ...H200, maxStorageBuffersPerShaderStage: 31 };
    expect(fullScan({ limits, subgroups: true }).decodeVariant).toBe(DEFAULT_LOAD_DECODE_VARIANT);
    for (const subgroups of [false, undefined]) {
      const plan = fullScan({ limits, subgroups });
      expect(plan.decodeVariant).toBe(LOAD_DECODE_VARIANT_NO_SUBGROUPS);
      expect(plan.scratchBytes).toBe(fullScan({ limits, subgroups: true }).scratchBytes);
    }
    expect(DEFAULT_LOAD_DECODE_VARIANT.replace('-qx', '')).toBe(LOAD_DECODE_VARIANT_NO_SUBGROUPS);
    // Asking for a list variant there is refused before anything is allocated.
    let error: unknown;
    try {
      fullScan({
        decodeVariant: DEFAULT_LOAD_DECODE_VARIANT,
        limits: { ...H200, maxStorageBuffersPerShaderStage: 8 },
      });
    } catch (e) {
      error = e;
    }
    expect(isStemflowError(error) && error.kind).toBe('budget');
    expect((error as Error).message).toBe(
      'decode variant scratch-keep-pat-listg-gf-zp-ba-mb-qx-wg32-x1-stage16 binds 10 storage buffers, more than this GPU allows in a shader stage (8)',
    );
  });

  it('sizes the compressed slot from the largest batch of the real chunk index', () => {
    const sizes = new Uint32Array(200).fill(10);
    sizes[150] = 1001;
    const plan = planGpuLoad({
      frames: 200,
      detector: [4, 4],
      elemSize: 2,
      chunkSizes: sizes,
      limits: H200,
      batchFrames: 64,
    });
    expect(plan.batches).toBe(4);
    expect(plan.compressedSlotBytes).toBe(1632); // 63 x 10 + 1001, rounded up to 4
  });

  it('refuses a load over the budget before allocating, with the numbers', () => {
    const sizes = new Uint32Array(4096).fill(5000);
    try {
      planGpuLoad({
        frames: 4096,
        detector: [192, 192],
        elemSize: 2,
        chunkSizes: sizes,
        limits: H200,
        highPlane: 'full',
        budgetBytes: 256 * 2 ** 20,
      });
      expect.unreachable();
    } catch (e) {
      expect(isStemflowError(e, 'budget')).toBe(true);
      expect((e as Error).message).toMatch(
        /needs 700\.3 MiB of GPU memory at peak \(288\.1 MiB resident .* budget of 256\.0 MiB/,
      );
    }
  });

  it('refuses a slot table that the device cannot bind, before allocating', () => {
    const frames = 512 * 512;
    const sizes = new Uint32Array(frames).fill(10);
    // 36,864 pixels x 2,048 segments of 128 positions x 4 B = 288 MiB of table.
    const limits = { maxBufferSize: 2 ** 40, maxStorageBufferBindingSize: 256 * 2 ** 20 };
    const plan = {
      frames,
      detector: [192, 192] as [number, number],
      elemSize: 2 as const,
      chunkSizes: sizes,
      limits,
      batchFrames: 1024,
    };
    expect(() => planGpuLoad({ ...plan, segmentFrames: 128 })).toThrow(
      /slot table needs 288\.0 MiB, more than this GPU binds at once \(256\.0 MiB\)/,
    );
    expect(planGpuLoad({ ...plan, segmentFrames: 128, highPlane: 'full' }).resident.high).toBe('full');
  });

  it('refuses a batch that the device cannot bind', () => {
    const sizes = new Uint32Array(4096).fill(5000);
    const small = { maxBufferSize: 2 ** 30, maxStorageBufferBindingSize: 128 * 2 ** 20 };
    expect(() =>
      planGpuLoad({ frames: 4096, detector: [192, 192], elemSize: 2, chunkSizes: sizes, limits: small }),
    ).toThrow(/decoded frames needs 288\.0 MiB, more than this GPU binds at once \(128\.0 MiB\)/);
  });
});
