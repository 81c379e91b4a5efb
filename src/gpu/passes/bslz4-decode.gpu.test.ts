/**
 * The fused bitshuffle/LZ4 decode + audit pass against its CPU twin (identical words, errors, totals and
 * audit) and the h5py oracle (sha256, frame sums, max, count above 255) on the committed fixtures; frames at
 * dispatch boundaries; planted faults of every error code beside valid frames; random mutations.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { bslz4Encode } from '../../codec/index.ts';
import {
  AUDIT_LAYOUT,
  type Bslz4DecodeResult,
  bslz4DecodeBatch,
  type ElemSize,
  emptyAudit,
  minWordsPerFrame,
} from '../../kernels/bslz4-decode.ts';
import { DECODE_OK, DecodeError, decodeErrorName } from '../../kernels/decode-errors.ts';
import { rng, sparseCounts } from '../test-data.ts';
import { type GpuTestContext, withGpu } from '../test-harness.ts';
import { createBslz4DecodePass, readDecodeResults } from './bslz4-decode.ts';
import { DEFAULT_DECODE_VARIANT, parseDecodeVariant } from './bslz4-decode-variants.ts';

const dir = join(import.meta.dirname, '../../../test/fixtures');
const oracle = JSON.parse(readFileSync(join(dir, 'oracle.json'), 'utf8'));
const ELEM = { uint8: 1, uint16: 2, uint32: 4 } as const;

interface Batch {
  slot: Uint8Array;
  index: Uint32Array;
  frameCount: number;
  pixels: number;
  elemSize: ElemSize;
  flags: Uint32Array;
}

interface RunOptions {
  variant?: string;
  workgroupSize?: number;
  stageWords?: number;
  maxFramesPerDispatch?: number;
  workgroupsPerDispatch?: number;
  firstFrame?: number;
  wordsPerFrame?: number;
}

/** Chunks back to back, each after `gap(i)` junk bytes. */
function pack(
  chunks: Uint8Array[],
  gap: (i: number) => number = () => 0,
): { slot: Uint8Array; index: Uint32Array } {
  const gaps = chunks.map((_, i) => gap(i));
  const slot = new Uint8Array(chunks.reduce((s, c, i) => s + c.length + gaps[i], 0)).fill(0xa5);
  const index = new Uint32Array(2 * chunks.length);
  let pos = 0;
  chunks.forEach((c, i) => {
    pos += gaps[i];
    slot.set(c, pos);
    index[2 * i] = pos;
    index[2 * i + 1] = c.length;
    pos += c.length;
  });
  return { slot, index };
}

/** The chunks (one per frame, in frame order) of datasets of the fixtures. */
function fixtureBatch(parts: { file: string; dataset: string }[]): Batch & { chunks: Uint8Array[] } {
  const chunks: Uint8Array[] = [];
  let pixels = 0;
  let elemSize: ElemSize = 2;
  for (const { file, dataset } of parts) {
    const ds = oracle.files[file].datasets[dataset];
    pixels = ds.shape[1] * ds.shape[2];
    elemSize = ELEM[ds.dtype as keyof typeof ELEM];
    const bytes = readFileSync(join(dir, file));
    const rows = [...ds.chunk_info].sort((a, b) => a[0][0] - b[0][0]);
    for (const [, offset, size] of rows) chunks.push(new Uint8Array(bytes.subarray(offset, offset + size)));
  }
  return {
    ...pack(chunks),
    chunks,
    frameCount: chunks.length,
    pixels,
    elemSize,
    flags: new Uint32Array(pixels),
  };
}

interface Compared {
  twin: Bslz4DecodeResult;
  words: Uint32Array;
  ms: number;
}

