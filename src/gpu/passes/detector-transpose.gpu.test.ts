import { describe, expect } from 'vitest';
import { isStemflowError } from '../../errors.ts';
import { AUDIT_LAYOUT, auditFromWords } from '../../kernels/bslz4-decode.ts';
import { decodedPlanesLayout, toDecodedPlanes } from '../../kernels/decoded-planes.ts';
import {
  decodedSlot,
  detectorTranspose,
  type PackedValues,
  residentFromScan,
} from '../../kernels/detector-transpose.ts';
import { type ElemSize, planResidentLayout, type ResidentLayout } from '../resident-layout.ts';
import { fullRange, sparseCounts } from '../test-data.ts';
import { type GpuTestContext, withGpu } from '../test-harness.ts';
import {
  createDetectorTransposePass,
  createResidentBuffers,
  type TransposeLoads,
  transposeCanCountHistogram,
} from './detector-transpose.ts';

interface Case {
  values: PackedValues;
  frames: number;
  pixels: number;
  /** Frames per batch, in order (their sum is `frames`). */
  batches: number[];
  pixelsPerBufferLimit: number;
  /** Extra words after each decoded frame (a slot stride larger than the frame). */
  framePad?: number;
  tilesPerWorkgroup?: number;
  maxValuesPerDispatch?: number;
  /** uint16: positions per hot segment. */
  segmentFrames?: number;
}

interface Result {
  layout: ResidentLayout;
  gpu: Uint32Array[];
  gpuSums: BigUint64Array;
  cpu: Uint32Array[];
  cpuSums: BigUint64Array;
  /** Whether the batches ran the 16-byte form (main_vec4). */
  vec4: boolean;
  /** With the histogram: the audit's bins after all batches, GPU and twin. */
  bins?: { gpu: BigUint64Array; cpu: BigUint64Array };
}

/** Pixel flags of the histogram runs: every 7th pixel flagged. */
function testFlags(pixels: number): Uint32Array {
  return Uint32Array.from({ length: pixels }, (_, p) => (p % 7 === 3 ? 1 : 0));
}

async function transposeAll(
  ctx: GpuTestContext,
  c: Case,
  loads: TransposeLoads,
  histogram = false,
  planes = false,
): Promise<Result> {
  const elemSize = c.values.BYTES_PER_ELEMENT as ElemSize;
  const layout = planResidentLayout({
    frames: c.frames,
    pixels: c.pixels,
    elemSize,
    maxBindingBytes: ctx.device.limits.maxStorageBufferBindingSize,
    pixelsPerBufferLimit: c.pixelsPerBufferLimit,
    segmentFrames: c.segmentFrames,
  });
  const resident = createResidentBuffers(ctx.device, layout, 'test resident');
  const dpSums = ctx.storage(c.pixels * 8);
  const pass = createDetectorTransposePass(ctx.device, { elemSize, loads, histogram, planes });
  const cpu = layout.bufferBytes.map((b) => new Uint32Array(b / 4));
  const cpuSums = new BigUint64Array(c.pixels);
  const flags = testFlags(c.pixels);
  // The audit starts with planted counts in bins 0, 1, 255 and 256 (a decode's), which the pass adds to.
  const auditWords = new Uint32Array(AUDIT_LAYOUT.words);
  for (const [bin, count] of [
    [0, 5],
    [1, 0xffff_fff0],
    [255, 7],
    [256, 9],
  ]) {
    auditWords[AUDIT_LAYOUT.histogram + 2 * bin] = count;
  }
  const audit = histogram ? { buffer: ctx.upload(auditWords), flags: ctx.upload(flags) } : undefined;
  const cpuBins = auditFromWords(auditWords).histogram;
  const wordsPerFrame = planes
    ? decodedPlanesLayout(c.pixels).wordsPerFrame
    : Math.ceil((c.pixels * elemSize) / 4) + (c.framePad ?? 0);
  try {
    let firstFrame = 0;
    for (const frames of c.batches) {
      const packed = decodedSlot(c.values, c.pixels, firstFrame, frames, planes ? undefined : wordsPerFrame);
      const slot = planes ? toDecodedPlanes(packed, frames, c.pixels) : packed;
      const decoded = ctx.upload(slot);
      const batch = { layout, firstFrame, frames, wordsPerFrame };
      detectorTranspose(
        { ...batch, planes, decoded: slot, histogram: histogram ? { flags, bins: cpuBins } : undefined },
        cpu,
        cpuSums,
      );
      pass.run({
        audit,
        ...batch,
        decoded,
        resident,
        dpSums,
        tilesPerWorkgroup: c.tilesPerWorkgroup,
        maxValuesPerDispatch: c.maxValuesPerDispatch,
      });
      if (planes) {
        // The pass zeroes the high planes it read and leaves the low planes and the marks: the twin's slot.
        const after = await ctx.readBack(decoded, Uint32Array);
        expect(`slot after ${firstDifference(after, slot)}`).toBe('slot after identical');
      }
      decoded.destroy();
      firstFrame += frames;
    }
    expect(firstFrame).toBe(c.frames);
    const gpu = await Promise.all(resident.map((b) => ctx.readBack(b, Uint32Array)));
    const gpuSums = await ctx.readBack(dpSums, BigUint64Array);
    const bins = audit
      ? { gpu: auditFromWords(await ctx.readBack(audit.buffer, Uint32Array)).histogram, cpu: cpuBins }
      : undefined;
    return { layout, gpu, gpuSums, cpu, cpuSums, vec4: pass.usesVec4(wordsPerFrame), bins };
  } finally {
    for (const b of resident) b.destroy();
  }
}

