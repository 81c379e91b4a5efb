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
import { annulus, disk, regionMask } from '../products/detector-geometry';
import { buildPackedIndex, indexGeometry } from './packed-index';
import { buildSeriesIndex, type SeriesIndex } from './packed-index-gpu';
import { loadSeries } from './series';
import { reference, seriesArchive } from './series.test-support';
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
        const cpu = buildPackedIndex(counts, indexGeometry(acq.records, pixels, 1024));
        expect(await readBack(ix.widths, Uint32Array, cpu.widths.byteLength)).toEqual(cpu.widths);
        expect(await readBack(ix.bases, Uint32Array, cpu.bases.byteLength)).toEqual(cpu.bases);
        for (const [i, words] of cpu.data.entries()) {
          const all = await readBack(ix.data[ix.chunkBuffer[i]], Uint32Array);
          expect(all.subarray(ix.chunkBase[i], ix.chunkBase[i] + words.length)).toEqual(words);
        }
        // Smaller than raw: the counts take a few bits each.
        expect((built as SeriesIndex).dataBytes).toBeLessThan(counts.length);
        (built as SeriesIndex).destroy();
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
      const [rows, cols] = archive.acquisitions[0].info.detector;
      const circle = (cx: number, cy: number, r: number) => regionMask(disk(cx, cy, r), rows, cols);
      const ring = (cx: number, cy: number, r0: number, r1: number) =>
        regionMask(annulus(cx, cy, r0, r1), rows, cols);
      const tracked = trackBuffers(device);
      const series = await loadSeries(device, archive, {
        budgetBytes: 1 << 30,
        index: { budgetBytes: 1 << 30 },
      });
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
            expect(r.images[i]).toEqual(await reference(archive.acquisitions[a], mask));
          return r;
        };
        const bf = circle(cols / 2, rows / 2, rows / 6);
        const first = await check(bf);
        expect(first.modes).toEqual(['full', 'full', 'full']);
        expect(first.images[1][5] - first.images[0][5]).toBeGreaterThan(50000);
        const nudged = circle(cols / 2 + 1, rows / 2, rows / 6);
        const n = await check(nudged);
        expect(n.modes).toEqual(['delta', 'delta', 'delta']);
        // Pixels read per frame: the delta's, far fewer than the disk's.
        expect(n.decodedPixels[0]).toBeLessThan(first.decodedPixels[0] / 4);
        await check(ring(cols / 2, rows / 2, rows / 5, rows / 2.5), [2, 0]);
        await check(ring(cols / 2, rows / 2, rows / 5, rows / 2), [2, 0], 'delta');
        await check(new Uint8Array(rows * cols).fill(1), [1, 2, 0]);
        await check(new Uint8Array(rows * cols));
        await check(nudged, [0, 1, 2], 'full');
        const before = await series.virtualImages(circle(cols / 2 + 2, rows / 2 - 1, rows / 6));
        const rebased = await series.rebase();
        expect(rebased.modes).toEqual(['full', 'full', 'full']);
        expect(rebased.images).toEqual(before.images);
      } finally {
        await series.release();
      }
      expect(tracked.alive()).toBe(0);
      // Sized after its first phase, one byte short: refused, and what the first phase made is freed.
      const pixels = archive.acquisitions[0].geometry.pixels;
      const scratchBytes = 1024 * pixels * 4;
      const short = await loadSeries(device, archive, {
        budgetBytes: 1 << 30,
        index: { budgetBytes: (series.index?.bytes ?? 0) + scratchBytes - 1, scratchBytes },
      });
      expect(short.index?.built).toBe(false);
      expect(short.index?.lines[0]).toMatch(/the index needs [\d.]+ MiB \(packed counts [\d.]+ MiB/);
      await short.release();
      expect(tracked.alive()).toBe(0);
      // Over its budget: not built, with the numbers; the series answers from the lanes, exact.
      const small = await loadSeries(device, archive, { budgetBytes: 1 << 30, index: { budgetBytes: 4096 } });
      try {
        expect(small.index?.built).toBe(false);
        expect(small.index?.lines[0]).toMatch(
          /exact index not built: the index needs [\d.]+ MiB .* its budget is 0.0 MiB/,
        );
        const bf = circle(cols / 2, rows / 2, rows / 6);
        const r = await small.virtualImages(bf);
        expect(r.images[2]).toEqual(await reference(archive.acquisitions[2], bf));
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
