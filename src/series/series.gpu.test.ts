import { describe, expect } from 'vitest';
import { isStemflowError } from '../errors';
import { trackBuffers, withGpu } from '../gpu/test-harness';
import { fitSeries, loadSeries, planSeries } from './series';
import { arina, detectorMasks, reference, seriesArchive } from './series.test-support';
import { tansQuery } from './tans-query';

describe('series: exact virtual images straight from GPU-resident archives', () => {
  withGpu(
    'full masks, subsets in any order, edge motions and nudges by delta, rebase, release, admission',
    async ({ device }) => {
      const archive = await seriesArchive();
      const { rows, cols, circle, ring } = detectorMasks(archive);
      const tracked = trackBuffers(device);
      const series = await loadSeries(device, archive, { budgetBytes: 1 << 30 });
      try {
        const bf = circle(cols / 2, rows / 2, rows / 6);
        const check = async (
          mask: Uint8Array,
          order = [0, 1, 2],
          mode: 'auto' | 'full' | 'delta' = 'auto',
        ) => {
          const r = await series.virtualImages(mask, { order, mode });
          expect(r.order).toEqual(order);
          for (const [i, a] of order.entries())
            expect(r.images[i]).toEqual(await reference(archive.acquisitions[a], mask));
          return r;
        };
        const first = await check(bf);
        expect(first.modes).toEqual(['full', 'full', 'full']);
        // The planted 60000 in b (frame 5) is inside BF: b differs from a exactly there.
        expect(first.images[1][5] - first.images[0][5]).toBeGreaterThan(50000);
        // A small nudge by delta (added and removed pixels), exact.
        const nudged = circle(cols / 2 + 1, rows / 2, rows / 6);
        const n = await check(nudged, [0, 1, 2], 'delta');
        expect(n.modes).toEqual(['delta', 'delta', 'delta']);
        // 'auto' decodes whichever ends its lanes earlier: one added pixel (delta), or a small mask far from
        // the last one (full).
        const grown = circle(cols / 2 + 1, rows / 2, rows / 6);
        grown[(Math.floor(rows / 2 + rows / 6) + 1) * cols + cols / 2] = 1;
        expect((await check(grown)).modes).toEqual(['delta', 'delta', 'delta']);
        expect((await check(circle(cols / 2, 4, 3))).modes).toEqual(['full', 'full', 'full']);
        // A large edge motion on an annulus, a subset in another order, by delta.
        await check(ring(cols / 2, rows / 2, rows / 5, rows / 2.5), [2, 0]);
        await check(ring(cols / 2, rows / 2, rows / 5, rows / 2), [2, 0], 'delta');
        // The whole detector and an empty mask.
        await check(new Uint8Array(rows * cols).fill(1));
        await check(new Uint8Array(rows * cols));
        // Rebase recomputes from scratch and gives identical images.
        await check(nudged);
        const before = await series.virtualImages(circle(cols / 2 + 2, rows / 2 - 1, rows / 6));
        const rebased = await series.rebase();
        expect(rebased.modes).toEqual(['full', 'full', 'full']);
        expect(rebased.images).toEqual(before.images);
        // The CPU twin of the pass gives the same sums on the same mask bits.
        const acq = archive.acquisitions[1];
        const rec = acq.records[0];
        const bits = new Uint8Array(rows * cols);
        for (let p = 0; p < bits.length; p++)
          if (!acq.pixelMask?.[p]) bits[p] = (bf[p] ? 1 : 0) | (nudged[p] ? 2 : 0);
        const a = new Float64Array(rec.frames);
        const b = new Float64Array(rec.frames);
        expect(
          tansQuery(
            await acq.readRecordData(0),
            rec.offsets,
            rec.frames,
            acq.geometry,
            rec.tables,
            bits,
            a,
            b,
            0,
          ),
        ).toBe(0);
        expect(a).toEqual((await reference(acq, bf)).subarray(0, rec.frames));
        expect(b).toEqual((await reference(acq, nudged)).subarray(0, rec.frames));
        // Frames and summed patterns per acquisition.
        const frames = await series.frames(1, 2, [1, 0]);
        expect(frames[0]).toEqual(await archive.acquisitions[1].readFrames(arina.scan[1] + 2, 1));
        expect(series.sumPatterns([0])[0].length).toBe(rows * cols);
        // Released while queries are in flight (the panel opening another archive): the calls made before
        // it finish exact, a call after it fails at once, and the buffers go once the queries have settled.
        const inFlight = series.virtualImages(bf, { mode: 'full' });
        const queued = series.virtualImages(nudged);
        const freed = series.release();
        const late = await series.virtualImages(bf).catch((e) => e);
        expect(isStemflowError(late, 'invalid') && late.message).toMatch(/released/);
        expect((await inFlight).images[0]).toEqual(await reference(archive.acquisitions[0], bf));
        expect((await queued).images[2]).toEqual(await reference(archive.acquisitions[2], nudged));
        await freed;
      } finally {
        await series.release();
      }
      expect(tracked.alive()).toBe(0);
      tracked.stop();
      const error = await series.virtualImages(new Uint8Array(rows * cols)).catch((e) => e);
      expect(isStemflowError(error) && error.message).toMatch(/released/);
      // Admission: refused before any allocation, with the numbers.
      const refused = await loadSeries(device, archive, { budgetBytes: 1000 }).catch((e) => e);
      expect(isStemflowError(refused) && refused.kind).toBe('budget');
      expect(refused.message).toMatch(/needs [\d.]+ MiB on the GPU .* the budget is 0.0 MiB/);
      // A series that does not fit: the longest prefix that does (here 2 of 3), or the refusal for one.
      const two = planSeries(archive, [0, 1], device.limits, 2 ** 40).totalBytes;
      const fitted = fitSeries(archive, [0, 1, 2], device.limits, two);
      expect(fitted.acquisitions).toEqual([0, 1]);
      expect(fitted.plan.totalBytes).toBe(two);
      expect(fitSeries(archive, [2, 0], device.limits, 2 ** 40).acquisitions).toEqual([2, 0]);
      const none = (() => {
        try {
          return fitSeries(archive, [0, 1, 2], device.limits, 1000);
        } catch (e) {
          return e;
        }
      })();
      expect(isStemflowError(none, 'budget')).toBe(true);
      // Index tables are per data buffer: a binding limit that the decoder tables of 3 records exceed (while
      // the data would fit) opens a new buffer, and no buffer's tables pass the limit.
      const acq0 = archive.acquisitions[0];
      const cellsBytes = acq0.info.classes * 9 * (1 << acq0.info.tableLog) * 4;
      const limit = 2 * cellsBytes + 4;
      const tight = planSeries(
        archive,
        [0, 1, 2],
        { maxStorageBufferBindingSize: limit, maxBufferSize: 2 ** 40 },
        2 ** 40,
      );
      const records = archive.acquisitions.reduce((n, a) => n + a.records.length, 0);
      expect(tight.dataBuffers).toBe(Math.ceil(records / 2));
      for (const b of tight.bufferIndex) expect(b.cells * 4).toBeLessThanOrEqual(limit);
      // Records spread over several data buffers (one dispatch and one sums buffer each): same images.
      const biggest = Math.max(...archive.acquisitions.flatMap((a) => a.records.map((r) => r.dataWords * 4)));
      // One staging buffer: every record waits for the one before to reach the GPU.
      const spread = await loadSeries(device, archive, {
        budgetBytes: 1 << 30,
        maxBufferBytes: 2 * biggest,
        loadStagingSlots: 1,
        // Another launch shape: 128 invocations a workgroup, dispatches of 2^14 lanes (several per group).
        queryWorkgroupSize: 128,
        lanesPerDispatch: 2 ** 14,
      });
      try {
        expect(spread.plan.dataBuffers).toBeGreaterThan(3);
        for (const [mask, order] of [
          [circle(cols / 2, rows / 2, rows / 6), [0, 1, 2]],
          [circle(cols / 2 + 1, rows / 2, rows / 6), [2, 0]],
          [ring(cols / 2, rows / 2, rows / 5, rows / 2.5), [1]],
          [circle(cols / 2, 4, 3), [0, 2, 1]],
        ] as const) {
          const r = await spread.virtualImages(mask, { order: [...order] });
          for (const [i, a] of order.entries())
            expect(r.images[i]).toEqual(await reference(archive.acquisitions[a], mask));
        }
        const odd = await loadSeries(device, archive, { budgetBytes: 1 << 30, queryWorkgroupSize: 48 }).catch(
          (e) => e,
        );
        expect(isStemflowError(odd, 'invalid') && odd.message).toMatch(/workgroup of 48/);
        const none = await loadSeries(device, archive, { budgetBytes: 1 << 30, loadStagingSlots: 0 }).catch(
          (e) => e,
        );
        expect(isStemflowError(none, 'invalid') && none.message).toMatch(/0 load staging buffers/);
        const twice = await spread.virtualImages(circle(8, 8, 4), { order: [0, 0] }).catch((e) => e);
        expect(isStemflowError(twice) && twice.message).toMatch(/twice/);
      } finally {
        await spread.release();
      }
      await archive.close();
    },
    240_000,
  );
});