function firstDifference(a: ArrayLike<number | bigint>, b: ArrayLike<number | bigint>): string {
  if (a.length !== b.length) return `length ${a.length} != ${b.length}`;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return `index ${i}: ${a[i]} != ${b[i]}`;
  return 'identical';
}

/** The case with its slot stride padded to a multiple of 4 words (16-byte frame rows: 'vec4' applies). */
function alignedStride(c: Case): Case {
  const words = Math.ceil((c.pixels * c.values.BYTES_PER_ELEMENT) / 4) + (c.framePad ?? 0);
  return { ...c, framePad: (c.framePad ?? 0) + ((4 - (words % 4)) % 4) };
}

/**
 * GPU == CPU twin (every word of every buffer, and every sum), and both == the element-wise rearrangement of
 * the scan; for every way of moving a tile: scalar and batched loads, 'vec4' on the case's own slot stride
 * (the scalar form where its frame rows are not 16-byte aligned), and 'vec4' on a stride padded to 16 bytes,
 * which must run the 16-byte form.
 */
async function check(ctx: GpuTestContext, c: Case): Promise<Result> {
  let reference: Uint32Array[] | null = null;
  const direct = new BigUint64Array(c.pixels);
  for (let i = 0; i < c.values.length; i++) direct[i % c.pixels] += BigInt(c.values[i]);
  // The histogram from the scan directly: the planted counts, plus bins 1..255 of the unflagged values.
  const flags = testFlags(c.pixels);
  const directBins = new BigUint64Array(257);
  directBins.set([5n, 0xffff_fff0n], 0);
  directBins[255] = 7n;
  directBins[256] = 9n;
  for (let i = 0; i < c.values.length; i++) {
    const v = c.values[i];
    if (flags[i % c.pixels] === 0 && v > 0 && v < 256) directBins[v]++;
  }
  expect(transposeCanCountHistogram(ctx.device)).toBe(true);
  let last: Result | null = null;
  type Run = [string, TransposeLoads, Case, boolean, boolean];
  const planesRun: Run = ['vec4 planes', 'vec4', { ...c, framePad: 0 }, false, true];
  const runs: Run[] = [
    ['scalar', 'scalar', c, false, false],
    ['batched', 'batched', c, false, false],
    ['vec4', 'vec4', c, false, false],
    ['vec4 aligned', 'vec4', alignedStride(c), false, false],
    // The pass that counts the histogram, in both entry points.
    ['scalar histogram', 'scalar', c, true, false],
    ['vec4 aligned histogram', 'vec4', alignedStride(c), true, false],
    // uint16: the slot as the decode's byte planes (detector-transpose-planes.wgsl).
    ...(c.values.BYTES_PER_ELEMENT === 2 ? [planesRun] : []),
  ];
  for (const [name, loads, run, histogram, planes] of runs) {
    const r = await transposeAll(ctx, run, loads, histogram, planes);
    if (histogram) {
      expect(`${name} bins ${firstDifference(r.bins!.gpu, r.bins!.cpu)}`).toBe(`${name} bins identical`);
      expect(`${name} bins ${firstDifference(r.bins!.gpu, directBins)}`).toBe(`${name} bins identical`);
    }
    const words = planes
      ? decodedPlanesLayout(c.pixels).wordsPerFrame
      : Math.ceil((c.pixels * c.values.BYTES_PER_ELEMENT) / 4) + (run.framePad ?? 0);
    expect(`${name} vec4 ${r.vec4}`).toBe(`${name} vec4 ${loads === 'vec4' && words % 4 === 0}`);
    reference ??= residentFromScan(r.layout, c.values);
    expect(r.gpu.length).toBe(r.layout.bufferBytes.length);
    r.gpu.forEach((words, b) => {
      expect(`${name} buffer ${b} ${firstDifference(words, r.cpu[b])}`).toBe(`${name} buffer ${b} identical`);
      expect(`${name} buffer ${b} ${firstDifference(words, (reference as Uint32Array[])[b])}`).toBe(
        `${name} buffer ${b} identical`,
      );
    });
    expect(`${name} ${firstDifference(r.gpuSums, r.cpuSums)}`).toBe(`${name} identical`);
    // DP sums from the scan directly.
    expect(`${name} ${firstDifference(r.gpuSums, direct)}`).toBe(`${name} identical`);
    last = r;
  }
  return last as Result;
}

