/**
 * The series index's query pass (packed-query.wgsl) against its CPU twin, and a device lost while the index is
 * built; split from packed-index.gpu.test.ts.
 */
import { describe, expect } from 'vitest';
import { prng } from '../bench/synthetic';
import { isStemflowError } from '../errors';
import { withGpu } from '../gpu/test-harness';
import { chooseIndexList } from './index-lists';
import { buildPackedIndex, indexGeometry, listEntry, packedQuery } from './packed-index';
import { buildSeriesIndex } from './packed-index-build';
import {
  encodeIndexQuery,
  type IndexedAcquisition,
  type IndexLaunch,
  indexImages,
  planIndexDispatch,
  queryPipelines,
  readIndexImage,
  type SeriesIndex,
} from './packed-index-gpu';
import { seriesArchive } from './series.test-support';
import { createSeriesBuffers } from './series-load';
import { planSeries } from './series-plan';

describe('a device lost while the series index is built', () => {
  withGpu('ends the build with a typed device error', async () => {
    const { acquireDevice } = await import('../gpu/device');
    const { nodeGpu } = await import('../gpu/node-gpu');
    const archive = await seriesArchive();
    const ctx = await acquireDevice(nodeGpu());
    const plan = planSeries(archive, [0, 1, 2], ctx.device.limits, 1 << 30);
    const pixels = archive.acquisitions[0].geometry.pixels;
    const buffers = await createSeriesBuffers(ctx.device, archive, plan, pixels, 2, {});
    ctx.device.destroy(); // as a driver reset would, between the load and the build
    const e = await buildSeriesIndex(ctx.device, archive, plan, buffers, { budgetBytes: 1 << 30 }).catch(
      (x) => x,
    );
    expect(isStemflowError(e, 'device') && e.message).toMatch(/did not finish building the series index/);
    buffers.destroyAll();
    await archive.close();
  });
});

