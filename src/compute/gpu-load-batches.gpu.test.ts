/**
 * The GPU load over many batches (gpu-load.ts): batches streamed through fewer slots, rows in tiles of a batch,
 * slot pools that grow while batches are in flight, and the copy of batch k + 2 after batch k's decode; every value
 * against the h5py oracle and the source.
 */
import { describe, expect } from 'vitest';
import { isStemflowError } from '../errors';
import { DEFAULT_LOAD_DECODE_VARIANT } from '../gpu/passes/bslz4-decode-variants';
import { trackBuffers, withGpu } from '../gpu/test-harness';
import { loadOracle } from '../testing/fixtures';
import { loadToGpu } from './gpu-load';
import { expectResidentFrames, fixtureOpeners, residentValues } from './gpu-load.test-support';
import { readBuffer } from './readback';

const oracle = loadOracle();
const { openFixture } = fixtureOpeners();

describe('GPU load over many batches, vs the h5py oracle', () => {
  // With `qx` too: the load's decode variant with its stores exchanged within quads.
  const qx = 'scratch-keep-pat-listg-gf-zp-ba-mb-qx-wg32-x1-stage16';
  for (const [decoded, decodeVariant] of [
    ['packed', undefined],
    ['planes', undefined],
    ['packed', qx],
    ['planes', qx],
  ] as const)
    withGpu(
      `streams 16 batches through 2 slots (uint16, extensible-array index, decoded slot ${decoded}${decodeVariant ? ', qx' : ''}) exactly`,
      async (ctx) => {
        const source = await openFixture('many_ext_u16_32.h5');
        const load = await loadToGpu(ctx, source, {
          batchFrames: 64,
          slots: 2,
          pixelsPerBufferLimit: 300,
          decoded,
          decodeVariant,
        });
        try {
          expect(load.plan.batches).toBe(16);
          // Byte planes: the slot's high planes zeroed by each batch's transpose for the next batch's decode.
          expect(load.plan.decodedPlanes).toBe(decoded === 'planes');
          expect(load.plan.decodeVariant).toBe(decodeVariant ?? DEFAULT_LOAD_DECODE_VARIANT);
          const d = oracle.files['many_ext_u16_32.h5'].datasets['/data'];
          expect(Array.from(load.frameTotals, Number)).toEqual(d.frame_sums);
          await expectResidentFrames(ctx.device, load, source, 1000);
        } finally {
          load.release();
        }
      },
    );

  withGpu(
    'copying ahead (batch k + 2 copied after batch k decodes): the same results as the default, every value exact',
    async (ctx) => {
      const source = await openFixture('many_ext_u16_32.h5');
      const d = oracle.files['many_ext_u16_32.h5'].datasets['/data'];
      // Full high plane: the resident buffers compare byte for byte. One slot (a ring of 2 staging buffers)
      // and three, and pools that grow while batches are in flight.
      const base = { batchFrames: 64, pixelsPerBufferLimit: 300 };
      const reference = await loadToGpu(ctx, source, { ...base, slots: 2, highPlane: 'full' });
      try {
        expect(reference.plan.parseAhead).toBe(true);
        expect(reference.plan.copyAhead).toBe(false);
        const want = await Promise.all(
          reference.resident.map((b, i) =>
            readBuffer(ctx.device, b, 0, reference.plan.resident.bufferBytes[i]),
          ),
        );
        for (const slots of [1, 3]) {
          const load = await loadToGpu(ctx, source, { ...base, slots, highPlane: 'full', copyAhead: true });
          try {
            expect(load.plan.copyAhead).toBe(true);
            expect(load.plan.indexSets).toBe(3);
            expect(load.plan.batches).toBe(16);
            const got = await Promise.all(
              load.resident.map((b, i) => readBuffer(ctx.device, b, 0, load.plan.resident.bufferBytes[i])),
            );
            for (const [i, bytes] of got.entries()) expect(Buffer.compare(bytes, want[i])).toBe(0);
            expect(Array.from(load.frameTotals, Number)).toEqual(d.frame_sums);
            expect(load.audit).toEqual(reference.audit);
            expect(Array.from(load.dpSums)).toEqual(Array.from(reference.dpSums));
          } finally {
            load.release();
          }
        }
      } finally {
        reference.release();
      }
      const grown = await loadToGpu(ctx, source, {
        ...base,
        slots: 2,
        segmentFrames: 128,
        poolShare: 1e-6,
        copyAhead: true,
      });
      try {
        expect(grown.plan.copyAhead).toBe(true);
        expect(grown.timings.poolGrowths).toBeGreaterThan(0);
        expect(Array.from(grown.frameTotals, Number)).toEqual(d.frame_sums);
        await expectResidentFrames(ctx.device, grown, source, grown.plan.frames);
      } finally {
        grown.release();
      }
    },
  );

  withGpu('rows in tiles of a batch hold the values of untiled rows (full high plane)', async (ctx) => {
    const source = await openFixture('many_ext_u16_32.h5');
    const options = {
      batchFrames: 64,
      slots: 2,
      pixelsPerBufferLimit: 300,
      segmentFrames: 128,
      highPlane: 'full' as const,
    };
    const tiled = await loadToGpu(ctx, source, options);
    try {
      // lcm(batch 64, segment 128) positions a tile; 4 row buffers, the last of 124 rows.
      expect(tiled.plan.resident.tileFrames).toBe(128);
      expect(tiled.plan.resident.rowBuffers).toBe(4);
      await expectResidentFrames(ctx.device, tiled, source, tiled.plan.frames);
      const untiled = await loadToGpu(ctx, source, { ...options, rowTiles: 'untiled' });
      try {
        expect(untiled.plan.resident.tileWords).toBe(untiled.plan.resident.wordsPerPixel);
        const [a, b] = [await residentValues(ctx.device, tiled), await residentValues(ctx.device, untiled)];
        for (let p = 0; p < tiled.plan.pixels; p++)
          for (let s = 0; s < tiled.plan.frames; s++)
            if (a(p, s) !== b(p, s)) expect.unreachable(`pixel ${p} frame ${s}`);
        expect(Array.from(untiled.hotBitmap!)).toEqual(Array.from(tiled.hotBitmap!));
      } finally {
        untiled.release();
      }
    } finally {
      tiled.release();
    }
  });

  withGpu('slot pools that fill up grow while batches are in flight; every value exact', async (ctx) => {
    const source = await openFixture('many_ext_u16_32.h5');
    const tracked = trackBuffers(ctx.device);
    // Pools of one slot, segments of 128 frames split over batches of 64, 2 slots in flight.
    const options = {
      batchFrames: 64,
      slots: 2,
      pixelsPerBufferLimit: 300,
      segmentFrames: 128,
      poolShare: 1e-6,
    };
    const load = await loadToGpu(ctx, source, options);
    try {
      expect(load.plan.resident.high).toBe('slots');
      expect(load.timings.poolGrowths).toBeGreaterThan(0);
      const hot = load.hotBitmap!.reduce((n, w) => n + popcount(w), 0);
      expect(load.plan.resident.hotSlots.reduce((a, b) => a + b)).toBeGreaterThanOrEqual(hot);
      const d = oracle.files['many_ext_u16_32.h5'].datasets['/data'];
      expect(Array.from(load.frameTotals, Number)).toEqual(d.frame_sums);
      await expectResidentFrames(ctx.device, load, source, 1000);
    } finally {
      load.release();
    }
    // A budget that holds the first pools but not their growth: a typed error with the numbers, nothing kept.
    const before = tracked.alive();
    let error: unknown;
    try {
      await loadToGpu(ctx, source, { ...options, budgetBytes: load.plan.peakBytes });
    } catch (e) {
      error = e;
    }
    expect(isStemflowError(error, 'budget')).toBe(true);
    expect(String(error)).toMatch(/counts above 255 than its high-byte slot pools held/);
    expect(tracked.alive()).toBe(before);
    tracked.stop();
  });
});

function popcount(v: number): number {
  let n = 0;
  for (let x = v >>> 0; x; x &= x - 1) n++;
  return n;
}
