/**
 * The load's batch reads (gpu-load.ts): chunk bytes read straight into mapped staging buffers (no host copy, no
 * writeBuffer staging), a ring of them so the next batch is read while this one is copied and decoded; each
 * batch's index entries written into its set of the batch buffers, and its decode job.
 */
import type { LoadPlan } from '../gpu/load-plan.ts';
import type { Bslz4DecodeJob } from '../gpu/passes/bslz4-decode.ts';
import { chunkIndex } from '../kernels/bslz4-decode.ts';
import type { AcquisitionSource } from '../source/acquisition-source.ts';
import type { GpuLoadTimings } from './gpu-load-types.ts';

/** Batch k, read: its decode job, the copy of its chunks into its set, and the hand-back of its staging. */
export interface UploadedBatch {
  job: Bslz4DecodeJob & { firstFrame: number; compressedBytes: number; indexBase: number };
  /** Records the copy of the batch's chunks from its staging buffer into its set of `compressed`. */
  copy(encoder: GPUCommandEncoder): void;
  /** Maps the staging buffer again once the commands that copy from it are submitted. */
  remap(): void;
}

export interface BatchReader {
  /** Batch k (in order, each once): waits for its read, starts the next one, writes its index entries. */
  upload(k: number): Promise<UploadedBatch>;
  /** Bytes of chunks read so far. */
  readonly bytesRead: number;
  /** The staging buffers' pending maps (await them all before the buffers go back to their pool). */
  mapped(): Promise<void>[];
}

/**
 * Starts reading batch 0 into staging[0]. Batch k uses staging[k % staging.length], set k % `sets` of
 * `compressed` (plan.compressedSlotBytes each) and set k % `indexSets` of `index` (plan.indexSlotBytes each);
 * `job` holds the buffers every batch's decode job shares. The load's read-wait and upload times accumulate into
 * `timings`.
 */
export function createBatchReader({
  device,
  plan,
  source,
  signal,
  staging,
  compressed,
  index,
  sets,
  indexSets = sets,
  job: shared,
  timings,
}: {
  device: GPUDevice;
  plan: LoadPlan;
  source: AcquisitionSource;
  signal?: AbortSignal;
  staging: readonly GPUBuffer[];
  compressed: GPUBuffer;
  index: GPUBuffer;
  sets: number;
  /** Sets of `index` (batch k in set k % indexSets; default `sets`). */
  indexSets?: number;
  job: Pick<Bslz4DecodeJob, 'flags' | 'decoded' | 'errors' | 'totals' | 'audit' | 'pixels'>;
  timings: Pick<GpuLoadTimings, 'readWaitMs' | 'uploadMs'>;
}): BatchReader {
  const ring = staging.length;
  // Each staging buffer's map: resolved while it is mapped and unused; from its unmap until remap() has mapped it
  // again, a promise that settles with that map (so a read started early waits for the buffer's batch to be copied).
  const mapped: Promise<void>[] = staging.map(() => Promise.resolve());
  const remapped: ((map: Promise<void>) => void)[] = staging.map(() => () => {});
  const readBatch = async (k: number) => {
    const first = k * plan.batchFrames;
    const count = Math.min(plan.batchFrames, plan.frames - first);
    await mapped[k % ring];
    const range = new Uint8Array(staging[k % ring].getMappedRange(0, plan.compressedSlotBytes));
    return source.readStored(first, count, signal, range);
  };
  let next = readBatch(0);
  next.catch(() => {}); // awaited by upload; if the load ends first, its failure is expected
  let bytesRead = 0;

  // Batch k's chunks, once read: unmapped (detaching `stored.bytes`), the next read started, its index entries
  // written into its set.
  const upload = async (k: number): Promise<UploadedBatch> => {
    let t = performance.now();
    const stored = await next;
    timings.readWaitMs += performance.now() - t;
    t = performance.now();
    const count = stored.sizes.length;
    const length = Math.ceil(stored.bytes.byteLength / 4) * 4;
    bytesRead += stored.bytes.byteLength;
    const set = k % sets;
    const base = set * plan.compressedSlotBytes;
    const buffer = staging[k % ring];
    buffer.unmap();
    mapped[k % ring] = new Promise<void>((resolve) => {
      remapped[k % ring] = resolve;
    });
    // Awaited by a later read; if the load ends first, its failure is expected.
    mapped[k % ring].catch(() => {});
    // The next read fills the next staging buffer while this batch is copied and decoded.
    if (k + 1 < plan.batches) {
      next = readBatch(k + 1);
      // Awaited later; if the load ends first (cancel, error), its failure is expected.
      next.catch(() => {});
    }
    // Index entries point into the whole compressed buffer: the set's chunks start at `base`.
    const entries = chunkIndex(stored);
    for (let i = 0; i < entries.length; i += 2) entries[i] += base;
    // Written before the next submission: with copyAhead, batch k + 2's entries are written before batch k's
    // dispatch, which reads batches k and k + 1's, so the index holds three sets.
    const indexSet = k % indexSets;
    device.queue.writeBuffer(index, indexSet * plan.indexSlotBytes, entries);
    timings.uploadMs += performance.now() - t;
    return {
      job: {
        ...shared,
        compressed,
        compressedBytes: base + length,
        index,
        indexBase: indexSet * plan.batchFrames,
        frameCount: count,
        firstFrame: k * plan.batchFrames,
        wordsPerFrame: plan.wordsPerFrame,
        // One dispatch a batch: a dispatch of 4,096 frames is one wave of workgroups on the H200 and ends with
        // its slowest frame; 8,192 frames decode 6 % faster a frame (docs/performance.md, fourteenth session).
        maxFramesPerDispatch: plan.batchFrames,
        listSet: set,
        parsed: plan.parseAhead,
      },
      copy(encoder) {
        if (length > 0) encoder.copyBufferToBuffer(buffer, 0, compressed, base, length);
      },
      remap() {
        const remap = buffer.mapAsync(GPUMapMode.WRITE);
        // A failed or cancelled load destroys the buffer before this settles; its rejection is then expected.
        remap.catch(() => {});
        remapped[k % ring](remap);
      },
    };
  };
  return {
    upload,
    get bytesRead() {
      return bytesRead;
    },
    mapped: () => mapped,
  };
}
