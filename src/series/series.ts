/**
 * A series: acquisitions of an archive kept encoded on the GPU and queried without a decoded 4D tensor.
 *
 * - Admission: the encoded records, their tables and the query scratch are counted before anything is
 *   allocated; a series that does not fit the budget or the adapter's limits is refused with the numbers
 *   (load a subset instead).
 * - Queries (all exact integers): the virtual image of a binary detector mask for every loaded acquisition
 *   or a subset in a chosen order (flagged pixels of each acquisition are always left out); the diffraction
 *   frames at one scan position; the summed diffraction pattern of each acquisition (stored in the archive).
 * - Live masks: a query after a previous one decodes, per acquisition, whichever is cheaper: the new mask
 *   from scratch, or only the pixels it adds and removes (delta, exact); `rebase` recomputes from scratch.
 * - Calls are serialised; results are the caller's copies; after `release` every call fails clearly.
 */
import type { Archive } from '../archive/reader';
import type { Values } from '../archive/tans-stats';
import { StemflowError } from '../errors';
import { checkBindable } from '../gpu/chunked-dispatch';
import type { GpuTimer } from '../gpu/gpu-timer';
import { createIndexReadback, type IndexReadback, queryIndex } from './index-readback';
import { buildSeriesIndex } from './packed-index-build';
import { type IndexLaunch, indexLists, type SeriesIndex } from './packed-index-gpu';
import { combineImages } from './series-host';
import { createSeriesBuffers } from './series-load';
import { queryLaunch, queryPipelines } from './series-pipeline';
import { fitSeries, LOAD_STAGING_SLOTS, planSeries, RECORD_WORDS, type SeriesPlan } from './series-plan';
import {
  encodeQueryBits,
  encodeQueryGroups,
  encodeReadbackCopies,
  mapQueryReadback,
  queryGroups,
  sameMask,
  seriesSlots,
} from './series-query';
import type { ExactImage, Series, SeriesImages, SeriesIndexState } from './series-types';

export type { ExactImage, Series, SeriesImages, SeriesIndexState } from './series-types';
export { fitSeries, planSeries, type SeriesPlan };

/** Whether any two of the arrays share memory (the same array twice, or overlapping views of one buffer). */
function overlapping(arrays: ArrayBufferView[]): boolean {
  return arrays.some((a, i) =>
    arrays.some(
      (b, j) =>
        j > i &&
        a.buffer === b.buffer &&
        a.byteOffset < b.byteOffset + b.byteLength &&
        b.byteOffset < a.byteOffset + a.byteLength,
    ),
  );
}

