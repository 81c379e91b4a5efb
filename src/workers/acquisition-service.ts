import { StemflowError, throwIfAborted } from '../errors';
import { FrameStats, flaggedFromMask, virtualImage } from '../products/frame-stats';
import { type AcquisitionSource, DTYPE_BYTES, type FrameArray, viewAs } from '../source/acquisition-source';
import { openAcquisition } from '../source/hdf5-acquisition';
import type { InputFile } from '../source/input-file';
import type { AcquisitionSummary, LoadProgress, LoadResult } from './acquisition-api';

/** Largest acquisition the CPU path keeps decoded in worker memory. */
export const CPU_BUDGET_BYTES = 2 * 1024 ** 3;
const BATCH_FRAMES = 256;

/**
 * The acquisition worker's logic, independent of comlink and of how files arrive: the worker wraps it
 * with browser File inputs, tests and the CLI with Node file inputs. One acquisition at a time; opening a
 * new one releases the previous only after the new one opened, so a bad drop loses nothing.
 */
export function createAcquisitionService(budgetBytes = CPU_BUDGET_BYTES) {
  let source: AcquisitionSource | null = null;
  let frames: FrameArray | null = null;
  let flagged: Uint8Array | null = null;
  let controller: AbortController | null = null;

  function need(): AcquisitionSource {
    if (!source) throw new StemflowError('invalid', 'No acquisition is open.');
    return source;
  }
  function needFrames(): FrameArray {
    if (!frames) throw new StemflowError('invalid', 'The acquisition is not loaded yet.');
    return frames;
  }

  return {
    async openInputs(
      inputs: InputFile[],
      scan?: [number, number],
      dataset?: string,
    ): Promise<AcquisitionSummary> {
      const next = await openAcquisition(inputs, { scan, dataset }).catch(async (e) => {
        await Promise.all(inputs.map((i) => i.close?.()));
        throw e;
      });
      controller?.abort();
      await source?.close();
      source = next;
      frames = null;
      flagged = flaggedFromMask(next.pixelMask);
      return next.summary;
    },

    async load(onProgress?: (p: LoadProgress) => void): Promise<LoadResult> {
      const src = need();
      const t0 = performance.now();
      const total = src.frameCount * src.frameBytes;
      if (total > budgetBytes) {
        const mib = (n: number) => `${(n / 1024 ** 2).toFixed(2)} MiB`;
        throw new StemflowError(
          'budget',
          `This acquisition holds ${mib(total)} of counts, more than the ${mib(budgetBytes)} the CPU path may keep in memory`,
        );
      }
      controller?.abort();
      const ctrl = new AbortController();
      controller = ctrl;
      const { dtype, detector } = src.summary;
      const pixels = detector[0] * detector[1];
      const bytes = new Uint8Array(total);
      const stats = new FrameStats(src.frameCount, pixels, flagged);
      for (let first = 0; first < src.frameCount; first += BATCH_FRAMES) {
        throwIfAborted(ctrl.signal);
        const count = Math.min(BATCH_FRAMES, src.frameCount - first);
        const batch = await src.readFrames(first, count, ctrl.signal);
        bytes.set(batch, first * src.frameBytes);
        stats.add(first, viewAs(batch, dtype), pixels);
        onProgress?.({ framesDone: first + count, frameCount: src.frameCount });
      }
      if (source !== src)
        throw new StemflowError('aborted', 'Another acquisition was opened during the load.');
      frames = viewAs(bytes, dtype);
      return {
        sumDiffraction: stats.sumDiffraction,
        frameTotals: stats.frameTotals,
        maxCount: stats.maxCount,
        countAbove255: stats.countAbove255,
        elapsedMs: performance.now() - t0,
      };
    },

    async pixelMask(): Promise<Uint8Array> {
      const src = need();
      return flagged ?? new Uint8Array(src.summary.detector[0] * src.summary.detector[1]);
    },

    async frame(index: number): Promise<FrameArray> {
      const src = need();
      if (!Number.isInteger(index) || index < 0 || index >= src.frameCount) {
        throw new StemflowError('invalid', `Frame ${index} is outside 0..${src.frameCount - 1}`);
      }
      const size = src.frameBytes / DTYPE_BYTES[src.summary.dtype];
      if (frames) return frames.slice(index * size, (index + 1) * size);
      return viewAs(await src.readFrames(index, 1), src.summary.dtype);
    },

    async virtualImage(mask: Uint8Array): Promise<Float64Array> {
      const src = need();
      const pixels = src.summary.detector[0] * src.summary.detector[1];
      if (mask.length !== pixels) {
        throw new StemflowError(
          'invalid',
          `The mask has ${mask.length} pixels but the detector has ${pixels}`,
        );
      }
      return virtualImage(needFrames(), pixels, mask, flagged);
    },

    async close(): Promise<void> {
      controller?.abort();
      await source?.close();
      source = null;
      frames = null;
      flagged = null;
    },
  };
}

export type AcquisitionService = ReturnType<typeof createAcquisitionService>;