/** Runs the pass and the twin on `b`; requires identical words, errors, totals and audit. */
async function compare(ctx: GpuTestContext, b: Batch, o: RunOptions = {}): Promise<Compared> {
  const { frameCount, pixels, elemSize } = b;
  const firstFrame = o.firstFrame ?? 0;
  const wordsPerFrame = o.wordsPerFrame ?? minWordsPerFrame(pixels, elemSize);
  const twin = bslz4DecodeBatch(b.slot, b.index, b.flags, { frameCount, pixels, elemSize, wordsPerFrame });
  const pass = createBslz4DecodePass(ctx.device, {
    elemSize,
    workgroupSize: o.workgroupSize,
    stageWords: o.stageWords,
    variant: o.variant,
  });
  const decoded = ctx.upload(new Uint32Array(Math.max(1, frameCount * wordsPerFrame)).fill(0xdeadbeef));
  const errors = ctx.upload(new Uint32Array(firstFrame + frameCount + 1).fill(77));
  const totals = ctx.upload(new Uint32Array(2 * (firstFrame + frameCount + 1)).fill(77));
  const audit = ctx.storage(AUDIT_LAYOUT.words * 4);
  const job = {
    compressed: ctx.upload(b.slot),
    compressedBytes: b.slot.length,
    index: ctx.upload(b.index),
    flags: ctx.upload(b.flags),
    decoded,
    errors,
    totals,
    audit,
    frameCount,
    pixels,
    firstFrame,
    wordsPerFrame,
    maxFramesPerDispatch: o.maxFramesPerDispatch,
    workgroupsPerDispatch: o.workgroupsPerDispatch,
  };
  pass.run(job); // warm-up: pipeline and first-use costs out of the timing below
  await ctx.device.queue.onSubmittedWorkDone();
  ctx.device.queue.writeBuffer(audit, 0, new Uint32Array(AUDIT_LAYOUT.words));
  const t0 = performance.now();
  pass.run(job);
  await ctx.device.queue.onSubmittedWorkDone();
  const ms = performance.now() - t0;
  const words = await ctx.readBack(decoded, Uint32Array);
  const gpu = await readDecodeResults(ctx.device, { errors, totals, audit }, { firstFrame, frameCount });
  expect([...gpu.errors].map(decodeErrorName)).toEqual([...twin.errors].map(decodeErrorName));
  expectSameWords(words, twin.words);
  expect(gpu.totals).toEqual(twin.totals);
  expect(gpu.audit).toEqual(twin.audit);
  // Entries outside [firstFrame, firstFrame + frameCount) are untouched.
  const allErrors = await ctx.readBack(errors, Uint32Array);
  expect(allErrors[firstFrame + frameCount]).toBe(77);
  if (firstFrame > 0) expect(allErrors[firstFrame - 1]).toBe(77);
  pass.destroy();
  return { twin, words, ms };
}

function expectSameWords(actual: Uint32Array, expected: Uint32Array): void {
  expect(actual.length).toBe(expected.length);
  const bad = actual.findIndex((v, i) => v !== expected[i]);
  expect(
    bad === -1 ? 'identical' : `first difference at word ${bad}: ${actual[bad]} != ${expected[bad]}`,
  ).toBe('identical');
}

/** The decoded values of every frame (pad bytes dropped), as little-endian bytes. */
function valueBytes(words: Uint32Array, b: Batch): Uint8Array {
  const frameBytes = b.pixels * b.elemSize;
  const wpf = words.length / b.frameCount;
  const all = new Uint8Array(words.buffer, words.byteOffset, words.byteLength);
  const out = new Uint8Array(b.frameCount * frameBytes);
  for (let f = 0; f < b.frameCount; f++)
    out.set(all.subarray(f * wpf * 4, f * wpf * 4 + frameBytes), f * frameBytes);
  return out;
}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

function log(label: string, b: Batch, ms: number): void {
  const mb = (b.frameCount * b.pixels * b.elemSize) / 1e6;
  console.log(
    `[bslz4-decode, SwiftShader] ${label}: ${b.frameCount} frames, ${mb.toFixed(2)} MB decoded in ${ms.toFixed(1)} ms (${(mb / ms).toFixed(3)} GB/s)`,
  );
}

const DATASETS: [string, number?][] = [
  ['latest_fixed_u16_192.h5'],
  ['odd_u16_33x35.h5', 128],
  ['many_v1_u8_32.h5'],
  ['many_fixed_u32_32.h5', 128],
];

