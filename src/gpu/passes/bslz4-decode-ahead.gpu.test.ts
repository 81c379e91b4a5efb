/**
 * Parsing ahead (bslz4-decode-list-ahead.wgsl): a list decode whose dispatch also parses the next batch into the
 * other set of lists, both batches' chunks and index entries in one buffer each, as the load runs them
 * (gpu-load.ts). Each batch's words, errors, totals and audit must be the CPU twin's, for batches of planted
 * faults of every code and random mutations, parsed by a parse pass or by the previous batch's dispatch, in
 * both directions between the sets.
 */
import { describe, expect } from 'vitest';
import { AUDIT_LAYOUT, bslz4DecodeBatch, minWordsPerFrame } from '../../kernels/bslz4-decode.ts';
import { bslz4Parse } from '../../kernels/bslz4-parse.ts';
import { withGpu } from '../test-harness.ts';
import {
  type Batch,
  decodeOutputs,
  expectTwinOutputs,
  faultBatch,
  mutatedBatches,
} from './bslz4-decode.test-support.ts';
import { createBslz4DecodePass } from './bslz4-decode.ts';
import { DEFAULT_LOAD_DECODE_VARIANT, parseDecodeVariant } from './bslz4-decode-variants.ts';

/** Frames a set holds (index entries from set * CAP). */
const CAP = 64;

