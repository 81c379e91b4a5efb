/**
 * The memory plan of a GPU load, computed from metadata and the chunk index before anything is allocated
 * (docs/pass-graph.md): resident bytes (detector-major, exact source dtype), scratch slots, the small
 * result buffers, and the peak. A load that does not fit the device limits or the user's budget is refused
 * here with the numbers.
 */
import { StemflowError } from '../errors.ts';
import { DEFAULT_DECODE_VARIANT, decodeScratchBytes } from './passes/bslz4-decode-variants.ts';
import { type ElemSize, planResidentLayout, type ResidentLayout } from './resident-layout.ts';

export interface LoadPlanRequest {
  frames: number;
  detector: [number, number];
  elemSize: ElemSize;
  /** Stored (compressed) bytes of each frame's chunk, in scan order. */
  chunkSizes: ArrayLike<number>;
  limits: { maxBufferSize: number; maxStorageBufferBindingSize: number };
  /** The most GPU memory the load may use (default: unlimited beyond the device's own limits). */
  budgetBytes?: number;
  /** Frames per batch (a multiple of 64); default 4,096. */
  batchFrames?: number;
  /** Scratch slots in flight; default 3. */
  slots?: number;
  /** Tests: force several resident buffers. */
  pixelsPerBufferLimit?: number;
  /** uint16: scan positions per hot-bitmap segment (resident-layout.ts). */
  segmentFrames?: number;
  /** The decode pass's variant (default DEFAULT_DECODE_VARIANT): its global scratch is part of the scratch. */
  decodeVariant?: string;
}

export interface LoadPlan {
  frames: number;
  pixels: number;
  elemSize: ElemSize;
  batchFrames: number;
  batches: number;
  slots: number;
  resident: ResidentLayout;
  /** u32 words of one decoded frame in a slot: ceil(P * elemSize / 4). */
  wordsPerFrame: number;
  /** Largest batch's compressed bytes (rounded up to 4) and the slot buffers' sizes. */
  compressedSlotBytes: number;
  decodedSlotBytes: number;
  indexSlotBytes: number;
  /** The decode variant and its global scratch (one buffer shared by the slots; decodeScratchBytes). */
  decodeVariant: string;
  decodeScratchBytes: number;
  /** Whole-scan result buffers: errors (4 B/frame), frame totals (8 B/frame), DP sums (8 B/pixel), audit. */
  resultBytes: number;
  residentBytes: number;
  /** slots x (compressed + decoded + index) + the decode scratch. */
  scratchBytes: number;
  /** Mapped staging buffers the chunk bytes are read into ((slots + 1) x compressed slot; host-visible). */
  stagingBytes: number;
  peakBytes: number;
}

export const DEFAULT_BATCH_FRAMES = 4096;
export const DEFAULT_SLOTS = 3;
/** Audit counters: max, count > 255 (u64), 257-bin histogram (u64 each), rounded up. */
export const AUDIT_BYTES = 4096;

