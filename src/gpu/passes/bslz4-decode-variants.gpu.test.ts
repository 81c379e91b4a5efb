/**
 * The bslz4-decode pass's multi-shader variants (bslz4-decode-variants.ts) against the CPU twin: the same
 * planted faults, random mutations, dispatch boundaries and fixtures as the fused pass
 * (bslz4-decode.gpu.test.ts); matches read without a barrier; variant names.
 */
import { describe, expect } from 'vitest';
import { bslz4Encode } from '../../codec/index.ts';
import { decodeErrorName } from '../../kernels/decode-errors.ts';
import { rng, sparseCounts } from '../test-data.ts';
import { withGpu } from '../test-harness.ts';
import {
  compare,
  faultBatch,
  fixtureBatch,
  mutatedBatches,
  oracle,
  pack,
  sha256,
  valueBytes,
  withPayload,
} from './bslz4-decode.test-support.ts';
import { createBslz4DecodePass } from './bslz4-decode.ts';
import { decodeOutput } from './bslz4-decode-pipeline.ts';
import { DEFAULT_DECODE_VARIANT, parseDecodeVariant } from './bslz4-decode-variants.ts';

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
  'scratch-keep-x1-stage64',
  'multi-keep-wg7-x3-stage5',
  'scratch-keep-win-wg16-x2-stage3',
  'scratch-keep-pat-x1-stage64',
  'scratch-keep-pat-wg16-x2-stage16',
  'multi-pat-wg7-x3-stage5',
  'scratch-keep-pat-u4-x1-stage64',
  'multi-u4-wg7-x3-stage5',
  'scratch-u4-wg64-x2-stage1-persist3',
  'scratch-keep-pat-wg16-x2-stage16-list',
  'multi-list-wg7-x3-stage5-cap3',
  'scratch-keep-pat-list-x1-stage64-cap40-persist2',
  'scratch-keep-pat-listg-wg16-x2-stage16-cap5',
  'multi-listx-wg7-x3-stage5',
  'scratch-keep-pat-listg-pw4-wg16-x2-stage16',
  'scratch-keep-pat-listg-fpd5-wg16-x2-stage16',
  'scratch-keep-pat-fpd5-wg16-x2-stage16',
  'scratch-keep-pat-listx-fpd5-wg16-x2-stage16',
  'scratch-keep-pat-listg-gf-wg16-x2-stage16',
  'scratch-keep-pat-listg-gf-fpd5-wg16-x2-stage16',
  'scratch-keep-pat-gf-wg16-x4-stage16-persist3',
  'multi-list-gf-wg32-x2-stage64-cap3',
  'scratch-keep-pat-listg-gf-zp-wg32-x1-stage16',
  'multi-list-gf-zp-wg7-x3-stage5-cap3',
  'scratch-keep-pat-listg-gf-zp-ba-wg32-x1-stage16',
  'multi-list-gf-zp-ba-wg7-x3-stage5-cap3',
  'scratch-keep-pat-listg-gf-zp-zt-ba-wg32-x1-stage16',
  'multi-list-gf-zp-zt-wg7-x3-stage5-cap3',
  'scratch-keep-pat-listg-gf-zp-ba-mb-wg32-x1-stage16',
  'multi-list-gf-zp-ba-mb-wg7-x3-stage5-cap3',
  'scratch-keep-pat-listg-gf-zp-ba-sw-wg32-x1-stage16',
  'scratch-keep-pat-listg-gf-zp-ba-mb-qx-wg32-x1-stage16',
  'multi-list-gf-zp-ba-qx-wg8-x3-stage5-cap3',
  'scratch-keep-pat-listg-gf-zp-ba-mb-qx-wg12-x2-stage16',
];

/**
 * Frames of 192 x 192 (9 blocks of 4,096) whose blocks hold every combination of the 4 quads of bit planes of
 * uint16 (bits 0-3, 4-7, 8-11, 12-15): block b's nonzero values use only the quads whose bit is set in a mask of
 * the frame and block, so a `zp` decode skips each quad in some block and reads it in the next.
 */
