/**
 * The decode's planes form (common/bslz4-out-planes.wgsl, src/kernels/decoded-planes.ts) against the twin's words
 * in that form: low planes, high bytes only where nonzero, span marks, a failed frame all zero, for the load's
 * variant and the other paths of the unshuffle (`ba`, with `qx` too, `zp` without it, whole plane words `u4`, the byte path) on
 * frames with high bytes in chosen spans, in the last partial block and in the raw tail.
 */
import { describe, expect } from 'vitest';
import { bslz4Encode } from '../../codec/index.ts';
import { decodeErrorName } from '../../kernels/decode-errors.ts';
import { sparseCounts } from '../test-data.ts';
import { withGpu } from '../test-harness.ts';
import { compare, faultBatch, fixtureBatch, mutatedBatches, pack } from './bslz4-decode.test-support.ts';
import { createBslz4DecodePass } from './bslz4-decode.ts';
import { DEFAULT_DECODE_VARIANT, DEFAULT_LOAD_DECODE_VARIANT } from './bslz4-decode-variants.ts';

const VARIANTS = [
  DEFAULT_LOAD_DECODE_VARIANT,
  DEFAULT_DECODE_VARIANT,
  'scratch-keep-pat-listg-gf-zp-wg32-x1-stage16',
  'multi-u4-wg7-x3-stage5',
  'multi-list-gf-wg32-x2-stage64-cap3',
  'scratch-keep-pat-listg-gf-zp-ba-mb-qx-wg32-x1-stage16',
  'multi-list-gf-zp-ba-qx-wg8-x3-stage5-cap3',
];

/** Frames of rows x cols counts below 256 but for values above 255 at the given (frame, pixel) places. */
function framesWithHighs(
  frames: number,
  rows: number,
  cols: number,
  seed: number,
  highs: [number, number, number][],
) {
  const pixels = rows * cols;
  const values = sparseCounts(frames, rows, cols, seed, 255);
  for (const [f, p, v] of highs) values[f * pixels + p] = v;
  const chunks = Array.from({ length: frames }, (_, f) =>
    bslz4Encode(new Uint8Array(values.buffer, f * pixels * 2, pixels * 2), 2),
  );
  return {
    ...pack(chunks, (i) => i % 3),
    frameCount: frames,
    pixels,
    elemSize: 2 as const,
    flags: new Uint32Array(pixels),
  };
}

describe('bslz4-decode pass: byte planes vs twin', () => {
  for (const variant of VARIANTS) {
    withGpu(
      `${variant}: faults of every code, high bytes in spans, the last block and the raw tail, 33x35 and 192x192`,
      async (ctx) => {
        const { batch, expected } = faultBatch();
        const { twin } = await compare(ctx, batch, { variant, planes: true });
        expect([...twin.errors].map(decodeErrorName)).toEqual(expected.map(decodeErrorName));
        for (const m of mutatedBatches().filter((m) => m.elemSize === 2))
          await compare(ctx, m, { variant, planes: true });
        // 33 x 35: 1155 values, the raw tail 1152..1154, the last block's values from 1024 on; spans of 64.
        const small = framesWithHighs(12, 33, 35, 7, [
          [0, 0, 256],
          [1, 1154, 65535],
          [2, 1152, 300],
          [2, 1100, 511],
          [3, 63, 1000],
          [3, 64, 1001],
          [4, 700, 258],
          [5, 1023, 40000],
          [5, 1024, 40001],
          [11, 5, 65535],
        ]);
        small.flags[64] = 1;
        const { twin: t2 } = await compare(ctx, small, { variant, planes: true, maxFramesPerDispatch: 5 });
        expect([...t2.errors]).toEqual(new Array(12).fill(0));
        // 192 x 192: 9 blocks of 4,096 values, spans of 1,152; frames without any value above 255 too.
        const big = framesWithHighs(6, 192, 192, 9, [
          [0, 0, 256],
          [0, 36863, 65535],
          [1, 1151, 999],
          [1, 1152, 998],
          [3, 4096 * 4 + 17, 12345],
          [3, 20000, 256],
          [5, 30000, 700],
        ]);
        await compare(ctx, big, { variant, planes: true });
        const f = fixtureBatch([{ file: 'odd_u16_33x35.h5', dataset: '/data' }]);
        f.flags[3] = 1;
        await compare(ctx, f, { variant, planes: true });
      },
      240_000,
    );
  }

  withGpu('refuses the planes form for other values, variants and frame sizes', async (ctx) => {
    expect(() => createBslz4DecodePass(ctx.device, { elemSize: 1, planes: true })).toThrow(/2-byte values/);
    expect(() =>
      createBslz4DecodePass(ctx.device, { elemSize: 2, workgroupSize: 64, stageWords: 1, planes: true }),
    ).toThrow(/multi decode variants/);
    const pass = createBslz4DecodePass(ctx.device, { elemSize: 2, planes: true });
    const job = {
      compressed: ctx.storage(64),
      compressedBytes: 64,
      index: ctx.storage(16),
      flags: ctx.storage(1155 * 4),
      decoded: ctx.storage(4 * 1000),
      errors: ctx.storage(16),
      totals: ctx.storage(32),
      audit: ctx.storage(4096),
      frameCount: 1,
      pixels: 1155,
      wordsPerFrame: 584,
    };
    expect(() => pass.run(job)).toThrow(/588 words a frame/);
    pass.destroy();
  });
});
