/**
 * Helpers shared by the bslz4-decode pass tests (bslz4-decode.gpu.test.ts, bslz4-decode-variants.gpu.test.ts;
 * not part of the pass API): batches of the committed fixtures, planted faults of every error code, random
 * mutations, and `compare`, which runs the pass and its CPU twin and requires identical results.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { bslz4Encode } from '../../codec/index.ts';
import {
  AUDIT_LAYOUT,
  type Bslz4DecodeResult,
  bslz4DecodeBatch,
  type ElemSize,
  minWordsPerFrame,
} from '../../kernels/bslz4-decode.ts';
import { DECODE_OK, DecodeError, decodeErrorName } from '../../kernels/decode-errors.ts';
import {
  clearDecodedHighPlanes,
  decodedPlanesLayout,
  toDecodedPlanes,
} from '../../kernels/decoded-planes.ts';
import { rng, sparseCounts } from '../test-data.ts';
import type { GpuTestContext } from '../test-harness.ts';
import { createBslz4DecodePass, readDecodeResults } from './bslz4-decode.ts';

const dir = join(import.meta.dirname, '../../../test/fixtures');
export const oracle = JSON.parse(readFileSync(join(dir, 'oracle.json'), 'utf8'));
const ELEM = { uint8: 1, uint16: 2, uint32: 4 } as const;

export interface Batch {
  slot: Uint8Array;
  index: Uint32Array;
  frameCount: number;
  pixels: number;
  elemSize: ElemSize;
  flags: Uint32Array;
}

export interface RunOptions {
  variant?: string;
  workgroupSize?: number;
  stageWords?: number;
  maxFramesPerDispatch?: number;
  workgroupsPerDispatch?: number;
  firstFrame?: number;
  wordsPerFrame?: number;
  /** false: bins 1..255 are left to the transpose (the pass's and the twin's `auditBins`). */
  auditBins?: boolean;
  /** The output as byte planes (the pass's `planes`; the twin's words through toDecodedPlanes). */
  planes?: boolean;
}

/** Chunks back to back, each after `gap(i)` junk bytes. */
export function pack(
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
export function fixtureBatch(parts: { file: string; dataset: string }[]): Batch & { chunks: Uint8Array[] } {
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

export interface Compared {
  twin: Bslz4DecodeResult;
  words: Uint32Array;
  ms: number;
}

/** Runs the pass and the twin on `b`; requires identical words, errors, totals and audit. */
export async function compare(ctx: GpuTestContext, b: Batch, o: RunOptions = {}): Promise<Compared> {
  const { frameCount, pixels, elemSize } = b;
  const firstFrame = o.firstFrame ?? 0;
  const form = o.planes ? decodedPlanesLayout(pixels) : null;
  const wordsPerFrame = form?.wordsPerFrame ?? o.wordsPerFrame ?? minWordsPerFrame(pixels, elemSize);
  const twin = bslz4DecodeBatch(b.slot, b.index, b.flags, {
    frameCount,
    pixels,
    elemSize,
    wordsPerFrame: form ? minWordsPerFrame(pixels, elemSize) : wordsPerFrame,
    auditBins: o.auditBins,
  });
  if (form) twin.words = toDecodedPlanes(twin.words, frameCount, pixels);
  const pass = createBslz4DecodePass(ctx.device, {
    elemSize,
    workgroupSize: o.workgroupSize,
    stageWords: o.stageWords,
    variant: o.variant,
    auditBins: o.auditBins,
    planes: o.planes,
  });
  const initial = new Uint32Array(Math.max(1, frameCount * wordsPerFrame)).fill(0xdeadbeef);
  // The planes form's high planes are zero before a decode (it stores only nonzero high bytes).
  if (form) clearDecodedHighPlanes(initial, frameCount, pixels);
  const decoded = ctx.upload(initial);
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

/** A decode job's output buffers for `frameCount` frames, filled with marks the pass must overwrite. */
export function decodeOutputs(ctx: GpuTestContext, frameCount: number, wordsPerFrame: number) {
  return {
    decoded: ctx.upload(new Uint32Array(frameCount * wordsPerFrame).fill(0xdeadbeef)),
    errors: ctx.upload(new Uint32Array(frameCount).fill(77)),
    totals: ctx.upload(new Uint32Array(2 * frameCount).fill(77)),
    audit: ctx.storage(AUDIT_LAYOUT.words * 4),
  };
}

/** Reads a submitted job's outputs back and requires the twin's errors, words, totals and audit. */
export async function expectTwinOutputs(
  ctx: GpuTestContext,
  job: { decoded: GPUBuffer; errors: GPUBuffer; totals: GPUBuffer; audit: GPUBuffer; frameCount: number },
  twin: ReturnType<typeof bslz4DecodeBatch>,
): Promise<void> {
  const gpu = await readDecodeResults(ctx.device, job, { frameCount: job.frameCount });
  expect([...gpu.errors].map(decodeErrorName)).toEqual([...twin.errors].map(decodeErrorName));
  expectSameWords(await ctx.readBack(job.decoded, Uint32Array), twin.words);
  expect(gpu.totals).toEqual(twin.totals);
  expect(gpu.audit).toEqual(twin.audit);
}

export function expectSameWords(actual: Uint32Array, expected: Uint32Array): void {
  expect(actual.length).toBe(expected.length);
  const bad = actual.findIndex((v, i) => v !== expected[i]);
  expect(
    bad === -1 ? 'identical' : `first difference at word ${bad}: ${actual[bad]} != ${expected[bad]}`,
  ).toBe('identical');
}

/** The decoded values of every frame (pad bytes dropped), as little-endian bytes. */
export function valueBytes(words: Uint32Array, b: Batch): Uint8Array {
  const frameBytes = b.pixels * b.elemSize;
  const wpf = words.length / b.frameCount;
  const all = new Uint8Array(words.buffer, words.byteOffset, words.byteLength);
  const out = new Uint8Array(b.frameCount * frameBytes);
  for (let f = 0; f < b.frameCount; f++)
    out.set(all.subarray(f * wpf * 4, f * wpf * 4 + frameBytes), f * frameBytes);
  return out;
}

export const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

export function log(label: string, b: Batch, ms: number): void {
  const mb = (b.frameCount * b.pixels * b.elemSize) / 1e6;
  console.log(
    `[bslz4-decode, SwiftShader] ${label}: ${b.frameCount} frames, ${mb.toFixed(2)} MB decoded in ${ms.toFixed(1)} ms (${(mb / ms).toFixed(3)} GB/s)`,
  );
}

/** A 33x35 uint16 chunk (one LZ4 block of 1152 elements and a raw tail of 3) with its LZ4 payload replaced. */
export function withPayload(chunk: Uint8Array, payload: number[]): Uint8Array {
  const out = new Uint8Array(16 + payload.length + 6);
  out.set(chunk.subarray(0, 12));
  new DataView(out.buffer).setUint32(12, payload.length);
  out.set(payload, 16);
  out.set(chunk.subarray(chunk.length - 6), 16 + payload.length);
  return out;
}

export function setU32(chunk: Uint8Array, at: number, v: number): Uint8Array {
  const out = chunk.slice();
  new DataView(out.buffer).setUint32(at, v);
  return out;
}

/** Valid 33x35 uint16 frames with a planted fault of every code between them, and the expected codes. */
export function faultBatch(): { batch: Batch; expected: number[]; faults: number } {
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
export function mutatedBatches(): Batch[] {
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
