/**
 * The two-phase bitshuffle/LZ4 decode pass against the production twin (src/kernels/bslz4-decode.ts):
 * identical words, error codes, totals and audit on the committed fixtures, at dispatch boundaries, with
 * planted faults of every code, random mutations and overlapping chunks (the GPU fallback). The batch
 * helpers mirror those of bslz4-decode.gpu.test.ts (which exports none).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bslz4Encode } from '../../codec/index.ts';
import {
  AUDIT_LAYOUT,
  type Bslz4DecodeResult,
  bslz4DecodeBatch,
  type ElemSize,
  minWordsPerFrame,
} from '../../kernels/bslz4-decode.ts';
import { bslz4Decode2pBatch } from '../../kernels/bslz4-resolve.ts';
import { DECODE_OK, DecodeError, decodeErrorName } from '../../kernels/decode-errors.ts';
import { rng, sparseCounts } from '../test-data.ts';
import { type GpuTestContext, withGpu } from '../test-harness.ts';
import { readDecodeResults } from './bslz4-decode.ts';
import { createBslz4Decode2pPass } from './bslz4-decode-2p.ts';

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
  workgroupSize?: number;
  frameLanes?: number;
  parseWorkgroupSize?: number;
  cacheEntries?: number;
  maxFramesPerDispatch?: number;
  workgroupsPerDispatch?: number;
  firstFrame?: number;
  wordsPerFrame?: number;
}

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

function expectSameWords(actual: Uint32Array, expected: Uint32Array): void {
  expect(actual.length).toBe(expected.length);
  const bad = actual.findIndex((v, i) => v !== expected[i]);
  expect(
    bad === -1 ? 'identical' : `first difference at word ${bad}: ${actual[bad]} != ${expected[bad]}`,
  ).toBe('identical');
}

/** Runs the two-phase pass and the production twin on `b`: identical words, errors, totals and audit. */
async function compare(ctx: GpuTestContext, b: Batch, o: RunOptions = {}): Promise<Bslz4DecodeResult> {
  const { frameCount, pixels, elemSize } = b;
  const firstFrame = o.firstFrame ?? 0;
  const wordsPerFrame = o.wordsPerFrame ?? minWordsPerFrame(pixels, elemSize);
  const twin = bslz4DecodeBatch(b.slot, b.index, b.flags, { frameCount, pixels, elemSize, wordsPerFrame });
  // The CPU twins of the two phases agree with the production twin too.
  const twin2 = bslz4Decode2pBatch(b.slot, b.index, b.flags, { frameCount, pixels, elemSize, wordsPerFrame });
  expect([...twin2.errors]).toEqual([...twin.errors]);
  expectSameWords(twin2.words, twin.words);
  expect(twin2.totals).toEqual(twin.totals);
  expect(twin2.audit).toEqual(twin.audit);
  const pass = createBslz4Decode2pPass(ctx.device, {
    elemSize,
    workgroupSize: o.workgroupSize,
    frameLanes: o.frameLanes,
    parseWorkgroupSize: o.parseWorkgroupSize,
    cacheEntries: o.cacheEntries,
  });
  const decoded = ctx.upload(new Uint32Array(Math.max(1, frameCount * wordsPerFrame)).fill(0xdeadbeef));
  const errors = ctx.upload(new Uint32Array(firstFrame + frameCount + 1).fill(77));
  const totals = ctx.upload(new Uint32Array(2 * (firstFrame + frameCount + 1)).fill(77));
  const audit = ctx.storage(AUDIT_LAYOUT.words * 4);
  pass.run({
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
  });
  const words = await ctx.readBack(decoded, Uint32Array);
  const gpu = await readDecodeResults(ctx.device, { errors, totals, audit }, { firstFrame, frameCount });
  pass.destroy();
  expect([...gpu.errors].map(decodeErrorName)).toEqual([...twin.errors].map(decodeErrorName));
  expectSameWords(words, twin.words);
  expect(gpu.totals).toEqual(twin.totals);
  expect(gpu.audit).toEqual(twin.audit);
  const allErrors = await ctx.readBack(errors, Uint32Array);
  expect(allErrors[firstFrame + frameCount]).toBe(77);
  if (firstFrame > 0) expect(allErrors[firstFrame - 1]).toBe(77);
  return twin;
}

