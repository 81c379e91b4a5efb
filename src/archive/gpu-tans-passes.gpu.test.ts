import { describe, expect } from 'vitest';
import { type GpuTestContext, withGpu } from '../gpu/test-harness';
import { mulberry32 } from '../util/prng';
import { createTansEncodePass, createTansStatsPass, laneStride } from './gpu-tans-passes';
import { NEIGHBOUR_BUCKETS, tokenCount } from './hybrid-uint';
import { type ArchiveDtype, DTYPE_BITS, laneGeometry, rawLaneWords } from './lanes';
import { frequenciesFromHistogram, type RecordModel, recordTables } from './record-tables';
import { ENCODE_TOKEN_ABSENT, tansEncode } from './tans-encode';
import {
  classMapFromSums,
  sumsFromPairs,
  tansPixelSums,
  tansStatsAudit,
  tansTokenHistogram,
  type Values,
} from './tans-stats';
import { detectorFrames } from './test-data';

/** Values frame-major, packed at the dtype's width from word frame * wordsPerFrame (bslz4-decode's layout). */
function packFrames(values: Values, frames: number, pixels: number, bits: number): Uint32Array {
  const wordsPerFrame = Math.ceil((pixels * bits) / 32);
  const out = new Uint32Array(frames * wordsPerFrame);
  for (let f = 0; f < frames; f++) {
    for (let p = 0; p < pixels; p++) {
      const at = f * wordsPerFrame + Math.floor((p * bits) / 32);
      out[at] = (out[at] | (values[f * pixels + p] << ((p * bits) % 32))) >>> 0;
    }
  }
  return out;
}

interface Case {
  dtype: ArchiveDtype;
  values: Values;
  frames: number;
  pixels: number;
  /** Detector columns (default: the square root of pixels, or 35 for 33 x 35). */
  cols?: number;
  slices: number;
  classes: number;
  tableLog: number;
  sharedHistogram?: boolean;
  /** Values the tables are built from (default: `values`): other values make ENCODE_TOKEN_ABSENT lanes. */
  modelValues?: Values;
}

/** Runs stats, encode and compaction on the GPU and requires the CPU twins' integers at every step. */
async function expectParity(ctx: GpuTestContext, c: Case) {
  const { device } = ctx;
  const bits = DTYPE_BITS[c.dtype];
  const tokens = tokenCount(bits);
  const g = laneGeometry(c.pixels, c.slices);
  const cols = c.cols ?? (Number.isInteger(Math.sqrt(c.pixels)) ? Math.sqrt(c.pixels) : 35);
  const wordsPerFrame = Math.ceil((c.pixels * bits) / 32);
  const values = ctx.upload(packFrames(c.values, c.frames, c.pixels, bits));
  const stats = createTansStatsPass(device, {
    bits,
    tokens,
    classes: c.classes,
    sharedHistogram: c.sharedHistogram,
  });
  const job = { values, frames: c.frames, pixels: c.pixels, wordsPerFrame, cols, slicePixels: g.slicePixels };
  const run = async (record: (e: GPUCommandEncoder) => GPUBuffer) => {
    const encoder = device.createCommandEncoder();
    const params = record(encoder);
    device.queue.submit([encoder.finish()]);
    params.destroy();
  };

  // Sums and audit.
  const sums = ctx.storage(c.pixels * 8);
  const audit = ctx.storage(8);
  await run((e) => stats.encodeSums(e, { ...job, sums, audit }));
  const pairs = await ctx.readBack(sums, Uint32Array);
  expect(sumsFromPairs(pairs)).toEqual(tansPixelSums(c.values, c.frames, c.pixels));
  const cpuAudit = tansStatsAudit(c.values);
  expect(Array.from(await ctx.readBack(audit, Uint32Array))).toEqual([cpuAudit.max, cpuAudit.above255]);

  // Histogram over the class map from the sums.
  const modelValues = c.modelValues ?? c.values;
  const classMap = classMapFromSums(tansPixelSums(modelValues, c.frames, c.pixels), c.classes);
  const classMapBuffer = ctx.upload(Uint32Array.from(classMap));
  const histogram = ctx.storage(c.classes * NEIGHBOUR_BUCKETS * tokens * 4);
  await run((e) => stats.encodeHistogram(e, { ...job, classMap: classMapBuffer, histogram }));
  const cpuHistogram = tansTokenHistogram(c.values, c.frames, g, cols, classMap, c.classes, tokens);
  expect(await ctx.readBack(histogram, Uint32Array)).toEqual(cpuHistogram);

  // Encode and compaction against tansEncode.
  const hist = tansTokenHistogram(modelValues, c.frames, g, cols, classMap, c.classes, tokens);
  const model: RecordModel = {
    dtype: c.dtype,
    tableLog: c.tableLog,
    classes: c.classes,
    tokens,
    cols,
    classMap,
    freqs: frequenciesFromHistogram(hist, c.classes * NEIGHBOUR_BUCKETS, tokens, c.tableLog),
  };
  const tables = recordTables(model);
  const cpu = tansEncode(c.values, c.frames, g, tables);
  const lanes = c.frames * g.slices;
  const stride = laneStride(rawLaneWords(g.slicePixels, c.dtype));
  const pass = createTansEncodePass(device, { bits, tableLog: c.tableLog, tokens });
  const encodeJob = {
    values,
    frames: c.frames,
    slices: g.slices,
    slicePixels: g.slicePixels,
    pixels: c.pixels,
    wordsPerFrame,
    cols,
    laneStride: stride,
    classMap: classMapBuffer,
    symbols: ctx.upload(tables.encodeSymbols),
    positions: ctx.upload(Uint32Array.from(tables.encodePositions)),
    scratch: ctx.storage(lanes * stride * 4),
    counts: ctx.storage(lanes * 4),
    errors: ctx.storage(lanes * 4),
  };
  await run((e) => pass.encodeLanes(e, encodeJob));
  const counts = await ctx.readBack(encodeJob.counts, Uint32Array);
  expect(await ctx.readBack(encodeJob.errors, Uint32Array)).toEqual(cpu.errors);
  const offsets = new Uint32Array(lanes + 1);
  for (let lane = 0; lane < lanes; lane++) offsets[lane + 1] = offsets[lane] + counts[lane];
  expect(offsets).toEqual(cpu.offsets);
  const output = ctx.storage(Math.max(4, offsets[lanes] * 4));
  await run((e) => pass.encodeCompaction(e, { ...encodeJob, offsets: ctx.upload(offsets), output }));
  expect(await ctx.readBack(output, Uint32Array, offsets[lanes] * 4)).toEqual(cpu.words);
  // Repeat runs give the same bits.
  await run((e) => pass.encodeLanes(e, encodeJob));
  expect(await ctx.readBack(encodeJob.counts, Uint32Array)).toEqual(counts);
  return { cpu, lanes, raw: countRaw(cpu.offsets, g, c.dtype) };
}