describe('bslz4-decode pass: parsing the next batch in the decode dispatch', () => {
  for (const variant of [DEFAULT_LOAD_DECODE_VARIANT, 'multi-list-wg7-x3-stage5-cap3']) {
    withGpu(
      `${variant}: two batches of faults and mutations, each parsed in the other's dispatch`,
      async (ctx) => {
        const a = faultBatch().batch;
        const b = mutatedBatches().find((m) => m.elemSize === 2 && m.pixels === a.pixels) as Batch;
        expect(b.frameCount).toBeLessThanOrEqual(CAP);
        // Set 0 holds a, set 1 holds b (from byte `base`, after 8 bytes of filler), as the load lays them out.
        const base = a.slot.length + 8;
        const slot = new Uint8Array(base + b.slot.length).fill(0xa5);
        slot.set(a.slot, 0);
        slot.set(b.slot, base);
        const index = new Uint32Array(4 * CAP).fill(0xffffffff);
        index.set(a.index, 0);
        index.set(
          b.index.map((v, i) => (i % 2 === 0 ? v + base : v)),
          2 * CAP,
        );
        const pass = createBslz4DecodePass(ctx.device, { elemSize: 2, variant });
        pass.reserve(CAP, { pixels: a.pixels, maxFramesPerDispatch: CAP, listSets: 2 });
        const compressed = ctx.upload(slot);
        const indexBuffer = ctx.upload(index);
        const sets = [
          { batch: a, indexBase: 0, slotBytes: a.slot.length },
          { batch: b, indexBase: CAP, slotBytes: slot.length },
        ];
        // Runs batch `s` from list set s (already parsed), parsing set 1 - s in the same dispatch unless `last`.
        const jobOf = (s: number) => {
          const { batch, indexBase, slotBytes } = sets[s];
          const words = minWordsPerFrame(batch.pixels, 2);
          return {
            compressed,
            compressedBytes: slotBytes,
            index: indexBuffer,
            indexBase,
            flags: ctx.upload(batch.flags),
            ...decodeOutputs(ctx, batch.frameCount, words),
            frameCount: batch.frameCount,
            pixels: batch.pixels,
            wordsPerFrame: words,
            maxFramesPerDispatch: CAP,
            listSet: s,
          };
        };
        const check = async (s: number, job: ReturnType<typeof jobOf>) => {
          const { batch } = sets[s];
          const twin = bslz4DecodeBatch(batch.slot, batch.index, batch.flags, {
            frameCount: batch.frameCount,
            pixels: batch.pixels,
            elemSize: 2,
            wordsPerFrame: job.wordsPerFrame,
          });
          await expectTwinOutputs(ctx, job, twin);
          return twin;
        };
        const run = (s: number, ahead: boolean) => {
          const job = jobOf(s);
          const other = sets[1 - s];
          const encoder = ctx.device.createCommandEncoder();
          const params = pass.encode(encoder, {
            ...job,
            parsed: true,
            ahead: ahead
              ? { frameCount: other.batch.frameCount, indexBase: other.indexBase, slotBytes: other.slotBytes }
              : undefined,
          });
          ctx.device.queue.submit([encoder.finish()]);
          params.destroy();
          return job;
        };
        // The load's order: a parse pass for a (set 0); a's dispatch parses b; b's parses a again; a's, the last.
        const encoder = ctx.device.createCommandEncoder();
        const parseParams = pass.encodeParse(encoder, jobOf(0));
        ctx.device.queue.submit([encoder.finish()]);
        parseParams.destroy();
        // After a's dispatch, set 1 holds b's lists and verdicts as the parse twin writes them (a decode would
        // also be right without them: a block without a list is walked from its tokens).
        const first = run(0, true);
        const lists = pass.listBuffers();
        if (!lists) throw new Error('no lists');
        const cap = parseDecodeVariant(variant).listCap;
        const parsed = bslz4Parse(slot, index.subarray(2 * CAP, 2 * CAP + 2 * b.frameCount), {
          frameStart: 0,
          frameEnd: b.frameCount,
          pixels: b.pixels,
          elemSize: 2,
          cap,
        });
        const entries = b.frameCount * parsed.blocksPerFrame;
        const info = await ctx.readBack(lists.info, Uint32Array);
        expect([...info.subarray(2 * lists.entries, 2 * (lists.entries + entries))]).toEqual([
          ...parsed.info,
        ]);
        expect(parsed.info.some((v, i) => i % 2 === 1 && v === 1)).toBe(true);
        const seqs = await ctx.readBack(lists.seqs, Uint32Array);
        for (let t = 0; t < entries; t++) {
          const n = 2 * parsed.info[2 * t];
          const at = 2 * (lists.entries + t) * cap;
          expect([...seqs.subarray(at, at + n)]).toEqual([
            ...parsed.seqs.subarray(2 * t * cap, 2 * t * cap + n),
          ]);
        }
        const jobs = [first, run(1, true), run(0, false)];
        const twinA = await check(0, jobs[0]);
        const twinB = await check(1, jobs[1]);
        await check(0, jobs[2]);
        // Both batches hold failing frames, so the lists' verdicts are what the twin says they are.
        expect(twinA.errors.some((e) => e !== 0)).toBe(true);
        expect(twinB.errors.some((e) => e !== 0)).toBe(true);
        pass.destroy();
      },
      180_000,
    );
  }

  withGpu('refuses a batch to parse ahead that its buffers cannot hold, before recording', async (ctx) => {
    const a = faultBatch().batch;
    const pass = createBslz4DecodePass(ctx.device, { elemSize: 2, variant: DEFAULT_LOAD_DECODE_VARIANT });
    pass.reserve(CAP, { pixels: a.pixels, maxFramesPerDispatch: CAP, listSets: 2 });
    const job = {
      compressed: ctx.upload(a.slot),
      index: ctx.upload(a.index),
      flags: ctx.upload(a.flags),
      decoded: ctx.storage(a.frameCount * minWordsPerFrame(a.pixels, 2) * 4),
      errors: ctx.storage(a.frameCount * 4),
      totals: ctx.storage(a.frameCount * 8),
      audit: ctx.storage(AUDIT_LAYOUT.words * 4),
      frameCount: a.frameCount,
      pixels: a.pixels,
      maxFramesPerDispatch: CAP,
      parsed: true,
    };
    const encoder = ctx.device.createCommandEncoder();
    // Index entries past the index buffer, compressed bytes past the slot, more frames than a list set holds.
    for (const ahead of [
      { frameCount: a.frameCount, indexBase: 1, slotBytes: a.slot.length },
      { frameCount: 1, indexBase: 0, slotBytes: a.slot.length + 4 },
      { frameCount: CAP + 1, indexBase: 0, slotBytes: a.slot.length },
    ]) {
      expect(() => pass.encode(encoder, { ...job, ahead })).toThrow(/parse ahead/);
    }
    // Lists not reserved for two sets: refused rather than grown (which would drop the parsed set).
    const single = createBslz4DecodePass(ctx.device, { elemSize: 2, variant: DEFAULT_LOAD_DECODE_VARIANT });
    single.reserve(CAP, { pixels: a.pixels, maxFramesPerDispatch: CAP });
    expect(() => single.encode(encoder, { ...job, listSet: 1 })).toThrow(/reserve them/);
    expect(() => single.reserve(CAP, { pixels: a.pixels, listSets: 3 })).toThrow(/1 or 2 list sets/);
    pass.destroy();
    single.destroy();
  });
});
