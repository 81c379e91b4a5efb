/**
 * Options and timings of the GPU verifier (gpu-verify.ts), and its default number of staging slots.
 */
import type { StagingPool } from '../gpu/staging-pool';
import type { GpuVerifyPlan } from './gpu-verify-plan';
import type { VerifyReport } from './verify';

/** A GPU verification's report: the counts, and its timings, source errors, plan and decode variant. */
export type GpuVerifyReport = VerifyReport & {
  timings: GpuVerifyTimings;
  sourceErrors: number;
  plan: GpuVerifyPlan;
  decodeVariant: string;
};

/**
 * Pieces staged at once by default: two, for pieces of VERIFY_PIECE_FRAMES (see there), so that one piece is
 * read while the other's host work is done. (With whole 16,384-frame records as pieces one slot was better:
 * a second slot's 0.26 GiB of mapped staging took ~75 ms to create and the records came no faster.)
 */
export const VERIFY_SLOTS = 2;

export interface GpuVerifyTimings {
  /** Reading the stored chunks and the lanes into mapped staging (summed over pieces; overlapped). */
  readMs: number;
  /** Pieces waiting for their staging slot to be mapped again before being read (summed; overlapped). */
  stagingWaitMs: number;
  /** Host: a piece's small uploads (chunk index, lane offsets, tables); unmapping its staging. */
  uploadMs: number;
  unmapMs: number;
  /** The submission loop waiting for a piece's staging to be read, and for the final readback. */
  gpuWaitMs: number;
  /** Planning and creating buffers and passes. */
  setupMs: number;
  /**
   * Of the set-up: planning and the decode pass (its pipeline made here), the mapped staging buffers, the GPU
   * buffers (with their error scope), the wait for the compare pipeline. Of the first: the pieces (with the
   * source's stored sizes).
   */
  setupPrepareMs: number;
  setupPiecesMs: number;
  setupStagingMs: number;
  setupBuffersMs: number;
  setupPipelineMs: number;
  totalMs: number;
  /**
   * Profile mode only (each step waited for), summed over pieces: staging copies with the small uploads,
   * decode, compare.
   */
  copyMs: number;
  decodeMs: number;
  compareMs: number;
  /**
   * Per piece, ms after the start: its slot mapped again (ready), its reads begun and ended, its passes
   * submitted.
   */
  pieces: { ready: number; readStart: number; readEnd: number; submitted: number }[];
}

export interface GpuVerifyOptions {
  signal?: AbortSignal;
  onProgress?: (framesDone: number, frameCount: number) => void;
  /** Pieces staged at once (default VERIFY_SLOTS). */
  slots?: number;
  /** Frames verified at once, rounded down to whole mismatch blocks (default VERIFY_PIECE_FRAMES). */
  pieceFrames?: number;
  /** Copies of the next piece overlap the decode and compare of this one (two input sets; default true). */
  overlap?: boolean;
  /** Wait after each pass so copies, decode and compare are timed apart (slower; default false). */
  profile?: boolean;
  /** Lanes per compare dispatch (default COMPARE_LANES_PER_DISPATCH; a multiple of 64). */
  compareLanes?: number;
  /** GPU bytes the verifier may allocate (optional): a plan above it is refused with its numbers. */
  budgetBytes?: number;
  /**
   * Mapped staging kept between verifications (src/gpu/staging-pool.ts): the slots are taken from it and given
   * back at the end, mapped. Without it the slots are created and destroyed.
   */
  staging?: StagingPool;
  /**
   * The source decode's variant (bslz4-decode-variants.ts; default DEFAULT_DECODE_VARIANT, which every device
   * runs). The load's list variant is exact here too, and with pieces of 4,096 frames no faster.
   */
  decodeVariant?: string;
}

/** Zeroed timings for `pieces` pieces, with the time the pieces took to plan. */
export function newTimings(pieces: number, setupPiecesMs: number): GpuVerifyTimings {
  return {
    readMs: 0,
    stagingWaitMs: 0,
    uploadMs: 0,
    unmapMs: 0,
    gpuWaitMs: 0,
    setupMs: 0,
    setupPrepareMs: 0,
    setupPiecesMs,
    setupStagingMs: 0,
    setupBuffersMs: 0,
    setupPipelineMs: 0,
    totalMs: 0,
    copyMs: 0,
    decodeMs: 0,
    compareMs: 0,
    pieces: Array.from({ length: pieces }, () => ({ ready: 0, readStart: 0, readEnd: 0, submitted: 0 })),
  };
}
