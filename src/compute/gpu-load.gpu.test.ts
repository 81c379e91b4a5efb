import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { isStemflowError } from '../errors';
import { createResidentPool } from '../gpu/resident-pool';
import { createStagingPool } from '../gpu/staging-pool';
import { trackBuffers, withGpu } from '../gpu/test-harness';
import { fixture, loadOracle } from '../testing/fixtures';
import { loadToGpu } from './gpu-load';
import { expectResidentFrames, fixtureOpeners, residentValues } from './gpu-load.test-support';
import { readBuffer } from './readback';

const oracle = loadOracle();
const arina = oracle.acquisitions.arina;
const { open, openFixture } = fixtureOpeners();

describe('GPU load (decode + audit + detector-major transpose), vs the h5py oracle and the CPU path', () => {
  const forms = [
    ['slots', 'packed', 64],
    ['full', 'packed', 64],
    // The decoded slot as byte planes (many batches of them: gpu-load-batches.gpu.test.ts).
    ['slots', 'planes', 64],
    ['full', 'planes', 64],
    // The default: byte planes.
    ['slots', undefined, 64],
  ] as const;
  for (const [highPlane, decoded, batchFrames] of forms)
    withGpu(
      `loads the ARINA fixture exactly across batches, slots and resident buffers (high plane: ${highPlane}, decoded slot ${decoded}, batches of ${batchFrames})`,
      async (ctx) => {
        const source = await open([arina.master, ...arina.shards].map(fixture));
        const stages = new Set<string>();
        const load = await loadToGpu(ctx, source, {
          batchFrames,
          slots: 2,
          pixelsPerBufferLimit: 1000,
          highPlane,
          decoded,
          onProgress: (p) => stages.add(p.stage),
        });
        try {
          expect(load.plan.batches).toBe(Math.ceil(60 / batchFrames));
          expect(load.plan.decodedPlanes).toBe(decoded !== 'packed');
          expect(load.plan.resident.rowBuffers).toBe(10);
          expect(load.plan.resident.high).toBe(highPlane);
          // The low plane, the high plane (rows or pools), the hot bitmap, and the slot table of 'slots'.
          expect(load.plan.resident.bufferBytes.length).toBe(highPlane === 'slots' ? 22 : 21);
          expect(Array.from(load.frameTotals, Number)).toEqual(arina.unflagged.frame_sums);
          expect(load.audit.maxValue).toBe(arina.unflagged.max);
          expect(Number(load.audit.countAbove255)).toBe(arina.unflagged.count_gt_255);
          expect(Number(load.audit.histogram.reduce((a, b) => a + b, 0n))).toBe(
            60 * (96 * 96 - arina.pixel_mask.flagged),
          );
          const frames = new Uint16Array((await source.readFrames(0, 60)).buffer);
          const value = await residentValues(ctx.device, load);
          const dp = new Float64Array(96 * 96);
          for (let s = 0; s < 60; s++) for (let p = 0; p < 96 * 96; p++) dp[p] += frames[s * 9216 + p];
          expect(Array.from(load.dpSums, Number)).toEqual(Array.from(dp));
          for (let s = 0; s < 60; s++)
            for (let p = 0; p < 9216; p++)
              if (value(p, s) !== frames[s * 9216 + p]) expect.unreachable(`pixel ${p} frame ${s}`);
          expect(stages.has('decode') && stages.has('finish')).toBe(true);
        } finally {
          load.release();
        }
      },
    );

  withGpu('a resident pool: the next load reuses the buffers, byte for byte as fresh ones', async (ctx) => {
    const source = await open([arina.master, ...arina.shards].map(fixture));
    const pool = createResidentPool();
    const staging = createStagingPool();
    const tracked = trackBuffers(ctx.device);
    const stagingMade = () => tracked.createdLabels().filter((l) => l.startsWith('staging ')).length;
    try {
      // Byte for byte: a full high plane (a slotted one numbers its slots in no fixed order).
      const options = {
        batchFrames: 64,
        slots: 2,
        pixelsPerBufferLimit: 1000,
        pool,
        staging,
        highPlane: 'full' as const,
      };
      const first = await loadToGpu(ctx, source, options);
      // The chunk staging ring (slots + 1) goes back to its pool, mapped.
      expect(stagingMade()).toBe(3);
      expect(staging.bytes).toBe(3 * first.plan.compressedSlotBytes);
      const layout = first.plan.resident;
      // 60 frames in rows of 64: each row ends in pad values, which a reused buffer must hold as 0 too; so
      // must the high plane's words of cold segments (never written) and the hot bitmap (only ORed).
      expect(layout.framesPadded).toBe(64);
      const read = (l: typeof first) =>
        Promise.all(l.resident.map((b, i) => readBuffer(ctx.device, b, 0, layout.bufferBytes[i])));
      const fresh = await read(first);
      const buffers = [...first.resident];
      first.release();
      expect(pool.bytes).toBe(layout.totalBytes);
      for (const b of buffers) ctx.device.queue.writeBuffer(b, 0, new Uint8Array(b.size).fill(0xff));
      const second = await loadToGpu(ctx, source, options);
      expect(second.resident).toEqual(buffers);
      expect(stagingMade()).toBe(3); // the ring came from the pool
      expect(pool.bytes).toBe(0);
      const again = await read(second);
      for (const [i, bytes] of again.entries()) expect(Buffer.compare(bytes, fresh[i])).toBe(0);
      expect(Array.from(second.frameTotals, Number)).toEqual(arina.unflagged.frame_sums);
      second.release();
      // Larger rows: the pooled row buffers do not fit and are destroyed before new ones are made; the hot
      // bitmap (the same size) is taken again.
      const third = await loadToGpu(ctx, source, { ...options, pixelsPerBufferLimit: 5000 });
      expect(third.resident.filter((b) => buffers.includes(b))).toEqual([buffers[buffers.length - 1]]);
      expect(Array.from(third.frameTotals, Number)).toEqual(arina.unflagged.frame_sums);
      third.release();
      third.release(); // twice: given to the pool once
      expect(pool.bytes).toBe(third.plan.resident.totalBytes);
      pool.clear();
      expect(pool.bytes).toBe(0);
      // One slot: a ring of two from the pool's three; the third is freed, nothing is made.
      const oneSlot = await loadToGpu(ctx, source, { ...options, slots: 1 });
      expect(stagingMade()).toBe(3);
      expect(staging.bytes).toBe(2 * oneSlot.plan.compressedSlotBytes);
      expect(Array.from(oneSlot.frameTotals, Number)).toEqual(arina.unflagged.frame_sums);
      oneSlot.release();
      pool.clear();
      staging.clear();
      // Each load made its decode scratch (default variant) and freed it.
      expect(tracked.createdLabels().filter((l) => l === 'bslz4-decode scratch').length).toBe(4);
      expect(tracked.alive()).toBe(0);
    } finally {
      tracked.stop();
      pool.clear();
    }
  });

  withGpu(
    'the histogram counted in the decode (default) and in the transpose: the same bins, the source values counted',
    async (ctx) => {
      const source = await open([arina.master, ...arina.shards].map(fixture));
      const frames = new Uint16Array((await source.readFrames(0, source.frameCount)).buffer);
      const mask = source.pixelMask!;
      const pixels = mask.length;
      const expected = new Array<bigint>(257).fill(0n);
      frames.forEach((v, i) => {
        if (mask[i % pixels] === 0) expected[Math.min(v, 256)]++;
      });
      // Values 1..3 (counted without atomics in the decode), larger ones, and 6 above 255.
      expect(expected.slice(1, 4).every((c) => c > 0n) && expected.slice(4, 256).some((c) => c > 0n)).toBe(
        true,
      );
      expect(expected[256]).toBe(BigInt(arina.unflagged.count_gt_255));
      for (const histogramIn of [undefined, 'transpose'] as const) {
        const load = await loadToGpu(ctx, source, { batchFrames: 64, slots: 2, histogramIn });
        try {
          expect(load.audit.maxValue).toBe(arina.unflagged.max);
          expect(Array.from(load.audit.histogram)).toEqual(expected);
        } finally {
          load.release();
        }
      }
    },
  );

  withGpu('192x192 frames (9 blocks each) match the CPU decode', async (ctx) => {
    const source = await openFixture('latest_fixed_u16_192.h5');
    const load = await loadToGpu(ctx, source, { batchFrames: 64, slots: 2 });
    try {
      await expectResidentFrames(ctx.device, load, source, 20, 7);
      const d = oracle.files['latest_fixed_u16_192.h5'].datasets['/data'];
      expect(Array.from(load.frameTotals, Number)).toEqual(d.frame_sums);
    } finally {
      load.release();
    }
  });

  withGpu(
    'an odd 33x35 detector: padded frame rows, the 16-byte transpose, every value exact',
    async (ctx) => {
      const source = await openFixture('odd_u16_33x35.h5');
      // Packed: 1,155 values = 578 words, padded to 580: 16-byte rows, so the transpose runs main_vec4. Byte planes
      // (the default): two planes of 292 words (1,155 bytes in 16-byte rows) and the span mark's 4.
      for (const [decoded, words] of [
        ['packed', 580],
        [undefined, 588],
      ] as const) {
        const load = await loadToGpu(ctx, source, {
          batchFrames: 64,
          slots: 2,
          pixelsPerBufferLimit: 100,
          decoded,
        });
        try {
          expect(load.plan.wordsPerFrame).toBe(words);
          const d = oracle.files['odd_u16_33x35.h5'].datasets['/data'];
          expect(Array.from(load.frameTotals, Number)).toEqual(d.frame_sums);
          await expectResidentFrames(ctx.device, load, source, load.plan.frames);
        } finally {
          load.release();
        }
      }
    },
  );

  withGpu('uint8 and uint32 sources load exactly', async (ctx) => {
    for (const name of ['many_v1_u8_32.h5', 'many_fixed_u32_32.h5']) {
      const source = await openFixture(name);
      const load = await loadToGpu(ctx, source, { batchFrames: 256, slots: 2 });
      try {
        const d = oracle.files[name].datasets['/data'];
        expect(Array.from(load.frameTotals, Number)).toEqual(d.frame_sums);
        expect(load.audit.maxValue).toBe(d.max);
        expect(Number(load.audit.countAbove255)).toBe(d.count_gt_255);
        // Rows in tiles of one batch (no hot segments to align to): several tiles, the last one short.
        expect(load.plan.resident.tileFrames).toBe(256);
        expect(load.plan.resident.framesPadded).toBeGreaterThan(256);
        await expectResidentFrames(ctx.device, load, source, load.plan.frames, 3);
      } finally {
        load.release();
      }
    }
  });

  withGpu(
    'a chunk that lies is a typed error naming its file and frame; nothing stays allocated',
    async (ctx) => {
      const dir = mkdtempSync(join(tmpdir(), 'gpu-fault-'));
      for (const name of [arina.master, ...arina.shards]) copyFileSync(fixture(name), join(dir, name));
      const shard = arina.shards[1];
      const [, offset] = oracle.files[shard].datasets['/entry/data/data'].chunk_info![5];
      const bytes = readFileSync(join(dir, shard));
      bytes.writeUInt32BE(0x7fffffff, offset + 12); // first block's compressed length runs past the chunk
      writeFileSync(join(dir, shard), bytes);
      const source = await open([arina.master, ...arina.shards].map((n) => join(dir, n)));
      const live = trackBuffers(ctx.device);
      const e = await loadToGpu(ctx, source, { batchFrames: 64 }).catch((x) => x);
      live.stop();
      expect(live.created()).toBeGreaterThan(10);
      expect(live.createdLabels()).toContain('bslz4-decode scratch');
      expect(live.alive()).toBe(0);
      expect(isStemflowError(e, 'corrupt')).toBe(true);
      expect(e.frame).toBe(24 + 5);
      expect(e.file).toBe(shard);
      expect(e.message).toMatch(/ends before one of its blocks/);
    },
  );

  withGpu('refuses a load over the budget before allocating anything', async (ctx) => {
    const source = await open([arina.master, ...arina.shards].map(fixture));
    const e = await loadToGpu(ctx, source, { budgetBytes: 1 << 20 }).catch((x) => x);
    expect(isStemflowError(e, 'budget')).toBe(true);
    expect(e.message).toMatch(/GPU memory at peak/);
  });
});

describe('a GPU device lost in the middle of a load', () => {
  withGpu('ends the load with a device error, frees the load, and a new device loads again', async () => {
    const { acquireDevice } = await import('../gpu/device');
    const { nodeGpu } = await import('../gpu/node-gpu');
    const source = await openFixture('many_ext_u16_32.h5');
    const ctx = await acquireDevice(nodeGpu());
    let lostAt = -1;
    const e = await loadToGpu(ctx, source, {
      batchFrames: 64,
      onProgress: (p) => {
        if (p.stage === 'decode' && lostAt < 0) {
          lostAt = p.framesDone;
          ctx.device.destroy(); // as a driver reset or an unplugged GPU would
        }
      },
    }).catch((x) => x);
    expect(lostAt).toBe(64);
    expect(isStemflowError(e, 'device')).toBe(true);
    expect(e.message).toMatch(/The GPU device was lost/);
    const fresh = await acquireDevice(nodeGpu());
    const load = await loadToGpu(fresh, source, { batchFrames: 64 });
    expect(Array.from(load.frameTotals, Number)).toEqual(
      oracle.files['many_ext_u16_32.h5'].datasets['/data'].frame_sums,
    );
    load.release();
    fresh.destroy();
  });
});
