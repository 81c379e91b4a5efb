import { loadPasses } from '../compute/gpu-load-passes';
import { isStemflowError, StemflowError, throwIfAborted } from '../errors';
import { acquireDevice, renewOnFailure } from '../gpu/device';
import { createResidentPool } from '../gpu/resident-pool';
import { createStagingPool } from '../gpu/staging-pool';
import { type ComSums, comBitMasks, combineBits, comImages, comSumsFromFrames } from '../products/com';
import { flaggedFromMask, unflaggedMask, virtualImage } from '../products/frame-stats';
import { addFrames, checkRegion, regionRuns, type ScanRegion } from '../products/region-sum';
import { type AcquisitionSource, DTYPE_BYTES, type FrameArray, viewAs } from '../source/acquisition-source';
import { openAcquisition } from '../source/hdf5-acquisition';
import type { InputFile } from '../source/input-file';
import { type TcbfRequest, type TcbfResponse, tcbfOnFrames, tcbfOnGpu } from '../tcbf/acquisition-tcbf';
import type { TcbfStage } from '../tcbf/pipeline';
import type { AcquisitionSummary, LoadProgress, LoadResult } from './acquisition-api';
import { type GpuState, loadCpu, loadGpu, otherDatasets } from './acquisition-load';
import { armGpuFault, type BufferAccount, type Fault, trackDeviceBuffers } from './faults';

/** Largest acquisition the CPU path keeps decoded in worker memory. */
export const CPU_BUDGET_BYTES = 2 * 1024 ** 3;

export interface ServiceOptions {
  /** Bytes the CPU path may keep decoded. */
  cpuBudgetBytes?: number;
  /** WebGPU entry point (navigator.gpu in a worker, nodeGpu() in Node); absent: CPU path only. */
  gpu?: GPU;
  /** GPU memory the load may use (default: the device's own limits). */
  gpuBudgetBytes?: number;
  /** Frames per GPU batch (tests use small batches). */
  gpuBatchFrames?: number;
}

/**
 * The acquisition worker's logic, independent of comlink and of how files arrive: the worker wraps it
 * with browser File inputs, tests and the CLI with Node file inputs. One acquisition at a time; opening a
 * new one releases the previous only after the new one opened, so a bad drop loses nothing.
 *
 * Loading takes the GPU path (exact resident counts, detector-major, products by GPU passes) when WebGPU
 * exists and the chunks are bitshuffle/LZ4 frames; otherwise the CPU path decodes into worker memory.
 */