describe('bslz4-decode-2p pass: fixtures vs the production twin', () => {
  for (const file of [
    'latest_fixed_u16_192.h5',
    'odd_u16_33x35.h5',
    'many_v1_u8_32.h5',
    'many_fixed_u32_32.h5',
  ]) {
    withGpu(file, async (ctx) => {
      const b = fixtureBatch([{ file, dataset: '/data' }]);
      b.flags[7] = 1;
      const twin = await compare(ctx, b);
      expect([...twin.errors].every((e) => e === DECODE_OK)).toBe(true);
    });
  }

  withGpu('192x192 uint16: small caches (global table reads), odd lane counts', async (ctx) => {
    const b = fixtureBatch([{ file: 'latest_fixed_u16_192.h5', dataset: '/data' }]);
    await compare(ctx, b, { cacheEntries: 1, workgroupSize: 96, frameLanes: 4, parseWorkgroupSize: 12 });
    await compare(ctx, b, { cacheEntries: 64, workgroupSize: 7, frameLanes: 1, parseWorkgroupSize: 1 });
  });

  withGpu('ARINA acquisition: 3 shards, pixel mask flags', async (ctx) => {
    const acq = oracle.acquisitions.arina;
    const b = fixtureBatch(acq.shards.map((file: string) => ({ file, dataset: acq.dataset })));
    for (const i of acq.pixel_mask.flagged_indices) b.flags[i] = 1 + (i % 3);
    const twin = await compare(ctx, b);
    expect([...twin.totals].map(Number)).toEqual(acq.unflagged.frame_sums);
  });

  withGpu(
    'frames at dispatch boundaries, few persistent workgroups, offset outputs, pad words',
    async (ctx) => {
      const b = fixtureBatch([{ file: 'many_v1_u8_32.h5', dataset: '/data' }]);
      const sub = pack(b.chunks.slice(0, 45), (i) => i % 3);
      const batch = { ...b, ...sub, frameCount: 45 };
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

describe('bslz4-decode-2p pass: faults', () => {
  withGpu('a planted fault of every code, each beside valid frames', async (ctx) => {
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
      [
        DecodeError.UNSUPPORTED_BLOCK_SIZE,
        bslz4Encode(new Uint8Array(values.buffer, 0, pixels * 2), 2, 8192),
      ],
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
    const last = chunks.length;
    const withIndexFault = new Uint32Array(index.length + 2);
    withIndexFault.set(index);
    withIndexFault[2 * last] = slot.length - 10;
    withIndexFault[2 * last + 1] = 11;
    expected.push(DecodeError.INDEX_OUT_OF_SLOT);
    const flags = new Uint32Array(pixels);
    flags[100] = 1;
    const batch = { slot, index: withIndexFault, frameCount: last + 1, pixels, elemSize: 2 as const, flags };
    const twin = await compare(ctx, batch);
    expect([...twin.errors].map(decodeErrorName)).toEqual(expected.map(decodeErrorName));
    expect(twin.audit.failedFrames).toBe(faults.length + 1);
    await compare(ctx, batch, {
      workgroupSize: 64,
      maxFramesPerDispatch: 5,
      workgroupsPerDispatch: 2,
      cacheEntries: 3,
    });
    await compare(ctx, batch, {
      workgroupSize: 1,
      frameLanes: 2,
      parseWorkgroupSize: 2,
      maxFramesPerDispatch: 9,
    });
  });

  withGpu(
    'random byte mutations: verdicts and words equal the twin for 1, 2 and 4 byte values',
    async (ctx) => {
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
        const twin = await compare(ctx, batch);
        expect(new Set(twin.errors).size).toBeGreaterThan(2);
        await compare(ctx, batch, {
          workgroupSize: 7,
          frameLanes: 3,
          parseWorkgroupSize: 9,
          cacheEntries: 5,
        });
      }
    },
    300_000,
  );

  withGpu('overlapping and out-of-order chunks take the exact GPU fallback', async (ctx) => {
    const b = fixtureBatch([{ file: 'odd_u16_33x35.h5', dataset: '/data' }]);
    const n = b.frameCount;
    // Frame order reversed (each chunk starts before the earlier ones), then frame 0 repeated.
    const index = new Uint32Array(2 * (n + 1));
    for (let f = 0; f < n; f++) {
      index[2 * f] = b.index[2 * (n - 1 - f)];
      index[2 * f + 1] = b.index[2 * (n - 1 - f) + 1];
    }
    index[2 * n] = index[0];
    index[2 * n + 1] = index[1];
    const batch = { ...b, index, frameCount: n + 1 };
    expect(
      bslz4Decode2pBatch(b.slot, index, b.flags, { frameCount: n + 1, pixels: b.pixels, elemSize: 2 })
        .fallback,
    ).toBe(true);
    await compare(ctx, batch);
  });
});

describe('bslz4-decode-2p twins (CPU)', () => {
  it('resolve a synthetic-free fixture exactly like the production twin', () => {
    const b = fixtureBatch([{ file: 'latest_fixed_u16_192.h5', dataset: '/data' }]);
    const p = { frameCount: b.frameCount, pixels: b.pixels, elemSize: b.elemSize };
    const a = bslz4DecodeBatch(b.slot, b.index, b.flags, p);
    const t = bslz4Decode2pBatch(b.slot, b.index, b.flags, p);
    expect(t.fallback).toBe(false);
    expectSameWords(t.words, a.words);
    expect(t.audit).toEqual(a.audit);
  });
});
