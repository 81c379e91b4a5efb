/** Options, progress, timings and result of the GPU load (gpu-load.ts). */
import type { GpuTimer } from '../gpu/gpu-timer.ts';
import type { LoadPlan } from '../gpu/load-plan.ts';
import type { TransposeLoads } from '../gpu/passes/detector-transpose.ts';
import type { ResidentPool } from '../gpu/resident-pool.ts';
import type { StagingPool } from '../gpu/staging-pool';
import type { DecodeAudit } from '../kernels/bslz4-decode.ts';

export type LoadStage = 'plan' | 'read' | 'upload' | 'decode' | 'finish';

export interface GpuLoadProgress {
  stage: LoadStage;
  framesDone: number;
  frameCount: number;
  bytesRead: number;
  bytesTotal: number;
}

export interface GpuLoadOptions {
  batchFrames?: number;
  slots?: number;
  budgetBytes?: number;
  signal?: AbortSignal;
  onProgress?: (p: GpuLoadProgress) => void;
  /** Called once with the plan, before any allocation; throw to refuse. */
  onPlan?: (plan: LoadPlan, lines: string[]) => void;
  /** Tests: force several resident buffers. */
  pixelsPerBufferLimit?: number;
  /** uint16: scan positions per hot-bitmap segment (resident-layout.ts; default 4,096). */
  segmentFrames?: number;
  /** Resident rows in tiles of the batch ('batch', default) or whole ('untiled'); load-plan.ts. */
  rowTiles?: 'batch' | 'untiled';
  /**
   * uint16: after the load, copy the high byte plane's hot segments into compact buffers and free the full
   * plane (gpu/resident-compact.ts): resident memory ~halves; `plan.resident` is then the compact layout.
   */
  compactHigh?: boolean;
  /** uint16: the high byte plane in slot pools ('slots', default) or full rows ('full'); load-plan.ts. */
  highPlane?: 'slots' | 'full';
  /** 'slots': the pools' first capacity as a share of all (pixel, segment) pairs (default 1/16). */
  poolShare?: number;
  /** The decode variant (bslz4-decode-variants.ts; default DEFAULT_DECODE_VARIANT). */
  decodeVariant?: string;
  /** Parse batch k + 1 while batch k decodes (load-plan.ts; default: on for list variants where it fits). */
  parseAhead?: boolean;
  /**
   * Parsing ahead: copy batch k + 2's chunks into their set after batch k's decode dispatch instead of before it,
   * so that the copy may run beside batch k's transpose (load-plan.ts; default off). Twenty-seventh session, an
   * H100 whose host kept up: the passes' time the same (the copy does not run beside the transpose on NVIDIA's
   * Vulkan driver), ~3 ms less idle gap a scan, the same end to end (docs/performance.md).
   */
  copyAhead?: boolean;
  /**
   * The decoded slot's form: 'packed' (the source dtype, frame by frame) or 'planes' (uint16 into byte-plane rows:
   * two byte planes a frame, src/kernels/decoded-planes.ts; the decode stores the high bytes only where nonzero and
   * the transpose reads the low plane and only the high bytes of spans that hold one, half the bytes). 'planes'
   * applies with the histogram in the decode and 16-byte transpose loads; elsewhere the load takes 'packed'.
   * Default 'planes' since the twenty-ninth session (H100: decode + transpose 2.3 ms a scan less than 'packed').
   */
  decoded?: 'packed' | 'planes';
  /** How the transpose moves its tiles: scalar, batched, vec4 (detector-transpose.ts; default 'vec4'). */
  transposeLoads?: TransposeLoads;
  /**
   * Which pass counts the audit histogram's bins 1..255: 'decode' (the default: the decode counts every bin, values
   * 1..3 without atomics, by popcounts of the bit planes in its `ba` path) or 'transpose' (the decode counts bins 0
   * and 256; it needs a GPU that gives the transpose 17 KiB of workgroup memory). The same numbers. Twenty-fifth
   * session, two calls on an H100: decode + transpose 106.9-107.1 ms a scan with 'decode' (92.5-92.7 + 14.4) against
   * 107.0-107.5 with 'transpose' (86.4-86.9 + 20.5-20.6): the same time, and with 'decode' the transpose stays in
   * the 16 KiB of workgroup memory every device offers. The decode's bins cost 16.5 ms on the H200 before values
   * 1..3 were counted without atomics (docs/performance.md, twenty-fifth and twenty-third sessions).
   */
  histogramIn?: 'decode' | 'transpose';
  /**
   * Benchmarks: GPU timestamps per batch, marks 'copy' (before the slot upload copy), 'decode', 'transpose'
   * 'place' (a slotted high plane: before its place pass) and 'gap' (after the last pass, until the next batch's
   * copy starts). Needs 4 marks per batch, 5 with a slotted high plane.
   */
  timer?: GpuTimer;
  /**
   * Reuse resident buffers kept from earlier loads, and return this load's to the pool on release() (a
   * failed load destroys them). Without a pool, release() frees everything.
   */
  pool?: ResidentPool;
  /**
   * Take the chunk staging ring from this pool, and give it back mapped at the end (staging-pool.ts): a later
   * load makes none (~0.23 ms a MB on the H200, on the thread that drives Dawn). A failed load destroys it.
   */
  staging?: StagingPool;
}

