import { describe, expect } from 'vitest';
import { decodedSlot, type PackedValues, residentFromScan } from '../../kernels/detector-transpose.ts';
import { residentVirtualImage } from '../../kernels/resident-virtual-image.ts';
import { virtualDetectorSums } from '../../kernels/virtual-detector.ts';
import { groupPixelsByBuffer } from '../resident-index.ts';
import { type ElemSize, planResidentLayout, type ResidentLayout } from '../resident-layout.ts';
import { fullRange, rng, sparseCounts } from '../test-data.ts';
import { type GpuTestContext, withGpu } from '../test-harness.ts';
import { createDetectorTransposePass, createResidentBuffers } from './detector-transpose.ts';
import { createResidentVirtualImagePass, type ResidentVirtualImagePass } from './resident-virtual-image.ts';

interface Scan {
  values: PackedValues;
  frames: number;
  pixels: number;
  pixelsPerBufferLimit: number;
  segmentFrames?: number;
  /** Scribble on the high plane's words of cold segments (which no reader may look at). */
  poisonCold?: boolean;
}

function planFor(ctx: GpuTestContext, s: Scan): ResidentLayout {
  return planResidentLayout({
    frames: s.frames,
    pixels: s.pixels,
    elemSize: s.values.BYTES_PER_ELEMENT as ElemSize,
    maxBindingBytes: ctx.device.limits.maxStorageBufferBindingSize,
    pixelsPerBufferLimit: s.pixelsPerBufferLimit,
    segmentFrames: s.segmentFrames,
  });
}

/** Fills the high-plane bytes of every cold (pixel, segment) with 0xff: readers must skip them. */
function poisonColdSegments(layout: ResidentLayout, words: Uint32Array[]): number {
  const hot = words[2 * layout.rowBuffers];
  let poisoned = 0;
  for (let p = 0; p < layout.pixels; p++) {
    const b = Math.floor(p / layout.pixelsPerBuffer);
    const bytes = new Uint8Array(words[layout.rowBuffers + b].buffer);
    const row = (p - b * layout.pixelsPerBuffer) * layout.wordsPerPixel * 4;
    for (let g = 0; g < layout.segments; g++) {
      if ((hot[p * layout.hotWordsPerPixel + (g >>> 5)] >>> (g & 31)) & 1) continue;
      const end = Math.min(layout.framesPadded, (g + 1) * layout.segmentFrames);
      bytes.fill(0xff, row + g * layout.segmentFrames, row + end);
      poisoned++;
    }
  }
  return poisoned;
}

/** An annulus with random holes (flagged pixels already removed), as a sorted pixel list. */
function annulusList(rows: number, cols: number, seed: number): Uint32Array {
  const next = rng(seed);
  const out: number[] = [];
  const r = Math.min(rows, cols) / 2;
  for (let y = 0; y < rows; y++) {
    for (let x = 0; x < cols; x++) {
      const d = Math.hypot(y - rows / 2 + 0.5, x - cols / 2 + 0.5);
      if (d > r * 0.2 && d < r * 0.9 && next() % 40 !== 0) out.push(y * cols + x);
    }
  }
  return Uint32Array.from(out);
}

function range(n: number): Uint32Array {
  return Uint32Array.from({ length: n }, (_, i) => i);
}

/** Pipelines are compiled once per file (SwiftShader compiles slowly). */
const passes = new Map<string, ResidentVirtualImagePass>();
let passDevice: GPUDevice | undefined;

async function gpuImage(
  ctx: GpuTestContext,
  layout: ResidentLayout,
  resident: readonly GPUBuffer[],
  list: Uint32Array,
  maxColumnsPerDispatch?: number,
  options: { slices?: number; workgroupSize?: number } = {},
): Promise<BigUint64Array> {
  const key = `${layout.elemSize} ${options.slices} ${options.workgroupSize}`;
  let pass = passes.get(key);
  if (!pass || passDevice !== ctx.device) {
    if (passDevice !== ctx.device) passes.clear();
    passDevice = ctx.device;
    pass = createResidentVirtualImagePass(ctx.device, { elemSize: layout.elemSize, ...options });
    passes.set(key, pass);
  }
  const image = ctx.storage(layout.frames * 8);
  // Garbage in the image first: the pass clears it.
  ctx.device.queue.writeBuffer(image, 0, new Uint32Array(layout.frames * 2).fill(0xdeadbeef));
  pass.run({
    layout,
    resident,
    pixelList: ctx.upload(list),
    groups: groupPixelsByBuffer(layout, list),
    image,
    maxColumnsPerDispatch,
  });
  return ctx.readBack(image, BigUint64Array, layout.frames * 8);
}

