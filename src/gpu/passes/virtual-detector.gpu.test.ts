import { describe, expect } from 'vitest';
import { type DetectorValues, virtualDetectorSums } from '../../kernels/virtual-detector.ts';
import { fullRange, rng, sparseCounts } from '../test-data.ts';
import { type GpuTestContext, withGpu } from '../test-harness.ts';
import { createVirtualDetectorPass, type ElemBytes, type VirtualDetectorWindow } from './virtual-detector.ts';

/** An annular mask (bright-field disc excluded) with a few flagged pixels, as 0/1 u32 per pixel. */
function annulus(rows: number, cols: number, seed: number): Uint32Array {
  const next = rng(seed);
  const mask = new Uint32Array(rows * cols);
  const r = Math.min(rows, cols) / 2;
  for (let y = 0; y < rows; y++) {
    for (let x = 0; x < cols; x++) {
      const d = Math.hypot(y - rows / 2 + 0.5, x - cols / 2 + 0.5);
      mask[y * cols + x] = d > r * 0.3 && d < r * 0.95 && next() % 50 !== 0 ? 1 : 0;
    }
  }
  return mask;
}

interface Case {
  values: DetectorValues;
  frames: number;
  mask: Uint32Array;
  /** Values per uploaded window (default: everything in one window). */
  windowElems?: number;
  maxFramesPerDispatch?: number;
  workgroupSize?: number;
}

/** Runs the pass over `values` cut into windows of `windowElems` values (each its own buffer). */
async function gpuSums(ctx: GpuTestContext, c: Case): Promise<BigUint64Array> {
  const pixels = c.mask.length;
  const total = c.frames * pixels;
  const windowElems = c.windowElems ?? total;
  const elemBytes = c.values.BYTES_PER_ELEMENT as ElemBytes;
  const pass = createVirtualDetectorPass(ctx.device, { elemBytes, workgroupSize: c.workgroupSize });
  const windows: VirtualDetectorWindow[] = [];
  for (let start = 0; start < total; start += windowElems) {
    const count = Math.min(windowElems, total - start);
    // A leading pad of 4 bytes checks elemOffset as well.
    const pad = 4 / elemBytes;
    const slot = new (c.values.constructor as new (n: number) => DetectorValues)(pad + count);
    slot.set(c.values.subarray(start, start + count), pad);
    windows.push({
      data: ctx.upload(slot),
      elemOffset: pad,
      elemCount: count,
      firstFrame: Math.floor(start / pixels),
      firstPixel: start % pixels,
    });
  }
  const sums = ctx.storage(c.frames * 8);
  pass.run({ mask: ctx.upload(c.mask), pixels, sums, windows, maxFramesPerDispatch: c.maxFramesPerDispatch });
  return ctx.readBack(sums, BigUint64Array);
}

async function check(ctx: GpuTestContext, c: Case): Promise<BigUint64Array> {
  const expected = virtualDetectorSums(c.values, c.frames, c.mask);
  const actual = await gpuSums(ctx, c);
  expect(actual.length).toBe(c.frames);
  const bad = actual.findIndex((v, i) => v !== expected[i]);
  expect(bad === -1 ? 'identical' : `frame ${bad}: ${actual[bad]} != ${expected[bad]}`).toBe('identical');
  return expected;
}

describe('virtual-detector pass', () => {
  withGpu('96x96 uint16 sparse counts as u32 values (bitunshuffle output), 64 frames', async (ctx) => {
    const values = Uint32Array.from(sparseCounts(64, 96, 96, 11));
    await check(ctx, { values, frames: 64, mask: annulus(96, 96, 1) });
  });

  withGpu('192x192 uint16 packed, 8 frames, frames split across 3-frame dispatches', async (ctx) => {
    await check(ctx, {
      values: sparseCounts(8, 192, 192, 12),
      frames: 8,
      mask: annulus(192, 192, 2),
      maxFramesPerDispatch: 3,
    });
  });

  withGpu('33x35 odd frames, uint16 packed (frames at half-word offsets), workgroup 256', async (ctx) => {
    await check(ctx, {
      values: fullRange(Uint16Array, 17 * 1155, 13),
      frames: 17,
      mask: annulus(33, 35, 3),
      workgroupSize: 256,
    });
  });

  withGpu('33x35 uint8 packed full range, frames at byte offsets', async (ctx) => {
    await check(ctx, { values: fullRange(Uint8Array, 13 * 1155, 14), frames: 13, mask: annulus(33, 35, 4) });
  });

  withGpu('uint32 values above 2^31: sums exceed 2^32 and need the carry', async (ctx) => {
    const values = fullRange(Uint32Array, 6 * 1155, 15);
    for (let i = 0; i < values.length; i += 3) values[i] = 0xffffffff - (i % 7);
    const mask = new Uint32Array(1155).fill(1);
    const sums = await check(ctx, { values, frames: 6, mask, workgroupSize: 32 });
    expect(sums.every((s) => s > 2n ** 32n)).toBe(true);
  });

  withGpu('all-0xffffffff frame: 9216 * (2^32 - 1) exactly', async (ctx) => {
    const values = new Uint32Array(2 * 9216).fill(0xffffffff);
    const mask = new Uint32Array(9216).fill(1);
    const sums = await check(ctx, { values, frames: 2, mask });
    expect(sums[0]).toBe(9216n * 0xffffffffn);
  });

  withGpu(
    'data in windows that start and end inside frames (accumulation across dispatches)',
    async (ctx) => {
      // 1000-value windows over 1155-pixel frames: most frames are split between two windows.
      await check(ctx, {
        values: sparseCounts(12, 33, 35, 16),
        frames: 12,
        mask: annulus(33, 35, 5),
        windowElems: 1000,
      });
      // Windows much smaller than a frame, uint32 near 2^32: one frame gets 10 partial sums.
      const big = fullRange(Uint32Array, 3 * 9216, 17);
      await check(ctx, {
        values: big,
        frames: 3,
        mask: annulus(96, 96, 6),
        windowElems: 999,
        maxFramesPerDispatch: 1,
      });
    },
  );

  withGpu('empty mask gives zeros; clear=false adds to previous sums', async (ctx) => {
    const values = Uint32Array.from(sparseCounts(4, 33, 35, 18));
    const zeros = await gpuSums(ctx, { values, frames: 4, mask: new Uint32Array(1155) });
    expect([...zeros]).toEqual([0n, 0n, 0n, 0n]);
    const mask = annulus(33, 35, 7);
    const pass = createVirtualDetectorPass(ctx.device, { elemBytes: 4 });
    const sums = ctx.storage(4 * 8);
    const job = {
      mask: ctx.upload(mask),
      pixels: 1155,
      sums,
      windows: [{ data: ctx.upload(values), elemCount: values.length, firstFrame: 0 }],
    };
    pass.run(job);
    pass.run({ ...job, clear: false });
    const twice = virtualDetectorSums(values, 4, mask).map((s) => s * 2n);
    expect(await ctx.readBack(sums, BigUint64Array)).toEqual(twice);
  });
});
