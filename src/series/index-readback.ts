/**
 * The index query's submissions and readback (packed-index-gpu.ts encodes the passes): the acquisitions of a query
 * run in up to READBACK_PARTS parts, each its own submission copying into its own mapped-readable buffer, so the
 * host copies one part's images out while the GPU runs the next; only the last part's copy adds to the query's
 * time. The host waits once per part, never inside the submissions.
 */
import type { GpuTimer } from '../gpu/gpu-timer';
import {
  encodeIndexQuery,
  type IndexedAcquisition,
  type IndexLaunch,
  indexImages,
  readIndexImage,
  type SeriesIndex,
} from './packed-index-gpu';
import { mapQueryReadback } from './series-query';

/** Parts of a query (submissions and readback buffers). */
export const READBACK_PARTS = 3;

/** The readback buffers of an index query: part k of any order fits buffer k. */
export interface IndexReadback {
  buffers: GPUBuffer[];
  destroy(): void;
}

/** Bytes a part's acquisitions read back: each one's low words and its flag. */
const partBytes = (frames: number[]) => frames.reduce((n, f) => n + f * 4 + 4, 0);

/** The order's parts: consecutive, as even as they can be, at most READBACK_PARTS. */
export function readbackParts(count: number, parts = READBACK_PARTS): [number, number][] {
  const k = Math.max(1, Math.min(parts, count));
  return Array.from({ length: k }, (_, i) => [
    Math.floor((i * count) / k),
    Math.floor(((i + 1) * count) / k),
  ]);
}

/** Readback buffers for any order of the index's acquisitions (the largest parts of the largest ones). */
export function createIndexReadback(device: GPUDevice, index: SeriesIndex): IndexReadback {
  const frames = [...index.acquisitions.values()].map((ix) => ix.geometry.frames).sort((x, y) => y - x);
  const largest = Math.max(...readbackParts(frames.length).map(([s, e]) => e - s));
  const size = Math.max(16, Math.ceil(partBytes(frames.slice(0, largest)) / 16) * 16);
  const buffers = readbackParts(frames.length).map((_, k) =>
    device.createBuffer({
      label: `series index readback ${k}`,
      size,
      usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
    }),
  );
  return {
    buffers,
    destroy: () => {
      for (const b of buffers) b.destroy();
    },
  };
}

/**
 * Runs an index query over `order` (its lists and modes from `indexLists`) and fills `into` (one array per
 * acquisition of the order) with the images whose values fit 32 bits; the others are read from their resident
 * images as float64. Timer marks: 'query' before the first part, 'copy' and 'end' after the last.
 */
export async function queryIndex(
  device: GPUDevice,
  index: SeriesIndex,
  readback: IndexReadback,
  q: {
    order: number[];
    lists: Uint32Array[];
    modes: ('full' | 'delta')[];
    into: Uint32Array[];
    timer?: GpuTimer;
    launch?: IndexLaunch;
  },
): Promise<{
  images: (Uint32Array | Float64Array)[];
  /** Host time: submitting, waiting for each part, copying out (ms). */
  stages: { submitMs: number; waitMs: number; copyMs: number };
}> {
  const t0 = performance.now();
  const parts = readbackParts(q.order.length);
  const frames = q.order.map((a) => (index.acquisitions.get(a) as IndexedAcquisition).geometry.frames);
  const offsets: number[][] = [];
  parts.forEach(([s, e], k) => {
    const encoder = device.createCommandEncoder({ label: `series index query ${k}` });
    if (k === 0) q.timer?.mark(encoder, 'query');
    const mine: number[] = [];
    let at = 0;
    for (const n of frames.slice(s, e)) {
      mine.push(at);
      at += n * 4 + 4;
    }
    offsets.push(mine);
    encodeIndexQuery(
      device,
      encoder,
      index,
      q.order.slice(s, e),
      q.lists.slice(s, e),
      q.modes.slice(s, e),
      readback.buffers[k],
      offsets[k],
      q.launch,
    );
    if (k === parts.length - 1) {
      q.timer?.mark(encoder, 'copy');
      q.timer?.mark(encoder, 'end');
    }
    device.queue.submit([encoder.finish()]);
  });
  const stages = { submitMs: performance.now() - t0, waitMs: 0, copyMs: 0 };
  const images: (Uint32Array | Float64Array | null)[] = [];
  for (const [k, [s, e]] of parts.entries()) {
    const buffer = readback.buffers[k];
    const bytes = Math.max(16, Math.ceil(partBytes(frames.slice(s, e)) / 16) * 16);
    const t1 = performance.now();
    await mapQueryReadback(buffer, bytes);
    const t2 = performance.now();
    try {
      const words = new Uint32Array(buffer.getMappedRange(0, bytes));
      images.push(...indexImages(words, frames.slice(s, e), offsets[k], q.into.slice(s, e)));
    } finally {
      buffer.unmap();
    }
    stages.waitMs += t2 - t1;
    stages.copyMs += performance.now() - t2;
  }
  // Values of 2^32 and more: the resident (lo, hi) image.
  for (const [i, a] of q.order.entries())
    if (!images[i]) images[i] = await readIndexImage(device, index.acquisitions.get(a) as IndexedAcquisition);
  return { images: images as (Uint32Array | Float64Array)[], stages };
}