describe('a series load cancelled in the middle', () => {
  withGpu(
    'ends with an aborted error once its reads have ended, and frees every buffer',
    async ({ device }) => {
      const archive = await seriesArchive();
      const tracked = trackBuffers(device);
      const controller = new AbortController();
      const e = await loadSeries(device, archive, {
        budgetBytes: 1 << 30,
        signal: controller.signal,
        loadStagingSlots: 2,
        onProgress: (done) => {
          if (done === 2) controller.abort();
        },
      }).catch((x) => x);
      expect(isStemflowError(e, 'aborted')).toBe(true);
      expect(tracked.alive()).toBe(0);
      tracked.stop();
      // The device is still good: the same series loads and answers.
      const series = await loadSeries(device, archive, { budgetBytes: 1 << 30 });
      expect(series.plan.acquisitions).toEqual([0, 1, 2]);
      await series.release();
      await archive.close();
    },
  );
});

describe('a GPU device lost while a series loads', () => {
  withGpu('ends the load with a typed device error and frees its buffers', async () => {
    const { acquireDevice } = await import('../gpu/device');
    const { nodeGpu } = await import('../gpu/node-gpu');
    const archive = await seriesArchive();
    const ctx = await acquireDevice(nodeGpu());
    let lostAt = -1;
    const e = await loadSeries(ctx.device, archive, {
      budgetBytes: 1 << 30,
      onProgress: (done) => {
        if (lostAt < 0) {
          lostAt = done;
          ctx.device.destroy(); // as a driver reset would
        }
      },
    }).catch((x) => x);
    expect(lostAt).toBe(1);
    expect(isStemflowError(e, 'device')).toBe(true);
    expect(e.message).toMatch(/the device was lost/);
    await archive.close();
  });
});
