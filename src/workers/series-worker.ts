/// <reference lib="webworker" />
import { expose, transfer } from 'comlink';
import { browserArchiveFiles, browserSha256, fileListArchiveFiles } from '../archive/browser-folder';
import { type Archive, openArchive } from '../archive/reader';
import { StemflowError } from '../errors';
import { deviceOnDemand } from '../gpu/device';
import { fitSeries, loadSeries, type Series } from '../series/series';
import type { SeriesApi } from './series-api';

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

let archive: Archive | null = null;
let series: Series | null = null;
const need = () => {
  if (!series) throw new StemflowError('invalid', 'No series is loaded.');
  return series;
};

export const api: SeriesApi = {
  async open(folder, options, onProgress) {
    await series?.release();
    await archive?.close();
    series = null;
    archive = null;
    const t0 = performance.now();
    const files = Array.isArray(folder)
      ? fileListArchiveFiles(folder, options.paths)
      : browserArchiveFiles(folder);
    archive = await openArchive(files, {
      hash: browserSha256,
      onProgress: ({ bytesChecked, bytesTotal }) =>
        onProgress?.({ stage: 'check', done: bytesChecked, total: bytesTotal }),
    });
    const openMs = performance.now() - t0;
    const t1 = performance.now();
    const device = await gpuDevice();
    // Without a chosen subset, as many acquisitions as fit (in archive order); a chosen subset loads whole or not.
    const asked = options.acquisitions ?? archive.acquisitions.map((_, i) => i);
    const chosen = options.acquisitions
      ? asked
      : fitSeries(archive, asked, device.limits, options.budgetBytes).acquisitions;
    series = await loadSeries(device, archive, {
      budgetBytes: options.budgetBytes,
      acquisitions: chosen,
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
      plan: series.plan.lines,
      asked: asked.length,
      gpuBytes: series.plan.totalBytes,
      openMs,
      loadMs: performance.now() - t1,
    };
  },
  async images(mask, order) {
    const q = await need().virtualImages(mask, { order });
    return transfer(
      { images: q.images, order: q.order, modes: q.modes, ms: q.ms },
      q.images.map((im) => im.buffer as ArrayBuffer),
    );
  },
  async rebase() {
    const q = await need().rebase();
    return { images: q.images, order: q.order, modes: q.modes, ms: q.ms };
  },
  frames: (row, col, order) => need().frames(row, col, order),
  sumPatterns: async (order) => need().sumPatterns(order),
  async release() {
    await series?.release();
    await archive?.close();
    series = null;
    archive = null;
  },
};

expose(api);
