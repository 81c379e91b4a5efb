/**
 * The bslz4-parse pass (src/shaders/bslz4-parse.wgsl) against its CPU twin (src/kernels/bslz4-parse.ts): every
 * block's (sequences, verdict) and the sequences themselves, on planted faults of every code, random mutations,
 * 192x192 uint16 frames of 9 blocks, lists too small for their blocks, and a dispatch that starts inside the
 * batch. The decode variants that copy from these lists are compared with the decode twin in
 * bslz4-decode-variants.gpu.test.ts.
 */
import { describe, expect } from 'vitest';
import { bslz4Encode } from '../../codec/index.ts';
import { type Bslz4ParseParams, bslz4Parse, listBlocks } from '../../kernels/bslz4-parse.ts';
import source from '../../shaders/bslz4-parse.wgsl?raw';
import { encodeChunks } from '../chunked-dispatch.ts';
import { sparseCounts } from '../test-data.ts';
import { type GpuTestContext, withGpu } from '../test-harness.ts';
import { structLayout } from '../uniform-layout.ts';
import { type Batch, faultBatch, mutatedBatches, pack } from './bslz4-decode.test-support.ts';
import { NO_PARSE_AHEAD } from './bslz4-decode-job.ts';
import { PARSE_WORKGROUP, parsePipeline } from './bslz4-decode-pipeline.ts';

const layout = structLayout(source, 'Params');

/** Runs the parse pass over batch frames [frameStart, frameEnd) and requires the twin's lists; returns them. */
async function compareParse(ctx: GpuTestContext, b: Batch, p: Omit<Bslz4ParseParams, 'pixels' | 'elemSize'>) {
  const params = { ...p, pixels: b.pixels, elemSize: b.elemSize };
  const twin = bslz4Parse(b.slot, b.index, params);
  const entries = (p.frameEnd - p.frameStart) * twin.blocksPerFrame;
  const seqs = ctx.upload(new Uint32Array(Math.max(1, 2 * entries * p.cap)).fill(0xdeadbeef));
  const info = ctx.upload(new Uint32Array(Math.max(1, 2 * entries)).fill(0xdeadbeef));
  const encoder = ctx.device.createCommandEncoder();
  const uniforms = encodeChunks(
    encoder,
    {
      device: ctx.device,
      pipeline: parsePipeline(ctx.device, b.elemSize, p.cap),
      layout,
      label: 'bslz4-parse',
      bindings: [
        { binding: 1, resource: { buffer: ctx.upload(b.slot) } },
        { binding: 2, resource: { buffer: ctx.upload(b.index) } },
        { binding: 9, resource: { buffer: seqs } },
        { binding: 10, resource: { buffer: info } },
      ],
    },
    [
      {
        params: {
          frame_start: p.frameStart,
          frame_end: p.frameEnd,
          pixels: b.pixels,
          expected_bytes: b.pixels * b.elemSize,
          words_per_frame: 0,
          slot_bytes: p.slotBytes ?? b.slot.length,
          first_frame: 0,
          flag_base: 0,
          index_base: 0,
          ...NO_PARSE_AHEAD,
        },
        workgroups: Math.ceil(entries / PARSE_WORKGROUP),
      },
    ],
  );
  ctx.device.queue.submit([encoder.finish()]);
  uniforms.destroy();
  const gpuInfo = await ctx.readBack(info, Uint32Array, 8 * entries);
  const gpuSeqs = await ctx.readBack(seqs, Uint32Array, 8 * entries * p.cap);
  expect([...gpuInfo]).toEqual([...twin.info]);
  for (let t = 0; t < entries; t++) {
    const n = 2 * twin.info[2 * t];
    const at = 2 * t * p.cap;
    expect([...gpuSeqs.subarray(at, at + n)]).toEqual([...twin.seqs.subarray(at, at + n)]);
  }
  return twin;
}

/** Verdicts (info[2t + 1]) of the twin's entries. */
const verdicts = (info: Uint32Array) => info.filter((_, i) => i % 2 === 1);

describe('bslz4-parse pass vs twin', () => {
  withGpu(
    'planted faults of every code and random mutations: the same lists and verdicts',
    async (ctx) => {
      const { batch } = faultBatch();
      const twin = await compareParse(ctx, batch, { frameStart: 0, frameEnd: batch.frameCount, cap: 256 });
      // Valid frames have lists (verdict 1); LZ4 faults are found by the parse (verdict = code + 1).
      expect(verdicts(twin.info).filter((v) => v === 1).length).toBeGreaterThanOrEqual(21);
      expect(new Set(verdicts(twin.info))).toEqual(new Set([0, 1, 9, 10, 11, 12]));
      for (const m of mutatedBatches())
        await compareParse(ctx, m, { frameStart: 0, frameEnd: m.frameCount, cap: 256 });
    },
    180_000,
  );

  withGpu(
    '192x192 uint16 frames of 9 blocks; lists too small for some blocks; a dispatch from frame 3',
    async (ctx) => {
      const frames = 12;
      const pixels = 192 * 192;
      const values = sparseCounts(frames, 192, 192, 21);
      const chunks = Array.from({ length: frames }, (_, f) =>
        bslz4Encode(new Uint8Array(values.buffer, f * pixels * 2, pixels * 2), 2),
      );
      const batch = {
        ...pack(chunks, (i) => i % 4),
        frameCount: frames,
        pixels,
        elemSize: 2 as const,
        flags: new Uint32Array(pixels),
      };
      expect(listBlocks(pixels, 2)).toBe(9);
      // These noisy frames (10 % of pixels nonzero) need up to ~300 sequences a block; the benchmark's, < 200.
      const full = await compareParse(ctx, batch, { frameStart: 0, frameEnd: frames, cap: 512 });
      expect(verdicts(full.info).every((v) => v === 1)).toBe(true);
      const counts = full.info.filter((_, i) => i % 2 === 0);
      const small = 256;
      expect(Math.max(...counts)).toBeGreaterThan(small);
      // Blocks with more sequences than the list holds get no list (verdict 0), and keep those that fit.
      const cut = await compareParse(ctx, batch, { frameStart: 3, frameEnd: frames - 1, cap: small });
      const cutVerdicts = verdicts(cut.info);
      expect(cutVerdicts.includes(0)).toBe(true);
      cutVerdicts.forEach((v, t) => {
        const n = counts[27 + t];
        expect(v).toBe(n <= small ? 1 : 0);
        expect(cut.info[2 * t]).toBe(Math.min(n, small));
      });
    },
    180_000,
  );
});