describe('bslz4-decode pass: fixtures vs twin and oracle.json', () => {
  for (const [file, workgroupSize] of DATASETS) {
    withGpu(`${file} (workgroup ${workgroupSize ?? 64})`, async (ctx) => {
      const ds = oracle.files[file].datasets['/data'];
      const b = fixtureBatch([{ file, dataset: '/data' }]);
      const { twin, words, ms } = await compare(ctx, b, { workgroupSize });
      log(file, b, ms);
      expect([...twin.errors].every((e) => e === DECODE_OK)).toBe(true);
      expect(sha256(valueBytes(words, b))).toBe(ds.sha256);
      expect([...twin.totals].map(Number)).toEqual(ds.frame_sums);
      expect(twin.audit.maxValue).toBe(ds.max);
      expect(twin.audit.countAbove255).toBe(BigInt(ds.count_gt_255));
      expect(twin.audit.histogram.reduce((s, v) => s + v, 0n)).toBe(BigInt(b.frameCount * b.pixels));
    });
  }

  withGpu('192x192 uint16 fixture with small stages and odd workgroup sizes', async (ctx) => {
    const b = fixtureBatch([{ file: 'latest_fixed_u16_192.h5', dataset: '/data' }]);
    b.flags[7] = 1;
    for (const [workgroupSize, stageWords] of [
      [32, 64],
      [96, 7],
      [5, 1024],
    ]) {
      await compare(ctx, b, { workgroupSize, stageWords, workgroupsPerDispatch: 3 });
    }
  });

  withGpu('ARINA acquisition: 3 shards, pixel mask flags (65535 on flagged pixels)', async (ctx) => {
    const acq = oracle.acquisitions.arina;
    const b = fixtureBatch(acq.shards.map((file: string) => ({ file, dataset: acq.dataset })));
    expect(b.frameCount).toBe(acq.frames);
    for (const i of acq.pixel_mask.flagged_indices) b.flags[i] = 1 + (i % 3);
    const { twin, words, ms } = await compare(ctx, b);
    log('arina 3 shards', b, ms);
    expect(sha256(valueBytes(words, b))).toBe(acq.sha256);
    expect([...twin.totals].map(Number)).toEqual(acq.unflagged.frame_sums);
    expect(twin.audit.maxValue).toBe(acq.unflagged.max);
    expect(twin.audit.countAbove255).toBe(BigInt(acq.unflagged.count_gt_255));
    expect(twin.audit.failedFrames).toBe(0);
  });

  withGpu(
    'frames at dispatch boundaries, few persistent workgroups, offset outputs, pad words',
    async (ctx) => {
      const b = fixtureBatch([{ file: 'many_v1_u8_32.h5', dataset: '/data' }]);
      const frames = 45;
      const sub = pack(b.chunks.slice(0, frames), (i) => i % 3);
      const batch = { ...b, ...sub, frameCount: frames };
      batch.flags[5] = 1;
      for (const [maxFramesPerDispatch, workgroupsPerDispatch] of [
        [7, 3],
        [16, 16],
        [1, 1],
        [44, 5],
      ]) {
        await compare(ctx, batch, {
          maxFramesPerDispatch,
          workgroupsPerDispatch,
          firstFrame: 9,
          wordsPerFrame: 260,
        });
      }
    },
  );
});

/** A 33x35 uint16 chunk (one LZ4 block of 1152 elements and a raw tail of 3) with its LZ4 payload replaced. */
function withPayload(chunk: Uint8Array, payload: number[]): Uint8Array {
  const out = new Uint8Array(16 + payload.length + 6);
  out.set(chunk.subarray(0, 12));
  new DataView(out.buffer).setUint32(12, payload.length);
  out.set(payload, 16);
  out.set(chunk.subarray(chunk.length - 6), 16 + payload.length);
  return out;
}

function setU32(chunk: Uint8Array, at: number, v: number): Uint8Array {
  const out = chunk.slice();
  new DataView(out.buffer).setUint32(at, v);
  return out;
}

