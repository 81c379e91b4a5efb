/**
 * The fused bitshuffle/LZ4 decode + audit pass against its CPU twin (identical words, errors, totals and
 * audit) and the h5py oracle (sha256, frame sums, max, count above 255) on the committed fixtures; frames at
 * dispatch boundaries; planted faults of every error code beside valid frames; random mutations. The multi
 * shader's variants: bslz4-decode-variants.gpu.test.ts.
 */
import { describe, expect } from 'vitest';
import { AUDIT_LAYOUT, bslz4DecodeBatch, emptyAudit, minWordsPerFrame } from '../../kernels/bslz4-decode.ts';
import { DECODE_OK, DecodeError, decodeErrorName } from '../../kernels/decode-errors.ts';
import { withGpu } from '../test-harness.ts';
import {
  compare,
  faultBatch,
  fixtureBatch,
  log,
  mutatedBatches,
  oracle,
  pack,
  sha256,
  valueBytes,
} from './bslz4-decode.test-support.ts';
import { createBslz4DecodePass, readDecodeResults } from './bslz4-decode.ts';
import { DEFAULT_DECODE_VARIANT, loadDecodeVariant } from './bslz4-decode-variants.ts';

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

  withGpu(
    'auditBins false (the decode of the load): bins 0 and 256 only, failed frames dropped, every variant',
    async (ctx) => {
      const { batch } = faultBatch();
      const arina = oracle.acquisitions.arina;
      const b = fixtureBatch(arina.shards.map((file: string) => ({ file, dataset: arina.dataset })));
      for (const i of arina.pixel_mask.flagged_indices) b.flags[i] = 1;
      const variants = [
        DEFAULT_DECODE_VARIANT,
        loadDecodeVariant(ctx.device.limits.maxStorageBuffersPerShaderStage),
        'base',
      ];
      expect(new Set(variants).size).toBe(3);
      for (const variant of variants) {
        for (const input of [batch, b]) {
          const full = await compare(ctx, input, { variant });
          const { twin } = await compare(ctx, input, { variant, auditBins: false });
          // The twin's bins 1..255 stay zero; everything else is the full audit's.
          const expected = full.twin.audit.histogram.slice();
          expected.fill(0n, 1, 256);
          expect(twin.audit.histogram).toEqual(expected);
          expect({ ...twin.audit, histogram: null }).toEqual({ ...full.twin.audit, histogram: null });
          expect(twin.totals).toEqual(full.twin.totals);
        }
      }
    },
  );

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