export function createAcquisitionService(options: ServiceOptions | number = {}) {
  const opts: ServiceOptions = typeof options === 'number' ? { cpuBudgetBytes: options } : options;
  let budgetBytes = opts.cpuBudgetBytes ?? CPU_BUDGET_BYTES;
  let gpuBudgetBytes = opts.gpuBudgetBytes;
  /** A fault to inject at the next GPU load (tests of issue 8). */
  let pendingFault: Fault = 'none';
  let account: (() => BufferAccount) | null = null;
  let source: AcquisitionSource | null = null;
  let frames: FrameArray | null = null;
  let gpuState: GpuState | null = null;
  let flagged: Uint8Array | null = null;
  let controller: AbortController | null = null;
  let preference: 'auto' | 'cpu' = 'auto';
  let tcbfController: AbortController | null = null;
  /**
   * Resident buffers of the last released GPU load, reused by the next one: opening another acquisition then
   * skips creating ~19 GB of buffers and the deferred free of the old ones (~0.5 s each on an H200). Emptied on
   * close, on a budget change, on a CPU fallback and with a lost device.
   */
  const pool = createResidentPool();
  /** The load's chunk staging ring (~0.3 GiB), kept with the resident pool and emptied with it. */
  const staging = createStagingPool();
  const clearPools = () => {
    pool.clear();
    staging.clear();
  };

  function need(): AcquisitionSource {
    if (!source) throw new StemflowError('invalid', 'No acquisition is open.');
    return source;
  }

  /** One device for the worker's life; a lost (or failed) device is replaced at the next load. */
  const device = renewOnFailure(
    () => {
      // A replaced device's buffers cannot be reused.
      clearPools();
      return acquireDevice(opts.gpu!).then((ctx) => {
        account = trackDeviceBuffers(ctx.device);
        return ctx;
      });
    },
    (ctx) => ctx.failure() !== undefined,
  );

  async function loadGpuState(
    src: AcquisitionSource,
    signal: AbortSignal,
    onProgress?: (p: LoadProgress) => void,
  ) {
    const t0 = performance.now();
    const ctx = await device();
    pendingFault = armGpuFault(pendingFault, ctx.device);
    const inputs = {
      t0,
      pool,
      staging,
      budgetBytes: gpuBudgetBytes,
      batchFrames: opts.gpuBatchFrames,
      flagged,
    };
    return loadGpu(ctx, src, inputs, signal, onProgress);
  }

  function releaseLoaded() {
    // A tcBF of these counts stops at its next stage (its results would describe counts no longer held).
    tcbfController?.abort();
    gpuState?.load.release();
    gpuState?.imager.release();
    gpuState = null;
    frames = null;
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
      releaseLoaded();
      await source?.close();
      source = next;
      flagged = flaggedFromMask(next.pixelMask);
      return { ...next.summary, ...(await otherDatasets(next.summary, inputs)) };
    },

    async load(onProgress?: (p: LoadProgress) => void): Promise<LoadResult> {
      const src = need();
      controller?.abort();
      releaseLoaded();
      const ctrl = new AbortController();
      controller = ctrl;
      let fallbackReason: string | undefined;
      const gpu = preference === 'auto' ? opts.gpu : undefined;
      if (gpu && src.storedCodec.gpu) {
        try {
          const { state, result } = await loadGpuState(src, ctrl.signal, onProgress);
          if (source !== src || ctrl.signal.aborted) {
            state.load.release();
            throw new StemflowError('aborted', 'The load was cancelled.');
          }
          gpuState = state;
          return result;
        } catch (e) {
          // Cancellation and bad data end the load; a GPU that cannot take it hands over to the CPU path.
          if (
            !(e instanceof StemflowError) ||
            (e.kind !== 'unsupported' && e.kind !== 'device' && e.kind !== 'budget')
          )
            throw e;
          fallbackReason = e.message;
          // The CPU path holds the counts now: give the kept GPU buffers back.
          clearPools();
        }
      } else if (gpu) {
        fallbackReason = (src.storedCodec as { reason: string }).reason;
      }
      const { frames: decoded, result } = await loadCpu(
        src,
        { budgetBytes, flagged },
        ctrl.signal,
        onProgress,
      ).catch((e) => {
        // Refused by both paths: say why the GPU path did not take it either.
        if (fallbackReason && isStemflowError(e, 'budget'))
          throw new StemflowError('budget', `${e.message}; the GPU path refused it too: ${fallbackReason}`);
        throw e;
      });
      if (source !== src || ctrl.signal.aborted)
        throw new StemflowError('aborted', 'The load was cancelled.');
      frames = decoded;
      return fallbackReason ? { ...result, fallbackReason } : result;
    },

    async setBackend(next: 'auto' | 'cpu'): Promise<void> {
      preference = next;
      // Warm up: the device and the uint16 load pipelines compile while the user is still choosing files.
      if (next === 'auto' && opts.gpu) {
        void device()
          .then((ctx) => loadPasses(ctx.device, 2))
          .catch(() => {});
      }
    },

    /**
     * The memory the next load may use, in bytes, on the GPU (resident counts and load buffers) and in worker
     * memory (CPU path); null restores the defaults (the device's limits; CPU_BUDGET_BYTES). A load that does
     * not fit is refused before anything is allocated, with the numbers.
     */
    async setMemoryBudget(bytes: number | null): Promise<void> {
      if (bytes !== null && !(Number.isFinite(bytes) && bytes > 0))
        throw new StemflowError(
          'invalid',
          `A memory budget must be a positive number of bytes, not ${bytes}`,
        );
      gpuBudgetBytes = bytes ?? opts.gpuBudgetBytes;
      budgetBytes = bytes ?? opts.cpuBudgetBytes ?? CPU_BUDGET_BYTES;
      clearPools();
    },

    /** Arms a fault for the next GPU load ('gpu-out-of-memory', 'gpu-device-lost'); read faults live in the worker's inputs. */
    async injectFault(fault: Fault): Promise<void> {
      pendingFault = fault;
    },

    /** GPU buffers this worker's device holds now (created, not destroyed), and their bytes. */
    async gpuMemory(): Promise<BufferAccount> {
      return account?.() ?? { buffers: 0, bytes: 0 };
    },

    async cancel(): Promise<void> {
      controller?.abort();
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

    /**
     * The diffraction pattern summed over a rectangle of scan positions (every pixel, flagged ones included,
     * like a frame), exact: one contiguous read per scan row, from worker memory or decoded from the files.
     */
    async regionSum(region: ScanRegion, signal?: AbortSignal): Promise<Float64Array> {
      const src = need();
      const { dtype, detector, scan } = src.summary;
      checkRegion(region, scan, 2 ** (8 * DTYPE_BYTES[dtype]) - 1);
      const pixels = detector[0] * detector[1];
      const sums = new Float64Array(pixels);
      for (const [first, count] of regionRuns(region, scan[1])) {
        throwIfAborted(signal);
        const run = frames
          ? frames.subarray(first * pixels, (first + count) * pixels)
          : viewAs(await src.readFrames(first, count, signal), dtype);
        addFrames(sums, run, count, pixels);
      }
      return sums;
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
      if (gpuState) {
        gpuState.ctx.throwIfFailed();
        return (await gpuState.session.update(mask)).image;
      }
      if (!frames) throw new StemflowError('invalid', 'The acquisition is not loaded yet.');
      return virtualImage(frames, pixels, mask, flagged);
    },

    async com(mask: Uint8Array, centre: [number, number]) {
      const sums = await this.comSums(mask);
      return comImages(sums, centre[0], centre[1]);
    },

    /** The exact CoM sums: on the GPU from bit-mask virtual images in one submission, else from the frames. */
    async comSums(mask: Uint8Array): Promise<ComSums> {
      const src = need();
      const [rows, cols] = src.summary.detector;
      if (mask.length !== rows * cols) {
        throw new StemflowError(
          'invalid',
          `The mask has ${mask.length} pixels but the detector has ${rows * cols}`,
        );
      }
      const effective = unflaggedMask(mask, flagged);
      if (gpuState) {
        gpuState.ctx.throwIfFailed();
        const bits = comBitMasks(effective, rows, cols);
        const images = await gpuState.imager.images([effective, ...bits.x, ...bits.y]);
        return {
          total: images[0],
          sumX: combineBits(images.slice(1, 1 + bits.x.length)),
          sumY: combineBits(images.slice(1 + bits.x.length)),
        };
      }
      if (!frames) throw new StemflowError('invalid', 'The acquisition is not loaded yet.');
      return comSumsFromFrames(frames, rows, cols, effective, null);
    },

    /** tcBF with aberration fitting (src/tcbf): on the resident GPU counts, or on the decoded frames. */
    async tcbf(request: TcbfRequest, onProgress?: (stage: TcbfStage) => void): Promise<TcbfResponse> {
      const src = need();
      tcbfController?.abort();
      const ctrl = new AbortController();
      tcbfController = ctrl;
      const shape = { scan: src.summary.scan, detector: src.summary.detector };
      if (gpuState) {
        gpuState.ctx.throwIfFailed();
        const { load } = gpuState;
        return tcbfOnGpu(
          gpuState.ctx.device,
          load.plan.resident,
          load.resident,
          load.dpSums,
          shape,
          flagged,
          request,
          ctrl.signal,
          onProgress,
        );
      }
      if (!frames) throw new StemflowError('invalid', 'The acquisition is not loaded yet.');
      return tcbfOnFrames(frames, shape, flagged, request, ctrl.signal, onProgress);
    },

    async cancelTcbf(): Promise<void> {
      tcbfController?.abort();
    },

    async close(): Promise<void> {
      controller?.abort();
      releaseLoaded();
      clearPools();
      await source?.close();
      source = null;
      flagged = null;
    },
  };
}

export type AcquisitionService = ReturnType<typeof createAcquisitionService>;
