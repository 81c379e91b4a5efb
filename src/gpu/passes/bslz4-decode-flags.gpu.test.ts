/**
 * The multi decode's flag bits, packed once a load: a job with `flagsPacked` reuses the bits an earlier job packed
 * into the pass's scratch (same flags buffer and pixels), and any other job packs them again. SwiftShader in CI,
 * the H200 for timing (docs/performance.md, eighteenth session).
 */
import { describe, expect } from 'vitest';
import { bslz4DecodeBatch, minWordsPerFrame } from '../../kernels/bslz4-decode.ts';
import { withGpu } from '../test-harness.ts';
import { decodeOutputs, expectTwinOutputs, faultBatch } from './bslz4-decode.test-support.ts';
import { createBslz4DecodePass } from './bslz4-decode.ts';
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
    // Runs a job with these flags and requires twin `t`'s outputs.
    const expectRun = async (flags: GPUBuffer, flagsPacked: boolean, t: ReturnType<typeof twin>) => {
      const job = {
        compressed,
        compressedBytes: batch.slot.length,
        index,
        flags,
        ...decodeOutputs(ctx, batch.frameCount, words),
        frameCount: batch.frameCount,
        pixels: batch.pixels,
        wordsPerFrame: words,
        flagsPacked,
      };
      const encoder = ctx.device.createCommandEncoder();
      const params = pass.encode(encoder, job);
      ctx.device.queue.submit([encoder.finish()]);
      params.destroy();
      await expectTwinOutputs(ctx, job, t);
    };

    // The first job packs A even when it says its flags are packed (nothing was); the second reuses them.
    await expectRun(bufferA, true, twinA);
    await expectRun(bufferA, true, twinA);
    // Another flags buffer is packed, whatever the job says.
    await expectRun(bufferB, true, twinB);
    // B's contents changed behind the pass's back: a job that says they did not keeps the bits packed before
    // (which is what makes it one pack a load), one that does not say so packs them again.
    ctx.device.queue.writeBuffer(bufferB, 0, flagsA);
    await expectRun(bufferB, true, twinB);
    await expectRun(bufferB, false, twinA);
    pass.destroy();
  });
});