function quadFrames(): Uint8Array[] {
  const next = rng(23);
  const chunks: Uint8Array[] = [];
  for (let f = 0; f < 3; f++) {
    const values = new Uint16Array(192 * 192);
    for (let b = 0; b < 9; b++) {
      const quads = (f * 9 + b) % 16;
      for (let i = 0; i < 4096; i++) {
        if (next() % 5 !== 0) continue;
        let v = 0;
        for (let q = 0; q < 4; q++) if (quads & (1 << q)) v |= (next() & 15) << (4 * q);
        values[b * 4096 + i] = v;
      }
    }
    chunks.push(bslz4Encode(new Uint8Array(values.buffer), 2));
  }
  return chunks;
}

/**
 * A 33 x 35 uint16 frame whose one LZ4 block is `payload` (literals and matches crafted to decode to 2,304 bytes),
 * between two valid frames: every variant decodes the three as the twin does, without an error.
 */
async function decodesCrafted(
  ctx: Parameters<typeof compare>[0],
  seed: number,
  payload: number[],
  variants: string[],
): Promise<void> {
  const pixels = 33 * 35;
  const values = sparseCounts(3, 33, 35, seed);
  const valid = bslz4Encode(new Uint8Array(values.buffer, 0, pixels * 2), 2);
  const batch = {
    ...pack([valid, withPayload(valid, payload), valid]),
    frameCount: 3,
    pixels,
    elemSize: 2 as const,
    flags: new Uint32Array(pixels),
  };
  for (const variant of variants) {
    const { twin } = await compare(ctx, batch, { variant });
    expect([...twin.errors]).toEqual([0, 0, 0]);
  }
}