/** Valid 33x35 uint16 frames with a planted fault of every code between them, and the expected codes. */
function faultBatch(): { batch: Batch; expected: number[]; faults: number } {
  const pixels = 33 * 35;
  const values = sparseCounts(40, 33, 35, 3);
  const valid = Array.from({ length: 40 }, (_, f) =>
    bslz4Encode(new Uint8Array(values.buffer, f * pixels * 2, pixels * 2), 2),
  );
  const c = valid[0];
  const faults: [number, Uint8Array][] = [
    [DecodeError.HEADER_TRUNCATED, c.subarray(0, 11)],
    [DecodeError.SIZE_MISMATCH, setU32(c, 4, pixels * 2 + 2)],
    [DecodeError.SIZE_MISMATCH, setU32(c, 0, 1)],
    [DecodeError.BAD_BLOCK_SIZE, setU32(c, 8, 0)],
    [DecodeError.BAD_BLOCK_SIZE, setU32(c, 8, 8200)],
    [DecodeError.UNSUPPORTED_BLOCK_SIZE, bslz4Encode(new Uint8Array(values.buffer, 0, pixels * 2), 2, 8192)],
    [DecodeError.BLOCK_TRUNCATED, c.subarray(0, 14)],
    [DecodeError.BLOCK_TRUNCATED, setU32(c, 12, c.length)],
    [DecodeError.BLOCK_EMPTY, setU32(c, 12, 0)],
    [DecodeError.LZ4_TRUNCATED, withPayload(c, [0x10, 0xaa, 0x01])],
    [DecodeError.LZ4_TRUNCATED, withPayload(c, [0xf0, 0xff, 0x00])],
    [DecodeError.LZ4_TRUNCATED, withPayload(c, [0x1f, 0x00, 0x01, 0x00])],
    [DecodeError.LZ4_OVERRUN, withPayload(c, [0x1f, 0x00, 0x01, 0x00, ...Array(9).fill(0xff), 0x00])],
    [DecodeError.LZ4_OVERRUN, withPayload(c, [0xf0, ...Array(9).fill(0xff), 0x00, ...Array(2310).fill(7)])],
    [DecodeError.LZ4_BAD_OFFSET, withPayload(c, [0x14, 0x00, 0x02, 0x00, 0x00])],
    [DecodeError.LZ4_BAD_OFFSET, withPayload(c, [0x14, 0x00, 0x00, 0x00, 0x00])],
    [DecodeError.LZ4_SHORT, withPayload(c, [0x10, 0x00])],
    [DecodeError.LZ4_SHORT, withPayload(c, [0x1f, 0x07, 0x01, 0x00, 0x20, 0x10, 0x00])],
    [DecodeError.TAIL_TRUNCATED, c.subarray(0, c.length - 1)],
    [DecodeError.TRAILING_BYTES, Uint8Array.of(...c, 0)],
  ];
  const chunks: Uint8Array[] = [];
  const expected: number[] = [];
  faults.forEach(([code, bad], i) => {
    chunks.push(valid[(2 * i + 1) % 40], bad);
    expected.push(DECODE_OK, code);
  });
  chunks.push(valid[39]);
  expected.push(DECODE_OK);
  const { slot, index } = pack(chunks, (i) => i % 4);
  // The last entry reaches one byte past the slot.
  const last = chunks.length;
  const withIndexFault = new Uint32Array(index.length + 2);
  withIndexFault.set(index);
  withIndexFault[2 * last] = slot.length - 10;
  withIndexFault[2 * last + 1] = 11;
  expected.push(DecodeError.INDEX_OUT_OF_SLOT);
  const flags = new Uint32Array(pixels);
  flags[100] = 1;
  const batch = { slot, index: withIndexFault, frameCount: last + 1, pixels, elemSize: 2 as const, flags };
  return { batch, expected, faults: faults.length };
}

/** Batches of 48 random frames of 1, 2 and 4 byte values, a quarter of them mutated, a quarter cut short. */
function mutatedBatches(): Batch[] {
  const batches: Batch[] = [];
  const next = rng(2024);
  for (const elemSize of [1, 2, 4] as const) {
    const pixels = [203, 1155, 96][elemSize >> 1];
    const chunks: Uint8Array[] = [];
    for (let f = 0; f < 48; f++) {
      const raw = new Uint8Array(pixels * elemSize);
      for (let i = 0; i < raw.length; i++) raw[i] = next() % 5 === 0 ? next() & 0xff : 0;
      const chunk = bslz4Encode(raw, elemSize, 8 * (1 + (next() % 40))).slice();
      const kind = next() % 4;
      if (kind === 0) chunk[next() % chunk.length] = next() & 0xff;
      if (kind === 1) chunk[12 + (next() % (chunk.length - 12))] ^= 1 << (next() % 8);
      chunks.push(kind === 2 ? chunk.subarray(0, next() % chunk.length) : chunk);
    }
    const { slot, index } = pack(chunks, (i) => i % 3);
    const flags = Uint32Array.from({ length: pixels }, (_, i) => (i % 17 === 0 ? 1 : 0));
    const batch = { slot, index, frameCount: chunks.length, pixels, elemSize, flags };
    batches.push(batch);
  }
  return batches;
}