function expectSame(actual: BigUint64Array, expected: BigUint64Array): void {
  expect(actual.length).toBe(expected.length);
  const bad = actual.findIndex((v, i) => v !== expected[i]);
  expect(bad === -1 ? 'identical' : `position ${bad}: ${actual[bad]} != ${expected[bad]}`).toBe('identical');
}

/** GPU == CPU twin == virtual-detector oracle on the scan-order values, for each list. */
async function checkMasks(ctx: GpuTestContext, s: Scan, lists: Uint32Array[]): Promise<BigUint64Array[]> {
  const layout = planFor(ctx, s);
  const words = residentFromScan(layout, s.values);
  if (s.poisonCold) expect(poisonColdSegments(layout, words)).toBeGreaterThan(0);
  const resident = words.map((w) => ctx.upload(w));
  const results: BigUint64Array[] = [];
  for (const list of lists) {
    const mask = new Uint32Array(s.pixels);
    for (const p of list) mask[p] = 1;
    const oracle = virtualDetectorSums(s.values, s.frames, mask);
    const twin = residentVirtualImage(layout, words, list);
    expectSame(twin, oracle);
    expectSame(await gpuImage(ctx, layout, resident, list), oracle);
    // One slice (no workgroup reduction) and 8 slices of 8 columns.
    expectSame(
      await gpuImage(ctx, layout, resident, list, undefined, { slices: 1, workgroupSize: 64 }),
      oracle,
    );
    expectSame(
      await gpuImage(ctx, layout, resident, list, undefined, { slices: 8, workgroupSize: 64 }),
      oracle,
    );
    results.push(oracle);
  }
  return results;
}