describe('detector-transpose pass', () => {
  withGpu('uint16 33x35, 77 frames in 3 batches, 12 resident buffers, full range', async (ctx) => {
    const r = await check(ctx, {
      values: fullRange(Uint16Array, 77 * 1155, 21),
      frames: 77,
      pixels: 1155,
      batches: [20, 32, 25],
      pixelsPerBufferLimit: 100,
    });
    expect(r.layout.rowBuffers).toBe(12);
    expect(r.layout.framesPadded).toBe(80);
  });

  withGpu('uint16 all 65535: per-pixel sums above 2^16 x frames, exact', async (ctx) => {
    const values = new Uint16Array(130 * 1155).fill(65535);
    const r = await check(ctx, {
      values,
      frames: 130,
      pixels: 1155,
      batches: [68, 62],
      pixelsPerBufferLimit: 400,
      tilesPerWorkgroup: 2,
    });
    expect(r.gpuSums[0]).toBe(130n * 65535n);
  });

  withGpu('uint8 33x35, 141 frames in 3 batches, 6 buffers, one tile per workgroup', async (ctx) => {
    const r = await check(ctx, {
      values: fullRange(Uint8Array, 141 * 1155, 22),
      frames: 141,
      pixels: 1155,
      batches: [64, 40, 37],
      pixelsPerBufferLimit: 200,
      tilesPerWorkgroup: 1,
    });
    expect(r.layout.rowBuffers).toBe(6);
  });

  withGpu('uint8 odd pixel count 31x37 with a padded slot stride, 300 frames over 2 tiles', async (ctx) => {
    await check(ctx, {
      values: fullRange(Uint8Array, 300 * 1147, 23),
      frames: 300,
      pixels: 1147,
      batches: [256, 44],
      pixelsPerBufferLimit: 300,
      framePad: 3,
    });
  });

  withGpu('uint32 near 2^32: DP sums above 2^32 (carry), 32 buffers, split dispatches', async (ctx) => {
    const values = fullRange(Uint32Array, 45 * 1155, 24);
    for (let i = 0; i < values.length; i += 2) values[i] = 0xffffffff - (i % 5);
    const r = await check(ctx, {
      values,
      frames: 45,
      pixels: 1155,
      batches: [7, 33, 5],
      pixelsPerBufferLimit: 37,
      tilesPerWorkgroup: 1,
      // One 32-frame span per dispatch: the 33-frame batch takes 2 dispatches per buffer.
      maxValuesPerDispatch: 64 * 32,
    });
    expect(r.layout.rowBuffers).toBe(32);
    expect(r.gpuSums.every((s) => s > 2n ** 32n)).toBe(true);
  });

  withGpu('uint16 96x96 sparse counts, 300 frames, spans of 2 tiles, 10 buffers', async (ctx) => {
    const r = await check(ctx, {
      values: sparseCounts(300, 96, 96, 25, 65535),
      frames: 300,
      pixels: 9216,
      batches: [128, 128, 44],
      pixelsPerBufferLimit: 922,
      tilesPerWorkgroup: 2,
    });
    expect(r.layout.rowBuffers).toBe(10);
  });

  withGpu('uint16 planes: 255/256/65535, single outliers, partial last segment, odd pixels', async (ctx) => {
    const frames = 300; // segments of 128: 128, 128, 44
    const pixels = 1147;
    const values = new Uint16Array(frames * pixels);
    for (let i = 0; i < values.length; i++) values[i] = ((i * 2654435761) >>> 0) % 40;
    const at = (s: number, p: number) => s * pixels + p;
    values[at(0, 0)] = 255;
    values[at(1, 0)] = 256;
    values[at(299, 1146)] = 65535; // the last value of the scan: partial last segment and word
    values[at(127, 500)] = 300; // the last position of segment 0
    values[at(128, 501)] = 65535; // the first of segment 1
    values[at(200, 299)] = 256; // pixel 299: the last of a buffer
    values[at(201, 300)] = 257; // pixel 300: the first of the next
    for (let s = 0; s < frames; s++) values[at(s, 777)] = 1000 + s; // a whole hot row
    const r = await check(ctx, {
      values,
      frames,
      pixels,
      batches: [128, 100, 72],
      pixelsPerBufferLimit: 300,
      segmentFrames: 128,
    });
    const hot = r.gpu[r.gpu.length - 1];
    const bits = (p: number) => hot[p];
    expect([bits(0), bits(1146), bits(500), bits(501), bits(299), bits(300), bits(777), bits(2)]).toEqual([
      1, 4, 1, 2, 2, 2, 7, 0,
    ]);
    // Cold segments hold no high bytes at all.
    expect(hot.reduce((n, w) => n + (w ? 1 : 0), 0)).toBe(7);
  });

  withGpu(
    'uint16 planes: spans of 16 tiles over 17 segments, bitmap words crossed, 36 segments',
    async (ctx) => {
      const frames = 4500;
      const pixels = 37;
      const values = new Uint16Array(frames * pixels);
      for (let i = 0; i < values.length; i++) values[i] = ((i * 2654435761) >>> 0) % 251;
      // Pixel p has one outlier in every segment g with (g + p) % 3 == 0, at a varying position.
      for (let p = 0; p < pixels; p++)
        for (let g = 0; g < 36; g++)
          if ((g + p) % 3 === 0)
            values[Math.min(frames - 1, g * 128 + ((p * 7 + g) % 128)) * pixels + p] = 256 + g;
      const r = await check(ctx, {
        values,
        frames,
        pixels,
        batches: [1092, 2048, 1360],
        pixelsPerBufferLimit: 16,
        tilesPerWorkgroup: 16,
        segmentFrames: 128,
      });
      expect(r.layout.segments).toBe(36);
      expect(r.layout.hotWordsPerPixel).toBe(2);
    },
  );

  withGpu('refuses a batch that starts inside a word', async (ctx) => {
    const layout = planResidentLayout({ frames: 10, pixels: 16, elemSize: 2, maxBindingBytes: 2 ** 20 });
    const pass = createDetectorTransposePass(ctx.device, { elemSize: 2 });
    const resident = createResidentBuffers(ctx.device, layout);
    const job = {
      layout,
      decoded: ctx.storage(16 * 10 * 2),
      firstFrame: 3,
      frames: 2,
      resident,
      dpSums: ctx.storage(16 * 8),
    };
    let error: unknown;
    try {
      pass.run(job);
    } catch (e) {
      error = e;
    }
    expect(isStemflowError(error, 'invalid')).toBe(true);
    expect(() => pass.run({ ...job, firstFrame: 4, frames: 7 })).toThrow(/reach past/);
    for (const b of resident) b.destroy();
  });
});
