/**
 * The multi decode's flag bits, packed once a load: a job with `flagsPacked` reuses the bits an earlier job packed
 * into the pass's scratch (same flags buffer and pixels), and any other job packs them again. SwiftShader in CI,
 * the H200 for timing (docs/performance.md, eighteenth session).
 */
import { describe, expect } from 'vitest';
import { AUDIT_LAYOUT, bslz4DecodeBatch, minWordsPerFrame } from '../../kernels/bslz4-decode.ts';
import { decodeErrorName } from '../../kernels/decode-errors.ts';
import { withGpu } from '../test-harness.ts';
import { faultBatch } from './bslz4-decode.test-support.ts';
import { createBslz4DecodePass, readDecodeResults } from './bslz4-decode.ts';
import { DEFAULT_LOAD_DECODE_VARIANT } from './bslz4-decode-variants.ts';

describe('bslz4-decode pass: flag bits packed once a load', () => {
  withGpu('reuses the packed bits only for the same flags buffer with flagsPacked', async (ctx) => {
    const { batch } = faultBatch();
    const words = minWordsPerFrame(batch.pixels, 2);
    // Two flag sets that exclude different pixels, so the totals and audits they give differ.
    const flagsA = batch.flags;
    const flagsB = new Uint32Array(batch.pixels).map((_, p) => (p % 7 === 3 ? 1 : 0));
    const twin = (flags: Uint32Array) =>
      bslz4DecodeBatch(batch.slot, batch.index, flags, {
        frameCount: batch.frameCount,
        pixels: batch.pixels,
        elemSize: 2,
        wordsPerFrame: words,
      });
    const [twinA, twinB] = [twin(flagsA), twin(flagsB)];
    expect(twinA.totals).not.toEqual(twinB.totals);

    const pass = createBslz4DecodePass(ctx.device, { elemSize: 2, variant: DEFAULT_LOAD_DECODE_VARIANT });
    pass.reserve(batch.frameCount, { pixels: batch.pixels });
    const compressed = ctx.upload(batch.slot);
    const index = ctx.upload(batch.index);
    const bufferA = ctx.upload(flagsA);
    const bufferB = ctx.upload(flagsB);
    const run = async (flags: GPUBuffer, flagsPacked: boolean) => {
      const job = {
        compressed,
        compressedBytes: batch.slot.length,
        index,
        flags,
        decoded: ctx.upload(new Uint32Array(batch.frameCount * words).fill(0xdeadbeef)),
        errors: ctx.upload(new Uint32Array(batch.frameCount).fill(77)),
        totals: ctx.upload(new Uint32Array(2 * batch.frameCount).fill(77)),
        audit: ctx.storage(AUDIT_LAYOUT.words * 4),
        frameCount: batch.frameCount,
        pixels: batch.pixels,
        wordsPerFrame: words,
        flagsPacked,
      };
      const encoder = ctx.device.createCommandEncoder();
      const params = pass.encode(encoder, job);
      ctx.device.queue.submit([encoder.finish()]);
      params.destroy();
      const gpu = await readDecodeResults(ctx.device, job, { frameCount: batch.frameCount });
      return { ...gpu, words: await ctx.readBack(job.decoded, Uint32Array) };
    };
    const expectTwin = (gpu: Awaited<ReturnType<typeof run>>, t: ReturnType<typeof twin>) => {
      expect([...gpu.errors].map(decodeErrorName)).toEqual([...t.errors].map(decodeErrorName));
      expect(gpu.words).toEqual(t.words);
      expect(gpu.totals).toEqual(t.totals);
      expect(gpu.audit).toEqual(t.audit);
    };

    // The first job packs A even when it says its flags are packed (nothing was); the second reuses them.
    expectTwin(await run(bufferA, true), twinA);
    expectTwin(await run(bufferA, true), twinA);
    // Another flags buffer is packed, whatever the job says.
    expectTwin(await run(bufferB, true), twinB);
    // B's contents changed behind the pass's back: a job that says they did not keeps the bits packed before
    // (which is what makes it one pack a load), one that does not say so packs them again.
    ctx.device.queue.writeBuffer(bufferB, 0, flagsA);
    expectTwin(await run(bufferB, true), twinB);
    expectTwin(await run(bufferB, false), twinA);
    pass.destroy();
  });
});