describe('bslz4-decode pass: faults', () => {
  withGpu('a planted fault of every code, each beside valid frames', async (ctx) => {
    const { batch, expected, faults } = faultBatch();
    const { twin } = await compare(ctx, batch, { workgroupSize: 64 });
    expect([...twin.errors].map(decodeErrorName)).toEqual(expected.map(decodeErrorName));
    expect(twin.audit.failedFrames).toBe(faults + 1);
    const covered = new Set(expected);
    for (const code of Object.values(DecodeError))
      expect(covered.has(code), decodeErrorName(code)).toBe(true);
    await compare(ctx, batch, { workgroupSize: 128, maxFramesPerDispatch: 5, workgroupsPerDispatch: 2 });
    // Blocks longer than the staged words are read from the slot past the stage.
    await compare(ctx, batch, { workgroupSize: 32, stageWords: 3 });
    await compare(ctx, batch, { workgroupSize: 1, stageWords: 1, maxFramesPerDispatch: 9 });
  });

  withGpu('random byte mutations: GPU verdicts equal the twin for 1, 2 and 4 byte values', async (ctx) => {
    for (const batch of mutatedBatches()) {
      const { twin } = await compare(ctx, batch);
      expect(new Set(twin.errors).size).toBeGreaterThan(2);
      await compare(ctx, batch, { workgroupSize: 7, stageWords: 5 });
    }
  });

  withGpu('the audit accumulates across batches', async (ctx) => {
    const b = fixtureBatch([{ file: 'odd_u16_33x35.h5', dataset: '/data' }]);
    const pass = createBslz4DecodePass(ctx.device, { elemSize: 2 });
    const audit = ctx.storage(AUDIT_LAYOUT.words * 4);
    const errors = ctx.storage(b.frameCount * 4);
    const totals = ctx.storage(b.frameCount * 8);
    const expected = emptyAudit();
    for (const [first, count] of [
      [0, 5],
      [5, 7],
    ]) {
      const sub = pack(b.chunks.slice(first, first + count));
      bslz4DecodeBatch(
        sub.slot,
        sub.index,
        b.flags,
        { frameCount: count, pixels: b.pixels, elemSize: 2 },
        expected,
      );
      pass.run({
        compressed: ctx.upload(sub.slot),
        index: ctx.upload(sub.index),
        flags: ctx.upload(b.flags),
        decoded: ctx.storage(count * minWordsPerFrame(b.pixels, 2) * 4),
        errors,
        totals,
        audit,
        frameCount: count,
        pixels: b.pixels,
        firstFrame: first,
      });
    }
    const gpu = await readDecodeResults(ctx.device, { errors, totals, audit }, { frameCount: b.frameCount });
    expect(gpu.audit).toEqual(expected);
    expect([...gpu.totals].map(Number)).toEqual(
      oracle.files['odd_u16_33x35.h5'].datasets['/data'].frame_sums,
    );
  });
});

/**
 * Multi-shader variants (bslz4-decode-variants.ts): blocks in workgroup memory or global scratch, 1 to 4
 * blocks at once, lanes from 7 to 64, stages from 1 word (bytes past it read from the slot) to whole blocks,
 * persistent workgroups.
 */
const VARIANTS = [
  'multi',
  'multi-wg7-x3-stage5',
  'scratch-wg32-x2-stage512',
  'scratch-wg64-x4-stage1-persist3',
  'scratch-wg16-x3-stage3',
  'multi-wg32-x2-stage64-persist2',
  'scratch-win-wg32-x2-stage512',
  'multi-win-wg7-x3-stage5-ep1',
];