describe('resident-virtual-image pass', () => {
  withGpu('uint16 33x35 x 77 frames, 12 buffers: annulus, empty, full, one pixel', async (ctx) => {
    const s = {
      values: fullRange(Uint16Array, 77 * 1155, 31),
      frames: 77,
      pixels: 1155,
      pixelsPerBufferLimit: 100,
    };
    const annulus = annulusList(33, 35, 1);
    expect(groupPixelsByBuffer(planFor(ctx, s), annulus).length).toBeGreaterThan(8);
    const [, empty, full] = await checkMasks(ctx, s, [
      annulus,
      new Uint32Array(0),
      range(1155),
      Uint32Array.of(777),
      Uint32Array.of(0, 1154),
    ]);
    expect(empty.every((v) => v === 0n)).toBe(true);
    expect(full.some((v) => v > 2n ** 25n)).toBe(true);
  });

  withGpu(
    'uint16 planes: hot and cold segments (cold high bytes poisoned), outliers, partial segment',
    async (ctx) => {
      const frames = 1001; // 8 segments of 128, the last partial (105 positions)
      const pixels = 1147; // odd
      const values = new Uint16Array(frames * pixels);
      const next = rng(41);
      for (let i = 0; i < values.length; i++) values[i] = next() % 7 === 0 ? next() % 256 : 0;
      const at = (f: number, p: number) => f * pixels + p;
      // A bright disk around pixel 573 (every value above 255), lone outliers, 255/256/65535 elsewhere.
      for (let f = 0; f < frames; f++)
        for (const p of [572, 573, 574, 536, 610]) values[at(f, p)] = 300 + (f % 900);
      values[at(0, 0)] = 255;
      values[at(1, 0)] = 256;
      values[at(1000, 1146)] = 65535;
      values[at(640, 200)] = 65535;
      values[at(127, 201)] = 256;
      values[at(128, 202)] = 511;
      const s = { values, frames, pixels, pixelsPerBufferLimit: 300, segmentFrames: 128, poisonCold: true };
      const all = range(pixels);
      const half = all.filter((p) => (p * 2654435761) % 7 < 3);
      await checkMasks(ctx, s, [
        all,
        half,
        annulusList(31, 37, 4),
        Uint32Array.of(0, 1, 200, 201, 202, 573, 1146),
      ]);
    },
  );

  withGpu('uint8 31x37 x 141 frames (odd), 6 buffers, rows of 16 positions per thread', async (ctx) => {
    const s = {
      values: fullRange(Uint8Array, 141 * 1147, 32),
      frames: 141,
      pixels: 1147,
      pixelsPerBufferLimit: 200,
    };
    await checkMasks(ctx, s, [annulusList(31, 37, 2), range(1147), Uint32Array.of(3), Uint32Array.of(1146)]);
  });

  withGpu('uint32 near 2^32, 33 buffers: sums far above 2^32 (carry on every add)', async (ctx) => {
    const values = fullRange(Uint32Array, 45 * 1155, 33);
    for (let i = 0; i < values.length; i += 2) values[i] = 0xffffffff - (i % 3);
    const s = { values, frames: 45, pixels: 1155, pixelsPerBufferLimit: 35 };
    const [full] = await checkMasks(ctx, s, [range(1155), annulusList(33, 35, 3), Uint32Array.of(600)]);
    expect(full.every((v) => v > 2n ** 40n)).toBe(true);
  });

  withGpu('uint16 flush block: 65,540 pixels of 65535 per position (> 2^32), 3 buffers', async (ctx) => {
    const pixels = 65540;
    const s = {
      values: new Uint16Array(9 * pixels).fill(65535),
      frames: 9,
      pixels,
      pixelsPerBufferLimit: 30000,
    };
    const [full] = await checkMasks(ctx, s, [range(pixels)]);
    expect(full[0]).toBe(65540n * 65535n);
  });

  withGpu('uint16, one buffer: with one slice a thread sums 65,544 rows itself (past 2^32)', async (ctx) => {
    const pixels = 65544;
    // Position s: 65535 except in pixels below s mod 4, so each value k of a word has its own total > 2^32.
    const values = new Uint16Array(9 * pixels);
    for (let i = 0; i < values.length; i++) values[i] = i % pixels < Math.floor(i / pixels) % 4 ? 0 : 65535;
    const s = { values, frames: 9, pixels, pixelsPerBufferLimit: pixels };
    const [full] = await checkMasks(ctx, s, [range(pixels)]);
    for (let k = 0; k < 4; k++) expect(full[k]).toBe(BigInt(pixels - k) * 65535n);
  });

  withGpu(
    'adding into and subtracting from an image: borrows, carries and wraps equal the twin',
    async (ctx) => {
      const s = {
        values: fullRange(Uint16Array, 77 * 1155, 35),
        frames: 77,
        pixels: 1155,
        pixelsPerBufferLimit: 100,
      };
      const layout = planFor(ctx, s);
      const words = residentFromScan(layout, s.values);
      const resident = words.map((w) => ctx.upload(w));
      const pass = createResidentVirtualImagePass(ctx.device, { elemSize: 2 });
      const next = rng(36);
      // Low words near 0 and 2^32 (borrows and carries), some images below the sums (wrap mod 2^64).
      const start = new BigUint64Array(s.frames);
      for (let i = 0; i < s.frames; i++)
        start[i] =
          i % 5 === 0 ? BigInt(next() % 1000) : (BigInt(next()) << 32n) | BigInt((next() % 3) * 0x7fffffff);
      const list = annulusList(33, 35, 7);
      for (const subtract of [true, false]) {
        const image = ctx.upload(start);
        pass.run({
          layout,
          resident,
          pixelList: ctx.upload(list),
          groups: groupPixelsByBuffer(layout, list),
          image,
          subtract,
          clear: false,
        });
        const twin = residentVirtualImage(layout, words, list, { image: start.slice(), subtract });
        expect(twin[0] > 2n ** 63n).toBe(subtract); // position 0 wraps below zero when subtracting
        expectSame(await ctx.readBack(image, BigUint64Array, s.frames * 8), twin);
      }
    },
  );

  withGpu(
    'end to end: GPU transpose in batches, then images (columns split over dispatches)',
    async (ctx) => {
      const frames = 200;
      const values = sparseCounts(frames, 48, 48, 34, 65535);
      const s = { values, frames, pixels: 2304, pixelsPerBufferLimit: 500 };
      const layout = planFor(ctx, s);
      const resident = createResidentBuffers(ctx.device, layout, 'test resident');
      try {
        const transpose = createDetectorTransposePass(ctx.device, { elemSize: 2 });
        const dpSums = ctx.storage(s.pixels * 8);
        for (const [first, count] of [
          [0, 64],
          [64, 100],
          [164, 36],
        ]) {
          transpose.run({
            layout,
            decoded: ctx.upload(decodedSlot(values, s.pixels, first, count)),
            firstFrame: first,
            frames: count,
            resident,
            dpSums,
          });
        }
        const words = await Promise.all(resident.map((b) => ctx.readBack(b, Uint32Array)));
        for (const list of [annulusList(48, 48, 5), range(2304)]) {
          const mask = new Uint32Array(s.pixels);
          for (const p of list) mask[p] = 1;
          const oracle = virtualDetectorSums(values, frames, mask);
          expectSame(residentVirtualImage(layout, words, list), oracle);
          expectSame(await gpuImage(ctx, layout, resident, list, 3), oracle);
        }
      } finally {
        for (const b of resident) b.destroy();
      }
    },
  );
});
