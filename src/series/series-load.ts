/**
 * Allocation and upload of a series' GPU buffers (src/series/series.ts) from its plan: every buffer inside one
 * out-of-memory scope, then every record's lane words read straight into a ring of mapped staging buffers and
 * copied on the GPU (bounded back-pressure), its offsets, tables and class maps written beside them. A lost
 * device or a failed write is a typed error of the load; a failed load frees everything it made.
 */
import type { Archive } from '../archive/reader';
import { StemflowError, throwIfAborted } from '../errors';
import { type planSeries, RECORD_WORDS } from './series-plan';

export interface SeriesBuffers {
  data: GPUBuffer[];
  offsets: GPUBuffer[];
  cells: GPUBuffer[];
  classMaps: GPUBuffer[];
  bits: GPUBuffer;
  need: GPUBuffer;
  /** One per data buffer: accumulator A's plane, then B's (8 B per frame each). */
  sums: GPUBuffer[];
  recordTable: GPUBuffer;
  /** The query's readback. */
  staging: GPUBuffer;
  destroyAll(): void;
}

export async function createSeriesBuffers(
  device: GPUDevice,
  archive: Archive,
  plan: ReturnType<typeof planSeries>,
  pixels: number,
  stagingSlots: number,
  options: { signal?: AbortSignal; onProgress?: (done: number, total: number) => void },
): Promise<SeriesBuffers> {
  const buffers: GPUBuffer[] = [];
  const make = (label: string, size: number, usage: number) => {
    const b = device.createBuffer({
      label: `series ${label}`,
      size: Math.max(16, Math.ceil(size / 16) * 16),
      usage,
    });
    buffers.push(b);
    return b;
  };
  const STORAGE_IN = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST;
  const destroyAll = () => {
    for (const b of buffers) b.destroy();
    buffers.length = 0;
  };
  device.pushErrorScope('out-of-memory');
  const data = plan.bufferBytes.map((bytes, i) => make(`data ${i}`, bytes, STORAGE_IN));
  const offsets = plan.bufferIndex.map((b, i) => make(`lane offsets ${i}`, b.offsets * 4, STORAGE_IN));
  const cells = plan.bufferIndex.map((b, i) => make(`decoder tables ${i}`, b.cells * 4, STORAGE_IN));
  const classMaps = plan.bufferIndex.map((b, i) => make(`class maps ${i}`, b.classes * 4, STORAGE_IN));
  const bits = make('mask bits', plan.bitsWords * 4, STORAGE_IN);
  const need = make('slice needs', plan.needWords * 4, STORAGE_IN);
  // One sums buffer per data buffer: dispatches of different data buffers write different buffers, so the GPU
  // need not wait for one to finish before the next starts.
  const sums = plan.bufferFrames.map((frames, i) =>
    make(
      `frame sums ${i}`,
      frames * 16,
      GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
    ),
  );
  const recordTable = make('record table', plan.placements.length * RECORD_WORDS * 4, STORAGE_IN);
  const staging = make('readback', plan.frames * 16, GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST);
  const recordStaging = Array.from({ length: stagingSlots }, (_, i) =>
    device.createBuffer({
      label: `series load staging ${i}`,
      size: plan.maxRecordBytes,
      usage: GPUBufferUsage.MAP_WRITE | GPUBufferUsage.COPY_SRC,
      mappedAtCreation: true,
    }),
  );
  buffers.push(...recordStaging);
  const oom = await device.popErrorScope();
  // Errors of the writes below (out of memory for their staging, for one) are caught by this scope.
  device.pushErrorScope('out-of-memory');
  if (oom) {
    await device.popErrorScope();
    destroyAll();
    throw new StemflowError(
      'budget',
      `The GPU could not hold the series (${plan.lines.join('; ')}): ${oom.message}`,
    );
  }
  // A device lost while loading (or before) is reported by the load, not by the first query.
  let lost: GPUDeviceLostInfo | null = null;
  void device.lost.then((info) => {
    lost = info;
  });
  let scopeOpen = true;
  // Each record's lane words are read straight into a mapped staging buffer of a ring of `slots` (concurrent
  // reads, no host copy), copied on the GPU, and the buffer is mapped again for a later record: at most `slots`
  // records are between the file and the GPU (bounded back-pressure; before, queueing every record with
  // writeBuffer held the whole series in staging memory until the end, and Dawn lost the device past ~25 GB).
  // Record i + slots is read as soon as record i's staging buffer is mapped again, so reads run ahead of copies.
  const ring = recordStaging.map((buffer) => ({ buffer, ready: Promise.resolve() as Promise<unknown> }));
  const reads: Promise<void>[] = [];
  const readAt = (i: number) => {
    const q = plan.placements[i];
    if (!q) return;
    const slot = ring[i % ring.length];
    reads[i] = slot.ready.then(async () => {
      throwIfAborted(options.signal);
      const into = new Uint8Array(slot.buffer.getMappedRange());
      await archive.acquisitions[q.acquisition].readRecordData(q.record, options.signal, into);
    });
    reads[i].catch(() => {}); // awaited below in order; a failure is reported there
  };
  try {
    let done = 0;
    for (let k = 0; k < ring.length; k++) readAt(k);
    for (const [i, p] of plan.placements.entries()) {
      throwIfAborted(options.signal);
      const acq = archive.acquisitions[p.acquisition];
      const rec = acq.records[p.record];
      await reads[i];
      if (lost) break;
      const slot = ring[i % ring.length];
      slot.buffer.unmap();
      const encoder = device.createCommandEncoder({ label: 'series load' });
      encoder.copyBufferToBuffer(slot.buffer, 0, data[p.buffer], p.dataBase * 4, rec.dataWords * 4);
      device.queue.writeBuffer(offsets[p.buffer], p.offsetsBase * 4, rec.offsets);
      device.queue.writeBuffer(cells[p.buffer], p.cellsBase * 4, rec.tables.decodeCells);
      const packed = new Uint8Array(Math.ceil(pixels / 4) * 4);
      packed.set(rec.tables.classMap);
      device.queue.writeBuffer(classMaps[p.buffer], p.classBase * 4, packed);
      device.queue.submit([encoder.finish()]);
      slot.ready = slot.buffer.mapAsync(GPUMapMode.WRITE);
      options.onProgress?.(++done, plan.placements.length);
      readAt(i + ring.length);
    }
    device.queue.submit([]);
    await device.queue.onSubmittedWorkDone();
    scopeOpen = false;
    const failure = await device.popErrorScope();
    if (lost || failure) {
      const reason = lost
        ? `the device was lost: ${(lost as GPUDeviceLostInfo).message || (lost as GPUDeviceLostInfo).reason}`
        : (failure as GPUError).message;
      throw new StemflowError(
        'device',
        `The GPU did not take the series' data (${reason}). Load fewer acquisitions (${plan.lines[0]}).`,
      );
    }
  } catch (error) {
    // Reads still writing into mapped staging must end before the buffers are destroyed.
    await Promise.allSettled([...reads, ...ring.map((slot) => slot.ready)]);
    if (scopeOpen) await device.popErrorScope().catch(() => null);
    destroyAll();
    if (lost && !(error instanceof StemflowError)) {
      throw new StemflowError(
        'device',
        `The GPU did not take the series' data (the device was lost: ${(lost as GPUDeviceLostInfo).message || (lost as GPUDeviceLostInfo).reason}). Load fewer acquisitions (${plan.lines[0]}).`,
      );
    }
    throw error;
  }
  for (const b of recordStaging) b.destroy();
  buffers.splice(buffers.length - recordStaging.length, recordStaging.length);
  return { data, offsets, cells, classMaps, bits, need, sums, recordTable, staging, destroyAll };
}
