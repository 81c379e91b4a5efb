/**
 * Builds the exact series index (src/series/packed-index.ts describes it) from a loaded series' encoded records,
 * for every chunk of every acquisition, in two phases with one wait between them:
 * 1. sizes: decode the chunk's lanes into a scratch (tans-values.wgsl), add the tile sums, find the blocks' widths
 *    and offsets and the groups' words and offsets (packed-index.wgsl `tiles_main`, `blocks_main`, `scan_main`);
 *    the chunks' totals are read back once;
 * 2. the data buffers are sized exactly from those totals and checked against the budget (an index that does not
 *    fit is refused with the numbers and the series answers from the encoded data as before), then each chunk is
 *    decoded again and packed (`pack_main`).
 * The lanes are decoded twice so that no buffer has to be sized for the worst case (16 bits a count); the
 * metadata (block tables, group offsets) is kept from the first phase. A lane that lies fails the build (typed);
 * an abort between chunks frees everything.
 */
import { DTYPE_BITS } from '../archive/lanes';
import type { Archive } from '../archive/reader';
import { StemflowError, throwIfAborted } from '../errors';
import { chunkFramesFor, type IndexGeometry, indexGeometry } from './packed-index';
import {
  CHUNK_WORDS,
  type IndexedAcquisition,
  planIndexDispatch,
  queryPipelines,
  type SeriesIndex,
} from './packed-index-gpu';
import { buildPasses } from './packed-index-passes';
import type { SeriesBuffers } from './series-load';
import type { planSeries } from './series-plan';

/** Decoded counts of one chunk (u32 each) while building: at most this many bytes (and the binding limit). */
export const INDEX_SCRATCH_BYTES = 1 << 30;

const MiB = 1024 * 1024;
const fmt = (b: number) => `${(b / MiB).toFixed(1)} MiB`;

type Plan = ReturnType<typeof planSeries>;

/** What an index of these acquisitions takes before its packed counts, known from their shapes alone. */
export interface IndexSizing {
  geometries: Map<number, IndexGeometry>;
  pixels: number;
  virtualPixels: number;
  chunkFrames: number;
  chunkCount: number;
  frames: number;
  /** Block tables and group offsets. */
  metadataBytes: number;
  /** The decoded chunk while building. */
  scratchBytes: number;
  /** Images, readback words, lists and the chunk table of the queries. */
  queryScratch: number;
}

/** Sizes an index of `acquisitions` (same detector) from their shapes, or why it cannot be bound on this GPU. */
export function planIndex(
  archive: Archive,
  acquisitions: number[],
  limits: { maxStorageBufferBindingSize: number; maxBufferSize: number },
  scratchBytes = INDEX_SCRATCH_BYTES,
): IndexSizing | { refused: string } {
  const maxBinding = Math.min(limits.maxStorageBufferBindingSize, limits.maxBufferSize);
  const first = archive.acquisitions[acquisitions[0]];
  const pixels = first.geometry.pixels;
  // No larger than the longest record needs (chunks never span records).
  const longest = Math.max(
    ...acquisitions.flatMap((a) => archive.acquisitions[a].records.map((r) => r.frames)),
  );
  const { virtualPixels } = indexGeometry([], first.info.detector, 1024, DTYPE_BITS[first.info.dtype]);
  const chunkFrames = Math.min(
    chunkFramesFor(virtualPixels, Math.min(scratchBytes, maxBinding)),
    Math.ceil(longest / 1024) * 1024,
  );
  const scratch = chunkFrames * virtualPixels * 4;
  if (scratch > maxBinding)
    return {
      refused: `the index's build scratch of ${fmt(scratch)} (${chunkFrames} frames of ${virtualPixels} values) exceeds this GPU's binding limit of ${fmt(maxBinding)}`,
    };
  const geometries = new Map<number, IndexGeometry>();
  let metadataBytes = 0;
  let chunkCount = 0;
  let frames = 0;
  for (const a of acquisitions) {
    const acq = archive.acquisitions[a];
    const g = indexGeometry(acq.records, acq.info.detector, chunkFrames, DTYPE_BITS[acq.info.dtype]);
    geometries.set(a, g);
    metadataBytes += 4 * (g.blocksWords + g.basesWords);
    chunkCount += g.chunks.length;
    frames += g.frames;
    if (g.blocksWords * 4 > maxBinding)
      return {
        refused: `the index's block table of ${acq.info.name} takes ${fmt(g.blocksWords * 4)}; this GPU binds at most ${fmt(maxBinding)}`,
      };
  }
  // Per frame an image (8 B) and its readback words (4 B); a list has at most one entry a pixel (an entry covers a
  // pixel or a tile of them).
  const queryScratch = frames * 12 + acquisitions.length * (pixels * 4 + 16) + chunkCount * CHUNK_WORDS * 4;
  return {
    geometries,
    pixels,
    virtualPixels,
    chunkFrames,
    chunkCount,
    frames,
    metadataBytes,
    scratchBytes: scratch,
    queryScratch,
  };
}

