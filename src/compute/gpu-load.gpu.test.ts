import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect } from 'vitest';
import { isStemflowError } from '../errors';
import { residentParts } from '../gpu/resident-layout';
import { createResidentPool } from '../gpu/resident-pool';
import { createStagingPool } from '../gpu/staging-pool';
import { trackBuffers, withGpu } from '../gpu/test-harness';
import { residentValueAt } from '../kernels/detector-transpose';
import { viewAs } from '../source/acquisition-source';
import { openAcquisition } from '../source/hdf5-acquisition';
import type { InputFile } from '../source/input-file';
import { nodeInput } from '../source/node-input';
import { fixture, loadOracle } from '../testing/fixtures';
import { loadToGpu } from './gpu-load';
import { readBuffer } from './readback';

const oracle = loadOracle();
const arina = oracle.acquisitions.arina;
let opened: InputFile[] = [];
afterEach(async () => {
  await Promise.all(opened.map((i) => i.close?.()));
  opened = [];
});

async function open(paths: string[]) {
  const inputs = await Promise.all(paths.map(nodeInput));
  opened.push(...inputs);
  return openAcquisition(inputs);
}

/** A fixture's '/data' dataset as an acquisition (its file closed after the test). */
async function openFixture(name: string) {
  const inputs = await Promise.all([fixture(name)].map(nodeInput));
  opened.push(...inputs);
  return openAcquisition(inputs, { dataset: '/data' });
}

/** Requires every `step`-th pixel of the first `count` frames in the resident layout to be the source's value. */
async function expectResidentFrames(
  device: GPUDevice,
  load: Awaited<ReturnType<typeof loadToGpu>>,
  source: Awaited<ReturnType<typeof openAcquisition>>,
  count: number,
  step = 1,
) {
  const pixels = load.plan.pixels;
  const frames = viewAs(await source.readFrames(0, count), source.summary.dtype);
  const value = await residentValues(device, load);
  for (let s = 0; s < count; s++)
    for (let p = 0; p < pixels; p += step)
      if (value(p, s) !== frames[s * pixels + p]) expect.unreachable(`pixel ${p} frame ${s}`);
}

/** Value of frame s at pixel p in a resident layout read back from the GPU. */
async function residentValues(device: GPUDevice, load: Awaited<ReturnType<typeof loadToGpu>>) {
  const layout = load.plan.resident;
  const buffers = await Promise.all(
    load.resident.map((b, i) => readBuffer(device, b, 0, layout.bufferBytes[i])),
  );
  const words = buffers.map((b) => new Uint32Array(b.buffer, b.byteOffset, b.byteLength / 4));
  if (layout.form === 'planes')
    expect(Array.from(residentParts(layout, words).hot!)).toEqual(Array.from(load.hotBitmap!));
  return (p: number, s: number) => residentValueAt(layout, words, p, s);
}

describe('GPU load (decode + audit + detector-major transpose), vs the h5py oracle and the CPU path', () => {
  for (const highPlane of ['slots', 'full'] as const)
    withGpu(
      `loads the ARINA fixture exactly across batches, slots and resident buffers (high plane: ${highPlane})`,
      async (ctx) => {
        const source = await open([arina.master, ...arina.shards].map(fixture));
        const stages = new Set<string>();
        const load = await loadToGpu(ctx, source, {
          batchFrames: 64,
          slots: 2,
          pixelsPerBufferLimit: 1000,
          highPlane,
          onProgress: (p) => stages.add(p.stage),
        });
        try {
          expect(load.plan.batches).toBe(1);
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

  withGpu('streams 16 batches through 2 slots (uint16, extensible-array index) exactly', async (ctx) => {
    const source = await openFixture('many_ext_u16_32.h5');
    const load = await loadToGpu(ctx, source, { batchFrames: 64, slots: 2, pixelsPerBufferLimit: 300 });
    try {
      expect(load.plan.batches).toBe(16);
      const d = oracle.files['many_ext_u16_32.h5'].datasets['/data'];
      expect(Array.from(load.frameTotals, Number)).toEqual(d.frame_sums);
      await expectResidentFrames(ctx.device, load, source, 1000);
    } finally {
      load.release();
    }
  });

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

  withGpu(
    'an odd 33x35 detector: padded frame rows, the 16-byte transpose, every value exact',
    async (ctx) => {
      const source = await openFixture('odd_u16_33x35.h5');
      const load = await loadToGpu(ctx, source, { batchFrames: 64, slots: 2, pixelsPerBufferLimit: 100 });
      try {
        // 1,155 values = 578 words, padded to 580: 16-byte rows, so the transpose runs main_vec4.
        expect(load.plan.wordsPerFrame).toBe(580);
        const d = oracle.files['odd_u16_33x35.h5'].datasets['/data'];
        expect(Array.from(load.frameTotals, Number)).toEqual(d.frame_sums);
        await expectResidentFrames(ctx.device, load, source, load.plan.frames);
      } finally {
        load.release();
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

function popcount(v: number): number {
  let n = 0;
  for (let x = v >>> 0; x; x &= x - 1) n++;
  return n;
}