export function planGpuLoad(req: LoadPlanRequest): LoadPlan {
  const { frames, detector, elemSize, chunkSizes, limits } = req;
  const pixels = detector[0] * detector[1];
  if (chunkSizes.length !== frames) {
    throw new StemflowError(
      'invalid',
      `The chunk index lists ${chunkSizes.length} frames but the scan has ${frames}.`,
    );
  }
  const slots = req.slots ?? DEFAULT_SLOTS;
  const batchFrames = Math.min(req.batchFrames ?? DEFAULT_BATCH_FRAMES, roundUp(frames, 64));
  if (batchFrames % 64 !== 0 || batchFrames <= 0) {
    throw new StemflowError(
      'invalid',
      `Frames per batch must be a positive multiple of 64, not ${batchFrames}.`,
    );
  }
  const resident = planResidentLayout({
    frames,
    pixels,
    elemSize,
    maxBindingBytes: limits.maxStorageBufferBindingSize,
    maxBufferBytes: limits.maxBufferSize,
    pixelsPerBufferLimit: req.pixelsPerBufferLimit,
    segmentFrames: req.segmentFrames,
  });
  const batches = Math.ceil(frames / batchFrames);
  let largest = 0;
  for (let b = 0; b < batches; b++) {
    let sum = 0;
    const end = Math.min(frames, (b + 1) * batchFrames);
    for (let f = b * batchFrames; f < end; f++) sum += chunkSizes[f];
    largest = Math.max(largest, sum);
  }
  // Decoded frame rows padded to 16 bytes, so that the transpose always runs its 16-byte form (main_vec4: 595-699
  // GB/s of decoded uint16 on the H200, the scalar form 318): at most 12 bytes a frame.
  const wordsPerFrame = roundUp(Math.ceil((pixels * elemSize) / 4), 4);
  const compressedSlotBytes = roundUp(Math.max(largest, 4), 4);
  const decodedSlotBytes = batchFrames * wordsPerFrame * 4;
  const indexSlotBytes = batchFrames * 8;
  const resultBytes = roundUp(frames * 4, 4) + frames * 8 + pixels * 8 + AUDIT_BYTES;
  const residentBytes = resident.totalBytes;
  const decodeVariant = req.decodeVariant ?? DEFAULT_DECODE_VARIANT;
  const decodeScratch = decodeScratchBytes(decodeVariant, batchFrames);
  const scratchBytes = slots * (compressedSlotBytes + decodedSlotBytes + indexSlotBytes) + decodeScratch;
  const stagingBytes = (slots + 1) * compressedSlotBytes;
  const peakBytes = residentBytes + scratchBytes + resultBytes;
  const plan: LoadPlan = {
    frames,
    pixels,
    elemSize,
    batchFrames,
    batches,
    slots,
    resident,
    wordsPerFrame,
    compressedSlotBytes,
    decodedSlotBytes,
    indexSlotBytes,
    decodeVariant,
    decodeScratchBytes: decodeScratch,
    resultBytes,
    residentBytes,
    scratchBytes,
    stagingBytes,
    peakBytes,
  };
  for (const [what, bytes] of [
    ['One batch of compressed chunks', compressedSlotBytes],
    ['One batch of decoded frames', decodedSlotBytes],
    ['The decode scratch of one batch', decodeScratch],
  ] as const) {
    if (bytes > limits.maxStorageBufferBindingSize) {
      throw new StemflowError(
        'budget',
        `${what} needs ${formatBytes(bytes)}, more than this GPU binds at once (${formatBytes(limits.maxStorageBufferBindingSize)}); use fewer frames per batch`,
      );
    }
  }
  if (req.budgetBytes !== undefined && peakBytes > req.budgetBytes) {
    throw new StemflowError(
      'budget',
      `Loading needs ${formatBytes(peakBytes)} of GPU memory at peak (${formatBytes(residentBytes)} resident + ${formatBytes(scratchBytes)} scratch + ${formatBytes(resultBytes)} results), more than the budget of ${formatBytes(req.budgetBytes)}`,
    );
  }
  return plan;
}

/** Lines a user reads before a load starts. */
export function describePlan(plan: LoadPlan): string[] {
  const r = plan.resident;
  const rows = r.rowBufferBytes.reduce((a, b) => a + b, 0);
  return [
    r.form === 'planes'
      ? `resident ${formatBytes(plan.residentBytes)} = low plane ${formatBytes(rows)} + high plane ${formatBytes(rows)} (written only where nonzero) + hot bitmap ${formatBytes(r.hotBytes)} (${r.segments} segments of ${r.segmentFrames} positions per pixel), each plane in ${r.rowBuffers} buffer(s) of up to ${r.pixelsPerBuffer} pixels (detector-major, uint16 as byte planes, exact)`
      : `resident ${formatBytes(plan.residentBytes)} in ${r.rowBuffers} buffer(s) of up to ${r.pixelsPerBuffer} pixels (detector-major, uint${plan.elemSize * 8}, exact)`,
    `scratch ${formatBytes(plan.scratchBytes)}: ${plan.slots} slots x (${formatBytes(plan.compressedSlotBytes)} compressed + ${formatBytes(plan.decodedSlotBytes)} decoded + ${formatBytes(plan.indexSlotBytes)} index) + decode scratch ${formatBytes(plan.decodeScratchBytes)} (${plan.decodeVariant})`,
    `results ${formatBytes(plan.resultBytes)}; peak ${formatBytes(plan.peakBytes)} (${(plan.peakBytes / plan.residentBytes).toFixed(3)} x resident); host-visible staging ${formatBytes(plan.stagingBytes)}`,
    `${plan.batches} batches of ${plan.batchFrames} frames`,
    ...(r.form === 'planes' && r.high === 'full'
      ? [
          `with the high plane compacted after the load (compactHigh): resident ${formatBytes(rows + r.hotBytes + r.pixels * 4)} + the hot segments (${formatBytes(Math.min(r.segmentFrames, r.framesPadded))} each; counted after the load, at most ${formatBytes(rows)}); while compacting (scratch freed) at most ${formatBytes(plan.residentBytes + Math.max(...r.rowBufferBytes) + r.pixels * 4)}`,
        ]
      : []),
  ];
}

export function formatBytes(n: number): string {
  if (n >= 1024 ** 3) return `${(n / 1024 ** 3).toFixed(2)} GiB`;
  if (n >= 1024 ** 2) return `${(n / 1024 ** 2).toFixed(1)} MiB`;
  if (n >= 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${n} B`;
}

function roundUp(n: number, m: number): number {
  return Math.ceil(n / m) * m;
}
