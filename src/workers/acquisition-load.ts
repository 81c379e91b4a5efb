/**
 * The two load paths of the acquisition service (acquisition-service.ts): the CPU path decodes every frame into
 * worker memory; the GPU path keeps exact resident counts on the device and makes the products there.
 */
import { type GpuLoad, loadToGpu } from '../compute/gpu-load';
import { createVirtualImager, type VirtualImager } from '../compute/gpu-products';
import { createMaskSession, type MaskSession } from '../compute/mask-session';
import { StemflowError, throwIfAborted } from '../errors';
import type { GpuContext } from '../gpu/device';
import type { ResidentPool } from '../gpu/resident-pool';
import type { StagingPool } from '../gpu/staging-pool';
import { FrameStats } from '../products/frame-stats';
import { type AcquisitionSource, viewAs } from '../source/acquisition-source';
import { classifyFile } from '../source/classify';
import type { InputFile } from '../source/input-file';
import type { AcquisitionSummary, LoadProgress } from './acquisition-api';

const BATCH_FRAMES = 256;

export interface GpuState {
  ctx: GpuContext;
  load: GpuLoad;
  imager: VirtualImager;
  /** Live updates: each new mask reads only the pixels that changed since the previous one. */
  session: MaskSession;
}

export interface GpuLoadInputs {
  /** When the load began (elapsedMs counts from here, device acquisition included). */
  t0: number;
  pool: ResidentPool;
  /** The chunk staging ring kept between loads. */
  staging: StagingPool;
  /** GPU memory the load may use (undefined: the device's own limits). */
  budgetBytes: number | undefined;
  batchFrames: number | undefined;
  flagged: Uint8Array | null;
}

/** The candidate datasets of a single file, when it holds several (metadata only; none on failure). */
export async function otherDatasets(summary: AcquisitionSummary, inputs: InputFile[]) {
  if (summary.kind !== 'single' || inputs.length !== 1) return {};
  const role = await classifyFile(inputs[0]).catch(() => null);
  if (role?.kind !== 'single' || role.candidates.length < 2) return {};
  return { datasets: role.candidates.map(({ path, shape, dtype }) => ({ path, shape, dtype })) };
}

/** CPU path: every frame decoded into worker memory (refused above `budgetBytes`), with the frame statistics. */
export async function loadCpu(
  src: AcquisitionSource,
  { budgetBytes, flagged }: { budgetBytes: number; flagged: Uint8Array | null },
  signal: AbortSignal,
  onProgress?: (p: LoadProgress) => void,
) {
  const t0 = performance.now();
  const total = src.frameCount * src.frameBytes;
  if (total > budgetBytes) {
    const mib = (n: number) => `${(n / 1024 ** 2).toFixed(2)} MiB`;
    throw new StemflowError(
      'budget',
      `This acquisition holds ${mib(total)} of counts, more than the ${mib(budgetBytes)} the CPU path may keep in memory`,
    );
  }
  const { dtype, detector } = src.summary;
  const pixels = detector[0] * detector[1];
  const bytes = new Uint8Array(total);
  const stats = new FrameStats(src.frameCount, pixels, flagged);
  for (let first = 0; first < src.frameCount; first += BATCH_FRAMES) {
    throwIfAborted(signal);
    const count = Math.min(BATCH_FRAMES, src.frameCount - first);
    const batch = await src.readFrames(first, count, signal);
    bytes.set(batch, first * src.frameBytes);
    stats.add(first, viewAs(batch, dtype), pixels);
    onProgress?.({ framesDone: first + count, frameCount: src.frameCount, stage: 'decode' });
  }
  return {
    frames: viewAs(bytes, dtype),
    result: {
      sumDiffraction: stats.sumDiffraction,
      frameTotals: stats.frameTotals,
      maxCount: stats.maxCount,
      countAbove255: stats.countAbove255,
      elapsedMs: performance.now() - t0,
      backend: 'cpu' as const,
    },
  };
}

/** GPU path: the resident counts on `ctx`'s device, the virtual imager and mask session over them. */
export async function loadGpu(
  ctx: GpuContext,
  src: AcquisitionSource,
  { t0, pool, staging, budgetBytes, batchFrames, flagged }: GpuLoadInputs,
  signal: AbortSignal,
  onProgress?: (p: LoadProgress) => void,
) {
  let memory: string[] = [];
  const load = await loadToGpu(ctx, src, {
    signal,
    pool,
    staging,
    budgetBytes,
    batchFrames,
    onPlan: (_plan, lines) => {
      memory = lines;
    },
    onProgress: (p) =>
      onProgress?.({
        framesDone: p.framesDone,
        frameCount: p.frameCount,
        stage: p.stage,
        bytesDone: p.bytesRead,
        bytesTotal: p.bytesTotal,
      }),
  });
  const pixels = load.dpSums.length;
  const sumDiffraction = new Float64Array(pixels);
  for (let p = 0; p < pixels; p++) sumDiffraction[p] = flagged?.[p] ? 0 : Number(load.dpSums[p]);
  const imager = createVirtualImager(ctx, load, flagged);
  const state: GpuState = { ctx, load, imager, session: createMaskSession(imager, flagged) };
  return {
    state,
    result: {
      sumDiffraction,
      frameTotals: Float64Array.from(load.frameTotals, Number),
      maxCount: load.audit.maxValue,
      countAbove255: Number(load.audit.countAbove255),
      elapsedMs: performance.now() - t0,
      backend: 'webgpu' as const,
      memory,
      residentBytes: load.plan.residentBytes,
      peakBytes: load.plan.peakBytes,
      residentReused: load.timings.residentReused,
      adapter: [ctx.adapter.vendor, ctx.adapter.architecture, ctx.adapter.description]
        .filter(Boolean)
        .join(' '),
    },
  };
}