describe('bslz4-decode pass: variants vs twin', () => {
  for (const variant of VARIANTS) {
    withGpu(
      `${variant}: faults of every code, random mutations, dispatch boundaries, 33x35 and 32x32 fixtures`,
      async (ctx) => {
        const { batch, expected } = faultBatch();
        const { twin } = await compare(ctx, batch, { variant });
        expect([...twin.errors].map(decodeErrorName)).toEqual(expected.map(decodeErrorName));
        for (const m of mutatedBatches()) await compare(ctx, m, { variant });
        const b = fixtureBatch([{ file: 'many_v1_u8_32.h5', dataset: '/data' }]);
        const sub = { ...b, ...pack(b.chunks.slice(0, 45), (i) => i % 3), frameCount: 45 };
        sub.flags[5] = 1;
        await compare(ctx, sub, { variant, maxFramesPerDispatch: 7, firstFrame: 9, wordsPerFrame: 260 });
        for (const file of ['odd_u16_33x35.h5', 'many_fixed_u32_32.h5']) {
          const f = fixtureBatch([{ file, dataset: '/data' }]);
          f.flags[3] = 1;
          await compare(ctx, f, { variant });
        }
      },
      180_000,
    );
  }

  withGpu(
    'matches whose offsets are multiples of 4 * lanes, or at most 8 (read without a barrier)',
    async (ctx) => {
      const pixels = 33 * 35;
      const values = sparseCounts(3, 33, 35, 3);
      const valid = bslz4Encode(new Uint8Array(values.buffer, 0, pixels * 2), 2);
      const next = rng(9);
      const lits = (n: number) => Array.from({ length: n }, () => next() & 0xff);
      // 128 literals, match offset 128 x 300; 7 literals, match offset 256 x 1000; 5 literals, match offset 3 x 40;
      // match offset 7 x 30 (the last two from a window of the last 8 bytes); 794 literals (2,304 bytes).
      const payload = [
        ...[0xff, 113, ...lits(128), 0x80, 0x00, 0xff, 26],
        ...[0x7f, ...lits(7), 0x00, 0x01, 0xff, 0xff, 0xff, 216],
        ...[0x5f, ...lits(5), 0x03, 0x00, 21],
        ...[0x0f, 0x07, 0x00, 11],
        ...[0xf0, 0xff, 0xff, 0xff, 14, ...lits(794)],
      ];
      const chunks = [valid, withPayload(valid, payload), valid];
      const batch = {
        ...pack(chunks),
        frameCount: 3,
        pixels,
        elemSize: 2 as const,
        flags: new Uint32Array(pixels),
      };
      for (const variant of [
        'base',
        'multi',
        'scratch-wg32-x2-stage512',
        'scratch-wg64-x1-stage1',
        'multi-wg7-x3-stage5',
        'scratch-win-wg32-x1-stage4',
        'multi-win-wg5-x2-stage1',
      ]) {
        const { twin } = await compare(ctx, batch, { variant });
        expect([...twin.errors]).toEqual([0, 0, 0]);
      }
    },
    180_000,
  );

  withGpu(
    '192x192 uint16 fixture (sha256 of the oracle)',
    async (ctx) => {
      const b = fixtureBatch([{ file: 'latest_fixed_u16_192.h5', dataset: '/data' }]);
      const ds = oracle.files['latest_fixed_u16_192.h5'].datasets['/data'];
      for (const variant of [
        'scratch-wg32-x4-stage256',
        'multi-wg64-x2-stage2',
        'scratch-win-wg32-x3-stage8',
      ]) {
        const { words } = await compare(ctx, b, { variant });
        expect(sha256(valueBytes(words, b))).toBe(ds.sha256);
      }
    },
    180_000,
  );

  withGpu('variant names', async (ctx) => {
    expect(createBslz4DecodePass(ctx.device, { elemSize: 2 }).variant.name).toBe(DEFAULT_DECODE_VARIANT);
    expect(parseDecodeVariant('scratch-wg32-x2-stage512-persist9')).toEqual({
      name: 'scratch-wg32-x2-stage512-persist9',
      shader: 'multi',
      lanes: 32,
      groups: 2,
      stageWords: 512,
      scratch: true,
      window: false,
      epochs: 8,
      workgroups: 9,
    });
    expect(parseDecodeVariant('wg128').shader).toBe('fused');
    expect(() => parseDecodeVariant('wg0')).toThrow(/positive integer/);
    expect(() => parseDecodeVariant('fast')).toThrow(/Unknown decode variant part/);
    expect(() => createBslz4DecodePass(ctx.device, { elemSize: 2, variant: 'multi-stage99999999' })).toThrow(
      /workgroup memory/,
    );
  });
});