describe('bslz4-decode pass: variants vs twin', () => {
  for (const variant of VARIANTS) {
    withGpu(
      `${variant}: faults of every code, random mutations, dispatch boundaries, 33x35 and 32x32 fixtures`,
      async (ctx) => {
        const { batch, expected } = faultBatch();
        // 578 words a frame: the word stores; 584: 16 bytes a store (decodeOutput), the raw tail's vec4 and 4
        // words of padding after it.
        for (const wordsPerFrame of [undefined, 584]) {
          const { twin } = await compare(ctx, batch, { variant, wordsPerFrame });
          expect([...twin.errors].map(decodeErrorName)).toEqual(expected.map(decodeErrorName));
        }
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
    'zp: blocks with every combination of zero quads of bit planes decode as the twin does',
    async (ctx) => {
      const chunks = quadFrames();
      const batch = { ...pack(chunks), frameCount: chunks.length, pixels: 192 * 192, elemSize: 2 as const };
      const flags = new Uint32Array(192 * 192);
      for (const p of [0, 31, 4100, 4127, 8192 + 33, 192 * 192 - 1]) flags[p] = 1;
      for (const variant of [
        'scratch-keep-pat-listg-gf-zp-wg32-x1-stage16',
        'scratch-keep-pat-listg-gf-zp-wg16-x2-stage16',
        'scratch-keep-pat-listg-gf-zp-ba-wg32-x1-stage16',
        'scratch-keep-pat-listg-gf-zp-ba-wg16-x2-stage16',
        'scratch-keep-pat-listg-gf-zp-ba-mb-wg32-x1-stage16',
        'scratch-keep-pat-listg-gf-zp-ba-mb-wg16-x2-stage16',
        'scratch-keep-pat-listg-gf-zp-ba-mb-qx-wg32-x1-stage16',
        'scratch-keep-pat-listg-gf-zp-zt-ba-wg32-x1-stage16',
        'scratch-keep-pat-listg-gf-zp-zt-wg16-x2-stage16',
        'multi-gf-zp-zt-wg7-x3-stage5',
      ]) {
        for (const auditBins of [true, false]) {
          const { twin } = await compare(ctx, { ...batch, flags }, { variant, auditBins });
          expect([...twin.errors]).toEqual([0, 0, 0]);
        }
      }
    },
    180_000,
  );

  withGpu(
    'ba-mb with the bins: a lane counting more of one value from 4 to 15 than 16 bits hold (one lane a block)',
    async (ctx) => {
      // 256 x 512 frames, 32 blocks each: with one lane a block, that lane counts every value of its frame (131,071
      // unflagged fives in frame 0, twice what a 16-bit half holds), so its counts must leave for the frame's bins
      // before they reach 2^16. Frame 1: each value 4..17, in runs of 512.
      const pixels = 256 * 512;
      const a = new Uint16Array(pixels).fill(5);
      const b = Uint16Array.from({ length: pixels }, (_, i) => 4 + ((i >> 9) % 14));
      const chunks = [a, b].map((v) => bslz4Encode(new Uint8Array(v.buffer), 2));
      const batch = { ...pack(chunks), frameCount: 2, pixels, elemSize: 2 as const };
      const flags = new Uint32Array(pixels);
      flags[7] = 1;
      for (const variant of [
        'multi-gf-zp-ba-mb-wg1-x1-stage4',
        'scratch-keep-pat-listg-gf-zp-ba-mb-wg32-x1-stage16',
        'multi-gf-zp-ba-wg1-x1-stage4',
      ]) {
        const { twin } = await compare(ctx, { ...batch, flags }, { variant, auditBins: true });
        expect([...twin.errors]).toEqual([0, 0]);
        // Unflagged fives: 131,071 in frame 0, 19 runs of 512 in frame 1 (run j of value 4 + j % 14).
        expect(Number(twin.audit.histogram[5])).toBe(pixels - 1 + 19 * 512);
      }
    },
    180_000,
  );

  withGpu(
    'matches whose offsets are multiples of 4 * lanes, or at most 8 (read without a barrier)',
    async (ctx) => {
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
      await decodesCrafted(ctx, 3, payload, [
        'base',
        'multi',
        'scratch-wg32-x2-stage512',
        'scratch-wg64-x1-stage1',
        'multi-wg7-x3-stage5',
        'scratch-win-wg32-x1-stage4',
        'multi-win-wg5-x2-stage1',
        'scratch-keep-pat-wg16-x2-stage16-list',
        'scratch-list-wg32-x1-stage1-cap2',
      ]);
    },
    180_000,
  );

  withGpu(
    'matches of every offset from 1 to 12, overlapping and not, from the block and from their own literals',
    async (ctx) => {
      const next = rng(11);
      const lits = (n: number) => Array.from({ length: n }, () => next() & 0xff);
      const length = (n: number) => (n < 15 ? [] : [...Array((n - 15) >> 8).fill(255), (n - 15) & 255]);
      // One LZ4 sequence: literals, then a match of `count` (>= 4) bytes `offset` back.
      const seq = (lit: number[], offset: number, count: number) => [
        (Math.min(lit.length, 15) << 4) | Math.min(count - 4, 15),
        ...length(lit.length),
        ...lit,
        offset & 0xff,
        offset >> 8,
        ...length(count - 4),
      ];
      const payload: number[] = [];
      let out = 0;
      const add = (lit: number[], offset: number, count: number) => {
        payload.push(...seq(lit, offset, count));
        out += lit.length + count;
      };
      add(lits(16), 16, 20);
      for (let o = 1; o <= 12; o++) add([], o, 4 + 3 * o + (o % 5)); // from the block: short and overlapping
      for (let o = 1; o <= 12; o++) add([], o, 130 + o); // long: several words a lane, across the period
      for (let o = 1; o <= 8; o++) add(lits(o + (o % 3)), o, 5 + 5 * o); // from the sequence's own literals
      expect(out).toBe(2244);
      const rest = 2304 - out;
      payload.push((Math.min(rest, 15) << 4) | 0, ...length(rest), ...lits(rest));
      await decodesCrafted(ctx, 5, payload, [
        'multi',
        'scratch-keep-pat-x1-stage64',
        'scratch-keep-pat-wg16-x2-stage16',
        'scratch-pat-wg16-x2-stage3',
        'multi-keep-pat-wg7-x3-stage5',
        'scratch-keep-pat-win-wg32-x1-stage1',
        'scratch-keep-pat-u4-x1-stage64',
        'scratch-keep-pat-wg16-x2-stage16-list',
        'multi-list-wg7-x3-stage5-cap7',
        'scratch-keep-pat-listg-gf-zp-zt-wg32-x1-stage16',
        'multi-list-gf-zp-zt-wg7-x3-stage5-cap7',
      ]);
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
      keep: false,
      pattern: false,
      unshuffleWords: false,
      epochs: 8,
      workgroups: 9,
      list: false,
      listCap: 256,
      listRead: 'stage',
      parseWords: 1,
      framesPerDispatch: undefined,
      frameGroups: false,
      planeSkip: false,
      bitAudit: false,
      zeroTrack: false,
      midBins: false,
      wordStores: false,
      quadStores: false,
    });
    expect(parseDecodeVariant('scratch-keep-pat-listg-gf-wg16-x2-stage16')).toMatchObject({
      frameGroups: true,
      groups: 2,
      list: true,
    });
    expect(parseDecodeVariant('scratch-list-cap40')).toMatchObject({
      list: true,
      listCap: 40,
      shader: 'multi',
    });
    expect(() => parseDecodeVariant('scratch-cap40')).toThrow(/needs 'list'/);
    expect(() => parseDecodeVariant('list-win')).toThrow(/does not combine/);
    expect(parseDecodeVariant('scratch-keep-pat-u4-x1-stage64').unshuffleWords).toBe(true);
    expect(parseDecodeVariant('scratch-keep-pat-listg-gf-zp-wg32-x1-stage16').planeSkip).toBe(true);
    expect(() => parseDecodeVariant('scratch-keep-pat-zp-wg32-x1')).toThrow(/'zp' needs 'gf'/);
    expect(() => parseDecodeVariant('scratch-gf-zp-u4-x1')).toThrow(/'zp' needs 'gf'/);
    expect(() => parseDecodeVariant('scratch-gf-zp-wg4-x9')).toThrow(/'zp' needs 'gf'/);
    expect(parseDecodeVariant('scratch-keep-pat-listg-gf-zp-ba-wg32-x1-stage16').bitAudit).toBe(true);
    expect(() => parseDecodeVariant('scratch-keep-pat-listg-gf-ba-wg32-x1-stage16')).toThrow(
      /'ba' needs 'zp'/,
    );
    expect(parseDecodeVariant('scratch-keep-pat-listg-gf-zp-zt-ba-wg32-x1-stage16').zeroTrack).toBe(true);
    expect(() => parseDecodeVariant('scratch-keep-pat-listg-gf-zt-wg32-x1-stage16')).toThrow(
      /'zt' needs 'zp'/,
    );
    expect(parseDecodeVariant('scratch-keep-pat-listg-gf-zp-ba-mb-wg32-x1-stage16').midBins).toBe(true);
    expect(() => parseDecodeVariant('scratch-keep-pat-listg-gf-zp-mb-wg32-x1-stage16')).toThrow(
      /'mb' needs 'ba'/,
    );
    expect(parseDecodeVariant('scratch-keep-pat-listg-gf-zp-ba-qx-wg32-x1-stage16').quadStores).toBe(true);
    for (const name of [
      'scratch-keep-pat-listg-gf-zp-qx-wg32-x1-stage16',
      'scratch-keep-pat-gf-zp-ba-qx-wg32-x1-stage16',
      'scratch-keep-pat-listx-gf-zp-ba-qx-wg32-x1-stage16',
      'multi-list-gf-zp-ba-qx-wg7-x3-stage5-cap3',
      'scratch-keep-pat-listg-gf-zp-ba-sw-qx-wg32-x1-stage16',
    ]) {
      expect(() => parseDecodeVariant(name), name).toThrow(/'qx' needs 'ba', a list/);
    }
    // The output form: 16 bytes a store for values of 2 or 4 bytes in frames of a multiple of 4 words, unless `sw`.
    const load = parseDecodeVariant('scratch-keep-pat-listg-gf-zp-ba-wg32-x1-stage16');
    expect(decodeOutput(load, 2, 18432)).toBe('vec4');
    expect(decodeOutput(load, 4, 1024)).toBe('vec4');
    expect(decodeOutput(load, 2, 578)).toBe('words');
    expect(decodeOutput(load, 1, 256)).toBe('words');
    expect(
      decodeOutput(parseDecodeVariant('scratch-keep-pat-listg-gf-zp-ba-sw-wg32-x1-stage16'), 2, 18432),
    ).toBe('words');
    expect(decodeOutput(parseDecodeVariant('base'), 2, 18432)).toBe('words');
    expect(parseDecodeVariant('wg128').shader).toBe('fused');
    expect(() => parseDecodeVariant('wg0')).toThrow(/positive integer/);
    expect(() => parseDecodeVariant('fast')).toThrow(/Unknown decode variant part/);
    expect(() => createBslz4DecodePass(ctx.device, { elemSize: 2, variant: 'multi-stage99999999' })).toThrow(
      /workgroup memory/,
    );
  });
});