export interface GpuLoadTimings {
  /** Everything before the first batch: the parts below plus writing the pixel flags. */
  prepareMs: number;
  /** Chunk sizes from the index, the plan, the block-size check. */
  indexMs: number;
  /** Creating every buffer (resident, slots, staging, results), the out-of-memory check, the flags upload. */
  allocateMs: number;
  /** Of allocateMs: creating the resident buffers, and waiting for the out-of-memory error scope. */
  residentAllocMs: number;
  /** Resident buffers taken from the pool instead of created (0 without a pool). */
  residentReused: number;
  scopeWaitMs: number;
  /** Compute pipelines (compiled once per device and element size, then cached). */
  pipelinesMs: number;
  /** Host time waiting for chunk reads into mapped staging memory (the part not hidden behind GPU work). */
  readWaitMs: number;
  /** Host time unmapping staging buffers and writing the small per-batch index. */
  uploadMs: number;
  /** Host time encoding and submitting passes. */
  submitMs: number;
  /** Host time blocked on a busy slot (back-pressure) and on the last batch. */
  gpuWaitMs: number;
  readbackMs: number;
  /** Compacting the high byte plane (`compactHigh`), 0 without. */
  compactMs: number;
  /** A slotted high plane: pools grown during the load (each a wait for one batch and a rerun of its place pass). */
  poolGrowths: number;
  totalMs: number;
  /**
   * With a `timer` only: per batch, host times since the first submission (ms): the slot came free, the read
   * was ready, the batch was submitted. Set beside the GPU marks, they show who waits for whom.
   */
  batchHostMs?: [slotFree: number, readReady: number, submitted: number][];
}

export interface GpuLoad {
  readonly plan: LoadPlan;
  readonly resident: readonly GPUBuffer[];
  /** u32 per pixel, nonzero = flagged (the pixel mask). */
  readonly flags: GPUBuffer;
  /** The same flags on the host (1 = flagged): the pixels the frame totals and the audit leave out. */
  readonly flagged: Uint8Array;
  readonly audit: DecodeAudit;
  /** Sum of unflagged counts per frame. */
  readonly frameTotals: BigUint64Array;
  /** Sum over all frames per detector pixel (flagged pixels included; callers exclude them). */
  readonly dpSums: BigUint64Array;
  /**
   * uint16 ('planes'): the hot bitmap as the transpose left it (bit g of word p x hotWordsPerPixel + g / 32:
   * pixel p holds a value above 255 in segment g), for the bytes a mask reads (`residentReads`); else null.
   */
  readonly hotBitmap: Uint32Array | null;
  readonly timings: GpuLoadTimings;
  /** Frees every GPU buffer of the load. Later use fails. */
  release(): void;
}