/** Loads acquisitions of an opened archive onto the GPU (encoded). */
export async function loadSeries(
  device: GPUDevice,
  archive: Archive,
  options: {
    acquisitions?: number[];
    budgetBytes: number;
    /** Largest data buffer to place records in (default and cap: the adapter's binding limit). */
    maxBufferBytes?: number;
    /** Staging buffers of one record each between the files and the GPU while loading (default 4). */
    loadStagingSlots?: number;
    /** Query invocations per workgroup (a power of two, 32..256; default 64). */
    queryWorkgroupSize?: number;
    /** Lane invocations per query dispatch (a power of two, 2^14..2^22; default 2^18). */
    lanesPerDispatch?: number;
    /**
     * Build the exact index (src/series/packed-index.ts) after loading, within this many more bytes (default:
     * what the series leaves of `budgetBytes`); queries
     * then read the index. An index that does not fit is not built (`Series.index.refused` says why) and the
     * series answers from the encoded lanes.
     */
    index?: {
      budgetBytes?: number;
      scratchBytes?: number;
      /** Chunk steps of the build the GPU has finished, of `total`. */
      onProgress?: (done: number, total: number) => void;
    };
    signal?: AbortSignal;
    onProgress?: (done: number, total: number) => void;
  },
): Promise<Series> {
  const chosen = options.acquisitions ?? archive.acquisitions.map((_, i) => i);
  if (chosen.length === 0) throw new StemflowError('invalid', 'No acquisitions to load.');
  const first = archive.acquisitions[chosen[0]];
  for (const a of chosen) {
    const acq = archive.acquisitions[a];
    if (!acq) throw new StemflowError('invalid', `The archive has no acquisition ${a}.`);
    if (
      acq.geometry.pixels !== first.geometry.pixels ||
      acq.info.detector.join() !== first.info.detector.join()
    ) {
      throw new StemflowError(
        'mismatch',
        `${acq.info.name} has a ${acq.info.detector.join('x')} detector; ${first.info.name} ${first.info.detector.join('x')}. A series shares one detector.`,
      );
    }
  }
  const { workgroupSize, lanesPerDispatch } = queryLaunch(device, options);
  const stagingSlots = options.loadStagingSlots ?? LOAD_STAGING_SLOTS;
  if (!Number.isInteger(stagingSlots) || stagingSlots < 1 || stagingSlots > 16)
    throw new StemflowError('invalid', `${stagingSlots} load staging buffers: give 1 to 16.`);
  const plan = planSeries(
    archive,
    chosen,
    device.limits,
    options.budgetBytes,
    options.maxBufferBytes,
    stagingSlots,
  );
  const pixels = first.geometry.pixels;
  const buffers = await createSeriesBuffers(device, archive, plan, pixels, stagingSlots, options);
  const { bits, need, sums, recordTable, staging } = buffers;
  let index: SeriesIndex | null = null;
  let indexState: SeriesIndexState | null = null;
  // The index query's readback buffers (made at its first query).
  let readback: IndexReadback | null = null;
  const destroyAll = () => {
    readback?.destroy();
    index?.destroy();
    buffers.destroyAll();
  };
  const data = buffers.data;

  const pipelineFor = queryPipelines(device, workgroupSize);
  for (const b of data) checkBindable(device, b, 'series data');
  if (options.index) {
    try {
      const built = await buildSeriesIndex(device, archive, plan, buffers, {
        // By default, what the series leaves of its budget.
        budgetBytes: options.index.budgetBytes ?? options.budgetBytes - plan.totalBytes,
        scratchBytes: options.index.scratchBytes,
        signal: options.signal,
        onProgress: options.index.onProgress,
      });
      if ('refused' in built)
        indexState = { built: false, lines: [`exact index not built: ${built.refused}`] };
      else {
        index = built;
        indexState = {
          built: true,
          lines: built.lines,
          bytes: built.dataBytes + built.metadataBytes + built.scratchBytes,
          dataBytes: built.dataBytes,
          metadataBytes: built.metadataBytes,
          buildMs: built.buildMs,
        };
      }
    } catch (e) {
      destroyAll();
      throw e;
    }
  }

  // Where each loaded acquisition's bits, needs and frames live.
  const slot = seriesSlots(archive, chosen, pixels);

  let released = false;
  let chain: Promise<unknown> = Promise.resolve();
  // Calls accepted before `release` run to their end; calls after it fail at once.
  const serial = <T>(fn: () => Promise<T>): Promise<T> => {
    if (released)
      return Promise.reject(new StemflowError('invalid', 'This series was released; load it again.'));
    const next = chain.then(fn);
    chain = next.catch(() => {});
    return next;
  };
  // The last mask and each acquisition's image for it (for deltas).
  let lastMask: Uint8Array | null = null;
  let lastOrder: number[] = [];
  const lastImages = new Map<number, Float64Array>();
  // Acquisitions whose image (the host's copy for the lanes, the resident one for the index) is the last mask's.
  const fresh = new Set<number>();

  // The query from the encoded lanes (tans-query.wgsl): mask bits and needs, dispatches, readback copies.
  const encodeFromLanes = (
    mask: Uint8Array,
    order: number[],
    mode: 'auto' | 'full' | 'delta',
    encoder: GPUCommandEncoder,
    timer?: GpuTimer,
  ) => {
    const { bitsAll, needAll, modes, decodedPixels } = encodeQueryBits(
      archive,
      plan,
      slot,
      mask,
      order,
      mode,
      lastMask,
      lastImages,
    );
    device.queue.writeBuffer(bits, 0, bitsAll);
    device.queue.writeBuffer(need, 0, needAll);
    const { groups, table, used, entries } = queryGroups(archive, plan, slot, order, needAll, pipelineFor);
    device.queue.writeBuffer(recordTable, 0, table, 0, Math.max(4, entries * RECORD_WORDS));
    for (const b of used) encoder.clearBuffer(sums[b]);
    timer?.mark(encoder, 'query');
    const params = encodeQueryGroups(device, encoder, groups, buffers, {
      workgroupSize,
      lanesPerDispatch,
    });
    timer?.mark(encoder, 'copy');
    const { stagingOffsets, stagingBytes } = encodeReadbackCopies(
      encoder,
      archive,
      plan,
      order,
      modes,
      used,
      sums,
      staging,
    );
    return { modes, decodedPixels, stagingOffsets, stagingBytes, params };
  };

  const run = async (
    mask: Uint8Array,
    order: number[],
    mode: 'auto' | 'full' | 'delta',
    timer?: GpuTimer,
    indexLaunch?: IndexLaunch,
    given?: Uint32Array[],
  ): Promise<SeriesImages> => {
    const t0 = performance.now();
    if (mask.length !== pixels)
      throw new StemflowError('invalid', `The mask has ${mask.length} pixels; the detector ${pixels}.`);
    for (const a of order)
      if (!slot.has(a)) throw new StemflowError('invalid', `Acquisition ${a} is not loaded in this series.`);
    if (new Set(order).size !== order.length)
      throw new StemflowError('invalid', `The order ${order.join(', ')} names an acquisition twice.`);
    if (
      given &&
      (given.length !== order.length ||
        overlapping(given) ||
        given.some((im, i) => {
          const [rows, cols] = archive.acquisitions[order[i]].info.scan;
          return !(im instanceof Uint32Array) || im.length !== rows * cols;
        }))
    )
      throw new StemflowError(
        'invalid',
        `Give ${order.length} distinct Uint32Arrays to fill (no two sharing memory), each as long as its acquisition's scan.`,
      );
    const frames = order.map(
      (a) => archive.acquisitions[a].info.scan[0] * archive.acquisitions[a].info.scan[1],
    );
    let images: ExactImage[];
    let modes: ('full' | 'delta')[];
    let decodedPixels: number[];
    let stages: SeriesImages['stages'];
    if (index) {
      // The exact index (packed-query.wgsl): per acquisition the full mask's entries or a delta's. The resident
      // image of `a` is the last mask's when `a` was asked for since that mask was set.
      let lists: Uint32Array[];
      ({ lists, modes, decodedPixels } = indexLists(index, slot, mask, order, mode, (a) =>
        mode !== 'full' && lastMask && fresh.has(a) ? lastMask : null,
      ));
      readback ??= createIndexReadback(device, index);
      const into = frames.map((n, i) => given?.[i] ?? new Uint32Array(n));
      const t1 = performance.now();
      const r = await queryIndex(device, index, readback, {
        order,
        lists,
        modes,
        into,
        timer,
        launch: indexLaunch,
      });
      images = r.images;
      stages = {
        prepareMs: t1 - t0 + r.stages.submitMs,
        gpuAndReadbackMs: r.stages.waitMs,
        combineMs: r.stages.copyMs,
      };
    } else {
      const encoder = device.createCommandEncoder({ label: 'series query' });
      const q = encodeFromLanes(mask, order, mode, encoder, timer);
      ({ modes, decodedPixels } = q);
      timer?.mark(encoder, 'end');
      device.queue.submit([encoder.finish()]);
      for (const p of q.params) p.destroy();
      const tSubmit = performance.now();
      const mapped = Math.max(16, Math.ceil(q.stagingBytes / 16) * 16);
      await mapQueryReadback(staging, mapped);
      const tMapped = performance.now();
      // The lanes' u64 sums as (lo, hi), combined with the images before (every image fits 2^53).
      try {
        const words = new Uint32Array(staging.getMappedRange(0, mapped));
        images = combineImages(
          words,
          order.map((a, i) => ({
            frames: frames[i],
            wordOffset: q.stagingOffsets[i] / 4,
            before: q.modes[i] === 'delta' ? (lastImages.get(a) as Float64Array) : null,
          })),
        );
      } finally {
        staging.unmap();
      }
      stages = {
        prepareMs: tSubmit - t0,
        gpuAndReadbackMs: tMapped - tSubmit,
        combineMs: performance.now() - tMapped,
      };
    }
    const done = images;
    // Deltas build on these images; acquisitions not asked for keep an image of an older mask: drop them.
    if (!lastMask || !sameMask(lastMask, mask)) {
      for (const a of [...fresh]) {
        if (order.includes(a)) continue;
        fresh.delete(a);
        lastImages.delete(a);
      }
    }
    lastMask = mask.slice();
    lastOrder = order.slice();
    for (const [i, a] of order.entries()) {
      fresh.add(a);
      // The lanes build deltas on the host's copy; the index on its resident image.
      if (!index) lastImages.set(a, done[i] as Float64Array);
    }
    const out = index ? done : done.map((im) => im.slice());
    return { order, images: out, modes, decodedPixels, ms: performance.now() - t0, stages };
  };

  return {
    plan,
    index: indexState,
    acquisitions: chosen.map((a) => archive.acquisitions[a]),
    virtualImages: (mask, o = {}) =>
      serial(() =>
        run(mask.slice(), o.order ?? chosen, o.mode ?? 'auto', o.timer, o.indexLaunch, o.into?.slice()),
      ),
    rebase: () =>
      serial(() => {
        if (!lastMask) throw new StemflowError('invalid', 'No mask has been queried yet.');
        return run(lastMask, lastOrder, 'full');
      }),
    frames: (row, col, order = chosen) =>
      serial(async () => {
        const out: Values[] = [];
        for (const a of order) {
          const acq = archive.acquisitions[a];
          const [rows, cols] = acq.info.scan;
          if (
            !Number.isInteger(row) ||
            !Number.isInteger(col) ||
            row < 0 ||
            col < 0 ||
            row >= rows ||
            col >= cols
          ) {
            throw new StemflowError(
              'invalid',
              `(${row}, ${col}) is outside the ${rows}x${cols} scan of ${acq.info.name}.`,
            );
          }
          out.push(await acq.readFrames(row * cols + col, 1));
        }
        return out;
      }),
    sumPatterns: (order = chosen) => {
      if (released) throw new StemflowError('invalid', 'This series was released; load it again.');
      return order.map((a) => {
        const p = archive.acquisitions[a]?.sumPattern;
        if (!p)
          throw new StemflowError('unsupported', `The archive stores no pixel sums for acquisition ${a}.`);
        return p.slice();
      });
    },
    release() {
      if (!released) {
        released = true;
        // A query in flight keeps its buffers until its readback has settled (destroying them under its
        // mapAsync would turn a finished query into a device error).
        chain = chain.then(destroyAll);
      }
      return chain.then(() => {});
    },
  };
}
