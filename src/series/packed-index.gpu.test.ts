import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { convertArchive } from '../archive/convert';
import { nodeArchiveFiles, nodeArchiveTarget, nodeSha256 } from '../archive/node-folder';
import { openArchive } from '../archive/reader';
import { generateSynthetic } from '../bench/synthetic';
import { syntheticSource, writeChunkFile } from '../bench/synthetic-source';
import { isStemflowError } from '../errors';
import { trackBuffers, withGpu } from '../gpu/test-harness';
import { buildPackedIndex, indexGeometry } from './packed-index';
import { buildSeriesIndex, estimateIndexBytes, planIndex } from './packed-index-build';
import type { SeriesIndex } from './packed-index-gpu';
import { fitSeries, loadSeries } from './series';
import { detectorMasks, reference, seriesArchive } from './series.test-support';
import { createSeriesBuffers } from './series-load';
import { planSeries } from './series-plan';

/** A 48 x 48 scan of 32 x 32 frames in one record of 2,304 frames: index chunks of 1,024, 1,024 and 256. */
async function syntheticArchive() {
  const acq = generateSynthetic({ scan: [48, 48], detector: 32, distinct: 96, seed: 7 });
  const dir = mkdtempSync(join(tmpdir(), 'stemflow-index-'));
  const path = join(dir, 'chunks.bslz4');
  const source = await syntheticSource(acq, path, await writeChunkFile(acq, path));
  await convertArchive(
    [{ name: 'synthetic', source, sources: [] }],
    await nodeArchiveTarget(join(dir, 'a')),
    {
      hash: nodeSha256,
      codec: { recordFrames: 2304, lanesPerFrame: 4, classes: 8, blockFrames: 8 },
    },
  );
  await source.close?.();
  return openArchive(nodeArchiveFiles(join(dir, 'a')), { hash: nodeSha256 });
}

