/// <reference lib="webworker" />
import { expose, transfer } from 'comlink';
import {
  browserArchiveFiles,
  browserSha256,
  fileListArchiveFiles,
  hashBlobHere,
} from '../archive/browser-folder';
import { createBrowserHashPool } from '../archive/browser-hash-pool';
import { type Archive, openArchive } from '../archive/reader';
import { isStemflowError, StemflowError } from '../errors';
import { deviceOnDemand } from '../gpu/device';
import { estimateIndexBytes } from '../series/packed-index-build';
import { fitSeries, loadSeries, planSeries, type Series } from '../series/series';
import { matchSpares, uniqueBuffers } from './image-spares';
import type { SeriesApi, SeriesSummary } from './series-api';

/** The series worker: archives checked, loaded encoded onto the GPU, and queried, off the main thread. */
// Requested again after a loss: a series can then be opened again without reloading the page.
const gpuDevice = deviceOnDemand(async () => {
  const adapter = await navigator.gpu?.requestAdapter();
  if (!adapter)
    throw new StemflowError('device', 'Series queries need WebGPU (Chrome or Edge, Safari 26 or newer).');
  return adapter.requestDevice({
    requiredLimits: {
      maxStorageBufferBindingSize: adapter.limits.maxStorageBufferBindingSize,
      maxBufferSize: adapter.limits.maxBufferSize,
    },
  });
});

// Every file of an archive is checked before use, several at once (one thread per file).
const hashPool = createBrowserHashPool(hashBlobHere);

let archive: Archive | null = null;
let series: Series | null = null;
// Image arrays the main thread handed back, filled by a later query (with the exact index); dropped with the series.
let spares: Uint32Array[] = [];
const need = () => {
  if (!series) throw new StemflowError('invalid', 'No series is loaded.');
  return series;
};

/**
 * Loads acquisitions of the open archive: a chosen subset whole (refused with the numbers, before the loaded
 * series is released, when it does not fit), or by default as many as fit, in archive order.
 */
async function loadChosen(
  options: { budgetBytes: number; acquisitions?: number[]; index?: boolean },
  openMs: number,
  onProgress?: (p: { stage: string; done: number; total: number }) => void,
): Promise<SeriesSummary> {
  const opened = archive as Archive;
  const t1 = performance.now();
  const device = await gpuDevice();
  const asked = options.acquisitions ?? opened.acquisitions.map((_, i) => i);
  const chosen = options.acquisitions
    ? asked
    : fitSeries(
        opened,
        asked,
        device.limits,
        options.budgetBytes,
        undefined,
        // With the index: as many as fit with theirs (estimated; the build then sizes it exactly).
        options.index ? (acquisitions) => estimateIndexBytes(opened, acquisitions, device.limits) : undefined,
      ).acquisitions;
  await series?.release();
  series = null;
  spares = [];
  series = await loadSeries(device, opened, {
    budgetBytes: options.budgetBytes,
    acquisitions: chosen,
    index: options.index
      ? { onProgress: (done, total) => onProgress?.({ stage: 'index', done, total }) }
      : undefined,
    onProgress: (done, total) => onProgress?.({ stage: 'load', done, total }),
  });
  return {
    acquisitions: series.acquisitions.map((a) => ({
      index: a.index,
      name: a.info.name,
      scan: a.info.scan,
      detector: a.info.detector,
      dtype: a.info.dtype,
    })),
    available: opened.acquisitions.map((a, index) => ({ index, name: a.info.name })),
    hashThreads: hashPool.used,
    plan: series.plan.lines,
    asked: asked.length,
    gpuBytes: series.plan.totalBytes + (series.index?.bytes ?? 0),
    index: series.index ? { built: series.index.built, line: series.index.lines.join(' ') } : null,
    openMs,
    loadMs: performance.now() - t1,
  };
}

export const api: SeriesApi = {
  async open(folder, options, onProgress) {
    await series?.release();
    await archive?.close();
    series = null;
    archive = null;
    const t0 = performance.now();
    const files = Array.isArray(folder)
      ? fileListArchiveFiles(folder, options.paths, hashPool)
      : browserArchiveFiles(folder, hashPool);
    archive = await openArchive(files, {
      hash: browserSha256,
      onProgress: ({ bytesChecked, bytesTotal }) =>
        onProgress?.({ stage: 'check', done: bytesChecked, total: bytesTotal }),
    });
    return loadChosen(options, performance.now() - t0, onProgress);
  },
  async reload(options, onProgress) {
    if (!archive) throw new StemflowError('invalid', 'No archive is open.');
    try {
      if (options.acquisitions)
        planSeries(archive, options.acquisitions, (await gpuDevice()).limits, options.budgetBytes);
    } catch (e) {
      // Refused before anything was released: the loaded series stays.
      if (isStemflowError(e)) return { refused: e.message };
      throw e;
    }
    return loadChosen(options, 0, onProgress);
  },
  async images(mask, order, handedBack) {
    const s = need();
    // Only the exact index fills the caller's arrays; the lanes' images are always fresh.
    let into: Uint32Array[] | undefined;
    if (s.index?.built) {
      const scans = (order ?? s.acquisitions.map((a) => a.index)).map(
        (a) => archive?.acquisitions[a]?.info.scan,
      );
      ({ into, kept: spares } = matchSpares(
        [...spares, ...(handedBack ?? [])],
        scans.map((scan) => (scan ? scan[0] * scan[1] : Number.NaN)),
      ));
    }
    const q = await s.virtualImages(mask, { order, into });
    // Arrays not returned as images (a value past 32 bits gives a Float64Array) stay spares.
    const filled = into?.filter((im) => q.images.includes(im)) ?? [];
    if (into) spares.push(...into.filter((im) => !filled.includes(im)));
    return transfer(
      { images: q.images, order: q.order, modes: q.modes, ms: q.ms, recycled: filled.length },
      uniqueBuffers(q.images),
    );
  },
  async rebase() {
    const q = await need().rebase();
    return { images: q.images, order: q.order, modes: q.modes, ms: q.ms, recycled: 0 };
  },
  frames: (row, col, order) => need().frames(row, col, order),
  sumPatterns: async (order) => need().sumPatterns(order),
  async release() {
    await series?.release();
    await archive?.close();
    series = null;
    archive = null;
    spares = [];
  },
};

expose(api);