function countRaw(offsets: Uint32Array, g: ReturnType<typeof laneGeometry>, dtype: ArchiveDtype): number {
  let raw = 0;
  for (let lane = 0; lane + 1 < offsets.length; lane++) {
    const count = Math.min(g.slicePixels, g.pixels - (lane % g.slices) * g.slicePixels);
    if (offsets[lane + 1] - offsets[lane] === rawLaneWords(count, dtype)) raw++;
  }
  return raw;
}

function randomValues(n: number, seed: number, max: number, Type: new (n: number) => Values): Values {
  const next = mulberry32(seed);
  const out = new Type(n);
  for (let i = 0; i < n; i++) out[i] = max >= 2 ** 32 - 1 ? next() : next() % (max + 1);
  return out;
}

describe('tans-stats.wgsl and tans-encode.wgsl against their CPU twins', () => {
  withGpu(
    'uint16 detector-like frames with counts up to 65535 (workgroup and global histograms)',
    async (ctx) => {
      const values = detectorFrames(12, 32, 32, 7);
      values[5] = 65535;
      values[12 * 1024 - 1] = 65535;
      for (const sharedHistogram of [true, false]) {
        const { raw } = await expectParity(ctx, {
          dtype: 'uint16',
          values,
          frames: 12,
          pixels: 1024,
          slices: 4,
          classes: 8,
          tableLog: 11,
          sharedHistogram,
        });
        expect(raw).toBe(0);
      }
    },
  );

  withGpu('uint8 and uint32 values (sums past 2^32), odd 33x35 detector, uneven slices', async (ctx) => {
    const u8 = randomValues(20 * 33 * 35, 3, 255, Uint8Array);
    for (let i = 0; i < u8.length; i += 3) u8[i] = 0;
    await expectParity(ctx, {
      dtype: 'uint8',
      values: u8,
      frames: 20,
      pixels: 33 * 35,
      slices: 3,
      classes: 5,
      tableLog: 9,
    });
    const u32 = detectorFrames(9, 33, 35, 11).reduce(
      (a, v, i) => {
        a[i] = v;
        return a;
      },
      new Uint32Array(9 * 33 * 35),
    );
    for (let f = 0; f < 9; f++) u32[f * 1155 + 17] = 0xffffffff;
    u32[40] = 65536;
    u32[41] = 70000;
    const { cpu } = await expectParity(ctx, {
      dtype: 'uint32',
      values: u32,
      frames: 9,
      pixels: 1155,
      slices: 5,
      classes: 6,
      tableLog: 12,
    });
    expect(cpu.words.length).toBeGreaterThan(0);
  });

  withGpu('raw lanes: incompressible lanes are stored raw, next to coded ones', async (ctx) => {
    const frames = 6;
    const pixels = 33 * 35;
    const values = randomValues(frames * pixels, 5, 65535, Uint16Array) as Uint16Array;
    values.fill(0, 0, 2 * pixels); // two frames of zeros: coded lanes
    const { raw, lanes } = await expectParity(ctx, {
      dtype: 'uint16',
      values,
      frames,
      pixels,
      slices: 7,
      classes: 4,
      tableLog: 11,
    });
    // The zero frames' 14 lanes are coded; most noise lanes are raw (with 36 small-sample contexts a few
    // noise lanes code just below raw size). Parity above is what matters: both sides chose the same.
    expect(raw).toBeGreaterThan(20);
    expect(raw).toBeLessThanOrEqual(4 * 7);
    expect(lanes).toBe(6 * 7);
  });

  withGpu('a token missing from its table: ENCODE_TOKEN_ABSENT on the same lanes', async (ctx) => {
    const frames = 5;
    const pixels = 64;
    const model = new Uint16Array(frames * pixels);
    const values = model.slice();
    values[2 * pixels + 10] = 3;
    values[4 * pixels + 63] = 300;
    const { cpu } = await expectParity(ctx, {
      dtype: 'uint16',
      values,
      modelValues: model,
      frames,
      pixels,
      slices: 2,
      classes: 2,
      tableLog: 5,
    });
    expect(Array.from(cpu.errors).flatMap((e, lane) => (e === ENCODE_TOKEN_ABSENT ? [lane] : []))).toEqual([
      4, 9,
    ]);
  });
});