describe('series index on the GPU', () => {
  withGpu(
    'is built word for word as its CPU twin builds it, chunk by chunk',
    async ({ device, readBack }) => {
      const archive = await syntheticArchive();
      const acq = archive.acquisitions[0];
      const pixels = acq.geometry.pixels;
      const plan = planSeries(archive, [0], device.limits, 1 << 30);
      const buffers = await createSeriesBuffers(device, archive, plan, pixels, 2, {});
      try {
        // Scratch for 1,024 frames: three chunks in the one record.
        const built = await buildSeriesIndex(device, archive, plan, buffers, {
          budgetBytes: 1 << 30,
          scratchBytes: 1024 * pixels * 4,
        });
        expect('refused' in built).toBe(false);
        const ix = (built as SeriesIndex).acquisitions.get(0);
        if (!ix) throw new Error('no index');
        expect(ix.geometry.chunks.map((c) => c.frames)).toEqual([1024, 1024, 256]);
        const counts = Uint32Array.from(await acq.readFrames(0, 2304));
        const cpu = buildPackedIndex(counts, indexGeometry(acq.records, acq.info.detector, 1024, 16));
        expect(await readBack(ix.blocks, Uint32Array, cpu.blocks.byteLength)).toEqual(cpu.blocks);
        expect(await readBack(ix.bases, Uint32Array, cpu.bases.byteLength)).toEqual(cpu.bases);
        for (const [i, words] of cpu.data.entries()) {
          const all = await readBack(ix.data[ix.chunkBuffer[i]], Uint32Array);
          expect(all.subarray(ix.chunkBase[i], ix.chunkBase[i] + words.length)).toEqual(words);
        }
        // Smaller than raw: the counts take a few bits each.
        expect((built as SeriesIndex).dataBytes).toBeLessThan(counts.length);
        (built as SeriesIndex).destroy();
        // Aborted while building: a typed error, and every buffer the build made is freed.
        const tracked = trackBuffers(device);
        const controller = new AbortController();
        controller.abort();
        const aborted = await buildSeriesIndex(device, archive, plan, buffers, {
          budgetBytes: 1 << 30,
          scratchBytes: 1024 * pixels * 4,
          signal: controller.signal,
        }).catch((x) => x);
        expect(isStemflowError(aborted, 'aborted')).toBe(true);
        expect(tracked.alive()).toBe(0);
        tracked.stop();
        // A lane that lies (its stop bit cleared) fails the build, typed.
        const rec = acq.records[0];
        device.queue.writeBuffer(buffers.data[0], (rec.offsets[5] - 1) * 4, new Uint32Array(1));
        const e = await buildSeriesIndex(device, archive, plan, buffers, {
          budgetBytes: 1 << 30,
          scratchBytes: 1024 * pixels * 4,
        }).catch((x) => x);
        expect(isStemflowError(e, 'corrupt') && e.message).toMatch(/1 lane\(s\) .* could not be decoded/);
      } finally {
        buffers.destroyAll();
        await archive.close();
      }
    },
  );

  withGpu(
    'answers full masks, deltas, subsets and rebase exactly; refused when over its budget',
    async ({ device }) => {
      const archive = await seriesArchive();
      const { rows, cols, circle, ring } = detectorMasks(archive);
      const tracked = trackBuffers(device);
      const steps: [number, number][] = [];
      const series = await loadSeries(device, archive, {
        budgetBytes: 1 << 30,
        index: { budgetBytes: 1 << 30, onProgress: (done, total) => steps.push([done, total]) },
      });
      // Every chunk sized, then packed, reported as the GPU finishes it, the last one last.
      const chunks = archive.acquisitions.reduce((n, a) => n + a.records.length, 0);
      expect(steps.length).toBe(2 * chunks);
      expect(steps.at(-1)).toEqual([2 * chunks, 2 * chunks]);
      try {
        expect(series.index?.built).toBe(true);
        expect(series.index?.lines[0]).toMatch(/exact index: packed counts .* bits a count/);
        const check = async (
          mask: Uint8Array,
          order = [0, 1, 2],
          mode: 'auto' | 'full' | 'delta' = 'auto',
        ) => {
          const r = await series.virtualImages(mask, { order, mode });
          for (const [i, a] of order.entries())
            expect(Float64Array.from(r.images[i])).toEqual(await reference(archive.acquisitions[a], mask));
          return r;
        };
        const bf = circle(cols / 2, rows / 2, rows / 6);
        const first = await check(bf);
        expect(first.modes).toEqual(['full', 'full', 'full']);
        expect(first.images[1][5] - first.images[0][5]).toBeGreaterThan(50000);
        const nudged = circle(cols / 2 + 1, rows / 2, rows / 6);
        const n = await check(nudged);
        expect(n.modes).toEqual(['delta', 'delta', 'delta']);
        // Entries read per frame: the delta's, fewer than the disk's (whole tiles and its edge pixels).
        expect(n.decodedPixels[0]).toBeLessThan(first.decodedPixels[0]);
        // More entries than the kernel's list tile (256), and not a multiple of its 4 entries a step.
        const wide = await check(ring(cols / 2, rows / 2, rows / 5, rows / 2.5), [2, 0], 'full');
        expect(wide.decodedPixels[0]).toBeGreaterThan(256);
        expect(wide.decodedPixels.some((n) => n % 4 !== 0)).toBe(true);
        await check(ring(cols / 2, rows / 2, rows / 5, rows / 2), [2, 0], 'delta');
        await check(new Uint8Array(rows * cols).fill(1), [1, 2, 0]);
        await check(new Uint8Array(rows * cols));
        await check(nudged, [0, 1, 2], 'full');
        // Workgroups of 64 (the default is 256: records of 16 frames, each padded to a block, so a workgroup
        // spans 4 chunks), then a delta on it with 128.
        const r8 = await series.virtualImages(bf, {
          mode: 'full',
          indexLaunch: { workgroup: 64 },
        });
        const r2 = await series.virtualImages(nudged, {
          mode: 'delta',
          indexLaunch: { workgroup: 128 },
        });
        for (const a of [0, 1, 2]) {
          expect(Float64Array.from(r8.images[a])).toEqual(await reference(archive.acquisitions[a], bf));
          expect(Float64Array.from(r2.images[a])).toEqual(await reference(archive.acquisitions[a], nudged));
        }
        // The caller's arrays filled (an interactive caller passes back images it no longer shows).
        const frames = archive.acquisitions.map((a) => a.info.scan[0] * a.info.scan[1]);
        const into = [2, 0].map((a) => new Uint32Array(frames[a]).fill(7));
        const filled = await series.virtualImages(bf, { order: [2, 0], into });
        expect(filled.images[0]).toBe(into[0]);
        expect(filled.images[1]).toBe(into[1]);
        expect(Float64Array.from(into[0])).toEqual(await reference(archive.acquisitions[2], bf));
        expect(Float64Array.from(into[1])).toEqual(await reference(archive.acquisitions[0], bf));
        // Two views of one buffer that overlap share memory: refused (views that do not overlap are fine).
        const shared = new Uint32Array(frames[2] + frames[0]);
        const views = [shared.subarray(0, frames[2]), shared.subarray(frames[2])];
        const inViews = await series.virtualImages(bf, { order: [2, 0], into: views });
        expect(inViews.images[1]).toBe(views[1]);
        expect(Float64Array.from(views[1])).toEqual(await reference(archive.acquisitions[0], bf));
        const overlap = [shared.subarray(0, frames[2]), shared.subarray(1, frames[0] + 1)];
        for (const bad of [[into[0]], [into[0], into[0]], [into[0], new Uint32Array(3)], overlap]) {
          const e = await series.virtualImages(bf, { order: [2, 0], into: bad }).catch((x) => x);
          expect(isStemflowError(e, 'invalid') && e.message).toMatch(/distinct Uint32Arrays/);
        }
        const before = await series.virtualImages(circle(cols / 2 + 2, rows / 2 - 1, rows / 6));
        const rebased = await series.rebase();
        expect(rebased.modes).toEqual(['full', 'full', 'full']);
        expect(rebased.images).toEqual(before.images);
      } finally {
        await series.release();
      }
      expect(tracked.alive()).toBe(0);
      // Sized after its first phase, one byte short: refused, and what the first phase made is freed.
      const { virtualPixels } = indexGeometry([], archive.acquisitions[0].info.detector, 1024, 16);
      const scratchBytes = 1024 * virtualPixels * 4;
      const short = await loadSeries(device, archive, {
        budgetBytes: 1 << 30,
        index: { budgetBytes: (series.index?.bytes ?? 0) + scratchBytes - 1, scratchBytes },
      });
      expect(short.index?.built).toBe(false);
      expect(short.index?.lines[0]).toMatch(/the index needs [\d.]+ MiB \(packed counts [\d.]+ MiB/);
      await short.release();
      expect(tracked.alive()).toBe(0);
      // Choosing how many to load with their index: the longest prefix that fits with the extra bytes, or without
      // them when not even one does.
      const limits = device.limits;
      const two = planSeries(archive, [0, 1], limits, 2 ** 40).totalBytes;
      const per = 1 << 20;
      expect(
        fitSeries(archive, [0, 1, 2], limits, two + 2 * per, undefined, (a) => a.length * per).acquisitions,
      ).toEqual([0, 1]);
      expect(fitSeries(archive, [0, 1, 2], limits, two, undefined, () => 2 ** 40).acquisitions).toEqual([
        0, 1,
      ]);
      // The estimate: at least the exact metadata, build and query scratch.
      const sized = planIndex(archive, [0, 1, 2], limits);
      if ('refused' in sized) throw new Error(sized.refused);
      const estimate = estimateIndexBytes(archive, [0, 1, 2], limits);
      expect(estimate).toBeGreaterThan(sized.metadataBytes + sized.scratchBytes + sized.queryScratch);
      expect(estimate).toBeLessThan(Number.POSITIVE_INFINITY);
      // Over its budget: not built, with the numbers; the series answers from the lanes, exact.
      const small = await loadSeries(device, archive, { budgetBytes: 1 << 30, index: { budgetBytes: 4096 } });
      try {
        expect(small.index?.built).toBe(false);
        expect(small.index?.lines[0]).toMatch(
          /exact index not built: the index needs [\d.]+ MiB .* its budget is 0.0 MiB/,
        );
        const bf = circle(cols / 2, rows / 2, rows / 6);
        const r = await small.virtualImages(bf);
        expect(Float64Array.from(r.images[2])).toEqual(await reference(archive.acquisitions[2], bf));
      } finally {
        await small.release();
      }
      expect(tracked.alive()).toBe(0);
      tracked.stop();
      await archive.close();
    },
    240_000,
  );
});