describe('packed-query.wgsl against its CPU twin', () => {
  withGpu(
    'same sums on 32-bit counts (widths up to 32), images of 2^32 and more read from the resident image',
    async ({ device, upload, createBuffer }) => {
      const [rows, cols] = [6, 7];
      const pixels = rows * cols;
      const frames = 1100;
      const g = indexGeometry([{ firstFrame: 0, frames }], [rows, cols], 1024, 32);
      expect(g.tiles).toEqual([]);
      const rand = prng(11);
      const counts = Uint32Array.from({ length: frames * pixels }, (_, i) => {
        const r = rand();
        // Frame 5 holds counts near 2^32 in every pixel: its sums need the high word.
        if (Math.floor(i / pixels) === 5) return 0xffffff00 + (i % 200);
        return r < 0.5 ? 0 : r < 0.98 ? Math.floor(rand() * 20) : Math.floor(rand() * 0xffffffff);
      });
      const cpu = buildPackedIndex(counts, g);
      const data = new Uint32Array(cpu.totals.reduce((a, b) => a + b, 0));
      const chunkBase: number[] = [];
      let at = 0;
      for (const words of cpu.data) {
        chunkBase.push(at);
        data.set(words, at);
        at += words.length;
      }
      const ix: IndexedAcquisition = {
        geometry: g,
        blocks: upload(cpu.blocks),
        bases: upload(cpu.bases),
        data: [upload(data.length ? data : new Uint32Array(1))],
        chunkBuffer: g.chunks.map(() => 0),
        chunkBase,
        image: createBuffer({ size: frames * 8, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC }),
        out: createBuffer({
          size: frames * 4 + 4,
          usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
        }),
      };
      const acquisitions = new Map([[0, ix]]);
      const chunkTable = createBuffer({
        size: 4096,
        usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST,
      });
      const index = {
        acquisitions,
        list: createBuffer({ size: pixels * 4, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST }),
        chunkTable,
        // Dispatches of at most 512 invocations: the 1,100 frames (padded to 1,152, whole blocks) run as three,
        // with three parameter slots.
        dispatch: planIndexDispatch(
          device,
          acquisitions,
          chunkTable,
          (_label, size, usage) => createBuffer({ size, usage }),
          512,
        ),
        pipelineFor: queryPipelines(device),
      } as unknown as SeriesIndex;
      expect(index.dispatch.groups.get(0)?.[0].parts.map((p) => [p.threadFirst, p.threadCount])).toEqual([
        [0, 512],
        [512, 512],
        [1024, 128],
      ]);
      const staging = createBuffer({
        size: frames * 4 + 16,
        usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
      });
      let launch: IndexLaunch = { workgroup: 64 };
      const query = async (list: Uint32Array, mode: 'full' | 'delta') => {
        const encoder = device.createCommandEncoder();
        encodeIndexQuery(device, encoder, index, [0], [list], [mode], staging, [0], launch);
        device.queue.submit([encoder.finish()]);
        await staging.mapAsync(GPUMapMode.READ);
        const words = new Uint32Array(staging.getMappedRange().slice(0));
        staging.unmap();
        return { low: indexImages(words, [frames], [0])[0], image: await readIndexImage(device, ix) };
      };
      const twin = (list: Uint32Array) => {
        const a = new Float64Array(frames);
        const b = new Float64Array(frames);
        g.chunks.forEach((c, i) => {
          packedQuery(cpu.data[i], 0, cpu.blocks, cpu.bases, c, list, a, b, c.first);
        });
        return { a, b };
      };
      // A list's image: A - B.
      const signed = (list: Uint32Array) => {
        const { a, b } = twin(list);
        return a.map((v, f) => v - b[f]);
      };
      const flagged = new Uint8Array(pixels);
      // Each launch shape: workgroups of 64 to 256; 1,100 frames end in a partial group and a partial workgroup.
      for (launch of [{ workgroup: 64 }, { workgroup: 128 }, { workgroup: 256 }]) {
        const maskA = Uint8Array.from({ length: pixels }, (_, p) => (p % 3 === 0 ? 1 : 0));
        const full = chooseIndexList(maskA, null, flagged, 'full', g);
        const first = await query(full.list, 'full');
        const expected = signed(full.list);
        expect(first.image).toEqual(expected);
        expect(expected[5]).toBeGreaterThan(2 ** 32);
        // A value of 2^32 or more: the low words are not enough, so the readback says so.
        expect(first.low).toBeNull();
        // A delta on the resident image: added pixels in A, removed in B.
        const maskB = Uint8Array.from({ length: pixels }, (_, p) => (p % 3 === 1 || p === 0 ? 1 : 0));
        const delta = chooseIndexList(maskB, maskA, flagged, 'delta', g);
        const { a, b } = twin(delta.list);
        const second = await query(delta.list, 'delta');
        expect(second.image).toEqual(expected.map((v, f) => v + a[f] - b[f]));
        expect(second.image).toEqual(signed(chooseIndexList(maskB, null, flagged, 'full', g).list));
        // One pixel without the big frame's values fits 32 bits: the low words are the image.
        const one = new Uint8Array(pixels);
        one[4] = 1;
        const counts4 = Float64Array.from({ length: frames }, (_, f) =>
          f === 5 ? 0 : counts[f * pixels + 4],
        );
        const small = await query(chooseIndexList(one, null, flagged, 'full', g).list, 'full');
        expect(small.image[5]).toBe(counts[5 * pixels + 4]);
        expect(small.image.filter((_, f) => f !== 5)).toEqual(counts4.filter((_, f) => f !== 5));
        // Every value fits 32 bits: the low words are the image, as a Uint32Array (no conversion).
        expect(small.low).toBeInstanceOf(Uint32Array);
        expect(Float64Array.from(small.low as Uint32Array)).toEqual(small.image);
        // A full mask is A - B as well (a tile added whole less the pixels the mask leaves out of it).
        const minus = Uint32Array.of(listEntry(4, 1), listEntry(6, 1), listEntry(6, 2));
        const signedFull = await query(minus, 'full');
        expect(signedFull.image).toEqual(signed(minus));
        expect(signedFull.image).toEqual(small.image);
      }
      const bad = (() => {
        try {
          return index.pipelineFor({ workgroup: 96 });
        } catch (e) {
          return e;
        }
      })();
      expect(isStemflowError(bad, 'invalid') && bad.message).toMatch(/workgroup of 96/);
      // A list whose B entries do not all follow its A entries is refused (the query sums the two ranges apart).
      const mixed = (() => {
        try {
          return encodeIndexQuery(
            device,
            device.createCommandEncoder(),
            index,
            [0],
            [Uint32Array.of(listEntry(1, 2), listEntry(2, 1))],
            ['delta'],
            staging,
            [0],
          );
        } catch (e) {
          return e;
        }
      })();
      expect(isStemflowError(mixed, 'invalid') && mixed.message).toMatch(/A entries first/);
    },
  );
});