/**
 * Packed counts per byte of encoded lanes, for planning only: 2.2 on the synthetic ARINA-like scan (3.46 GiB of
 * packed counts with tiles for 1.59 GiB of lanes, docs/performance.md). The build sizes the index exactly.
 */
export const INDEX_PER_LANE_BYTE = 2.2;

/**
 * An estimate of the GPU bytes an index of `acquisitions` takes while it is built (exact metadata, scratch and
 * query scratch; packed counts estimated from the lanes), for choosing how many acquisitions to load.
 */
export function estimateIndexBytes(
  archive: Archive,
  acquisitions: number[],
  limits: { maxStorageBufferBindingSize: number; maxBufferSize: number },
): number {
  const sized = planIndex(archive, acquisitions, limits);
  if ('refused' in sized) return Number.POSITIVE_INFINITY;
  let lanes = 0;
  for (const a of acquisitions) for (const r of archive.acquisitions[a].records) lanes += r.dataWords * 4;
  return sized.metadataBytes + sized.scratchBytes + sized.queryScratch + INDEX_PER_LANE_BYTE * lanes;
}

/**
 * Builds the index of every loaded acquisition, or returns why it was not built (the budget). `budgetBytes`: what
 * the index may take on top of the series.
 */
export async function buildSeriesIndex(
  device: GPUDevice,
  archive: Archive,
  plan: Plan,
  buffers: SeriesBuffers,
  options: {
    budgetBytes: number;
    scratchBytes?: number;
    signal?: AbortSignal;
    /** Chunk steps the GPU has finished (each chunk is sized, then packed: 2 steps), of `total`. */
    onProgress?: (done: number, total: number) => void;
  },
): Promise<SeriesIndex | { refused: string }> {
  const t0 = performance.now();
  const sized = planIndex(archive, plan.acquisitions, device.limits, options.scratchBytes);
  if ('refused' in sized) return sized;
  const { geometries, metadataBytes, scratchBytes, queryScratch, chunkCount, frames, virtualPixels, pixels } =
    sized;
  const maxBinding = Math.min(device.limits.maxStorageBufferBindingSize, device.limits.maxBufferSize);
  const before = metadataBytes + scratchBytes + queryScratch;
  if (before > options.budgetBytes)
    return {
      refused: `the index needs ${fmt(before)} before its data (block tables and group offsets ${fmt(metadataBytes)}, build scratch ${fmt(scratchBytes)}, query scratch ${fmt(queryScratch)}); its budget is ${fmt(options.budgetBytes)}`,
    };

  const owned: GPUBuffer[] = [];
  const make = (label: string, size: number, usage: number) => {
    const b = device.createBuffer({
      label: `series index ${label}`,
      size: Math.max(16, Math.ceil(size / 16) * 16),
      usage,
    });
    owned.push(b);
    return b;
  };
  const destroy = () => {
    for (const b of owned) b.destroy();
    owned.length = 0;
  };
  const RW = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC;
  const temporary: GPUBuffer[] = [];
  // Error scopes open at a throw (an abort between chunks) are closed before the buffers go.
  let scopes = 0;
  const push = () => {
    device.pushErrorScope('out-of-memory');
    scopes++;
  };
  const pop = () => {
    scopes--;
    return device.popErrorScope();
  };
  try {
    push();
    const scratch = make('build scratch', scratchBytes, GPUBufferUsage.STORAGE);
    const errors = make('lane errors', 16, RW);
    const totals = make('chunk totals', chunkCount * 4, RW);
    const readback = make(
      'build readback',
      chunkCount * 4 + 16,
      GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
    );
    temporary.push(scratch, totals, readback);
    type PerAcquisition = { blocks: GPUBuffer; bases: GPUBuffer; image: GPUBuffer; out: GPUBuffer };
    const perAcq = new Map<number, PerAcquisition>();
    for (const a of plan.acquisitions) {
      const g = geometries.get(a) as IndexGeometry;
      perAcq.set(a, {
        blocks: make(`blocks ${a}`, g.blocksWords * 4, RW),
        bases: make(`offsets ${a}`, g.basesWords * 4, RW),
        image: make(`image ${a}`, g.frames * 8, RW),
        out: make(`readback words ${a}`, g.frames * 4 + 4, RW),
      });
    }
    const list = make(
      'mask list',
      plan.acquisitions.length * pixels * 4,
      GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST,
    );
    const chunkTable = make(
      'chunk table',
      chunkCount * CHUNK_WORDS * 4,
      GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST,
    );
    const oom = await pop();
    if (oom)
      throw new StemflowError('budget', `The GPU could not hold the series index's metadata: ${oom.message}`);

    const passes = buildPasses(device, archive, plan, buffers, { scratch, errors, totals, virtualPixels });
    // Progress as the GPU finishes each chunk's step (a callback, not a wait: the host does not stop here).
    let stepsSubmitted = 0;
    const progress = () => {
      const step = ++stepsSubmitted;
      if (options.onProgress)
        device.queue.onSubmittedWorkDone().then(
          () => options.onProgress?.(step, 2 * chunkCount),
          () => undefined,
        );
    };

    // Phase 1: block tables and group offsets of every chunk, the totals read back once.
    push();
    let chunk = 0;
    for (const a of plan.acquisitions) {
      const g = geometries.get(a) as IndexGeometry;
      const { blocks, bases } = perAcq.get(a) as PerAcquisition;
      for (const c of g.chunks) {
        throwIfAborted(options.signal);
        const at = chunk++;
        passes.chunk(a, g, c, (e) => passes.sizes(e, c, at, blocks, bases));
        progress();
      }
    }
    const copy = device.createCommandEncoder();
    copy.copyBufferToBuffer(totals, 0, readback, 0, chunkCount * 4);
    copy.copyBufferToBuffer(errors, 0, readback, chunkCount * 4, 16);
    device.queue.submit([copy.finish()]);
    await readback.mapAsync(GPUMapMode.READ);
    const words = new Uint32Array(readback.getMappedRange().slice(0));
    readback.unmap();
    const failed = await pop();
    if (failed)
      throw new StemflowError('device', `The GPU could not build the series index: ${failed.message}`);
    if (words[chunkCount] !== 0)
      throw new StemflowError(
        'corrupt',
        `${words[chunkCount]} lane(s) of the series could not be decoded while building its index; the archive is damaged.`,
      );

    // Data buffers sized from the totals: each acquisition's chunks in order, a new buffer when one is full.
    const placed = new Map<number, { sizes: number[]; chunkBuffer: number[]; chunkBase: number[] }>();
    let dataBytes = 0;
    chunk = 0;
    for (const a of plan.acquisitions) {
      const g = geometries.get(a) as IndexGeometry;
      const sizes: number[] = [];
      const chunkBuffer: number[] = [];
      const chunkBase: number[] = [];
      for (let i = 0; i < g.chunks.length; i++) {
        const bytes = words[chunk++] * 4;
        if (bytes > maxBinding) {
          destroy();
          return {
            refused: `one index chunk of ${archive.acquisitions[a].info.name} takes ${fmt(bytes)}; this GPU binds at most ${fmt(maxBinding)}`,
          };
        }
        if (sizes.length === 0 || sizes[sizes.length - 1] + bytes > maxBinding) sizes.push(0);
        chunkBuffer.push(sizes.length - 1);
        chunkBase.push(sizes[sizes.length - 1] / 4);
        sizes[sizes.length - 1] += bytes;
        dataBytes += bytes;
      }
      placed.set(a, { sizes, chunkBuffer, chunkBase });
    }
    const total = dataBytes + metadataBytes + scratchBytes + queryScratch;
    if (total > options.budgetBytes) {
      destroy();
      return {
        refused: `the index needs ${fmt(dataBytes + metadataBytes + queryScratch)} (packed counts ${fmt(dataBytes)}, block tables and group offsets ${fmt(metadataBytes)}, query scratch ${fmt(queryScratch)}) and ${fmt(scratchBytes)} while it is built; its budget is ${fmt(options.budgetBytes)}`,
      };
    }

    push();
    const acquisitions = new Map<number, IndexedAcquisition>();
    for (const a of plan.acquisitions) {
      const p = placed.get(a) as { sizes: number[]; chunkBuffer: number[]; chunkBase: number[] };
      const m = perAcq.get(a) as PerAcquisition;
      acquisitions.set(a, {
        geometry: geometries.get(a) as IndexGeometry,
        ...m,
        data: p.sizes.map((bytes, i) =>
          make(`data ${a}.${i}`, bytes, GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC),
        ),
        chunkBuffer: p.chunkBuffer,
        chunkBase: p.chunkBase,
      });
    }
    const oomData = await pop();
    if (oomData)
      throw new StemflowError(
        'budget',
        `The GPU could not hold the series index (${fmt(dataBytes)} of packed counts): ${oomData.message}`,
      );

    // Phase 2: each chunk decoded again and packed.
    push();
    for (const a of plan.acquisitions) {
      const ix = acquisitions.get(a) as IndexedAcquisition;
      ix.geometry.chunks.forEach((c, i) => {
        throwIfAborted(options.signal);
        passes.chunk(a, ix.geometry, c, (e) =>
          passes.pack(e, c, ix.blocks, ix.bases, ix.data[ix.chunkBuffer[i]], ix.chunkBase[i]),
        );
        progress();
      });
    }
    await device.queue.onSubmittedWorkDone();
    const failedPack = await pop();
    if (failedPack)
      throw new StemflowError('device', `The GPU could not build the series index: ${failedPack.message}`);
    for (const b of temporary) {
      b.destroy();
      owned.splice(owned.indexOf(b), 1);
    }
    const buildMs = performance.now() - t0;
    return {
      acquisitions,
      dataBytes,
      metadataBytes,
      scratchBytes: queryScratch,
      buildMs,
      lines: [
        `exact index: packed counts ${fmt(dataBytes)} (${((8 * dataBytes) / (frames * pixels)).toFixed(2)} bits a count, tiles of ${
          geometries
            .get(plan.acquisitions[0])
            ?.tiles.map((t) => `${t.side} x ${t.side}`)
            .join(' and ') || 'none'
        } included), block tables and group offsets ${fmt(metadataBytes)}, query scratch ${fmt(queryScratch)}; built in ${buildMs.toFixed(0)} ms`,
      ],
      list,
      chunkTable,
      dispatch: planIndexDispatch(device, acquisitions, chunkTable, make),
      pipelineFor: queryPipelines(device),
      destroy,
    };
  } catch (e) {
    while (scopes > 0) await pop().catch(() => null);
    destroy();
    if (e instanceof StemflowError) throw e;
    // A lost device aborts the readback's mapping (or any later step): say so, typed.
    throw new StemflowError(
      'device',
      `The GPU did not finish building the series index (${e instanceof Error ? e.message || e.name : String(e)}); the device may have been lost. Load the series again.`,
      {},
      { cause: e },
    );
  }
}
