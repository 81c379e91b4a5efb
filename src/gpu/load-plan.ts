/**
 * The memory plan of a GPU load, computed from metadata and the chunk index before anything is allocated
 * (docs/pass-graph.md): resident bytes (detector-major, exact source dtype), scratch slots, the small
 * result buffers, and the peak. A load that does not fit the device limits or the user's budget is refused
 * here with the numbers.
 */
import { StemflowError } from '../errors.ts';
import { decodedPlanesLayout } from '../kernels/decoded-planes.ts';
import { decodeListBytes, decodeScratchBytes } from './passes/bslz4-decode-memory.ts';
import {
  checkDecodeStorageBuffers,
  loadDecodeVariant,
  parseDecodeVariant,
} from './passes/bslz4-decode-variants.ts';
import {
  batchHotWordsPerPixel,
  DEFAULT_SEGMENT_FRAMES,
  type ElemSize,
  highScratchWordsPerPixel,
  maxPoolSlots,
  planResidentLayout,
  type ResidentLayout,
  slotTableBytes,
  slottedResidentLayout,
} from './resident-layout.ts';

export interface LoadPlanRequest {
  frames: number;
  detector: [number, number];
  elemSize: ElemSize;
  /** Stored (compressed) bytes of each frame's chunk, in scan order. */
  chunkSizes: ArrayLike<number>;
  limits: {
    maxBufferSize: number;
    maxStorageBufferBindingSize: number;
    /** Picks the decode variant (loadDecodeVariant); default 8, what every device offers. */
    maxStorageBuffersPerShaderStage?: number;
  };
  /** Whether the device has the `subgroups` feature (loadDecodeVariant's `qx`); default false. */
  subgroups?: boolean;
  /** The most GPU memory the load may use (default: unlimited beyond the device's own limits). */
  budgetBytes?: number;
  /** Frames per batch (a multiple of 64); default DEFAULT_BATCH_FRAMES (8,192). */
  batchFrames?: number;
  /** Scratch slots in flight; default 3. */
  slots?: number;
  /** Tests: force several resident buffers. */
  pixelsPerBufferLimit?: number;
  /** uint16: scan positions per hot-bitmap segment (resident-layout.ts). */
  segmentFrames?: number;
  /** The decode pass's variant (default DEFAULT_DECODE_VARIANT): its global scratch is part of the scratch. */
  decodeVariant?: string;
  /**
   * uint16: the high byte plane 'slots' (default: slot pools that the load fills as segments turn hot, which
   * grow when the data needs more; resident-layout.ts) or 'full' (rows like the low plane).
   */
  highPlane?: 'slots' | 'full';
  /** 'slots': each pool's first capacity as a share of the most it can need (default DEFAULT_POOL_SHARE). */
  poolShare?: number;
  /**
   * A list decode variant: parse batch k + 1 while batch k decodes (a second set of compressed, index and list
   * buffers). Default: on for list variants, unless only the plan without it fits the budget.
   */
  parseAhead?: boolean;
  /**
   * With parseAhead: batch k + 2's chunks are copied into their set after batch k's decode dispatch, beside batch
   * k's transpose, instead of before the dispatch (a third set of index entries, 8 bytes a frame). Default off.
   */
  copyAhead?: boolean;
  /**
   * uint16 into byte-plane rows, a multi decode variant: the decoded slot as two byte planes a frame
   * (src/kernels/decoded-planes.ts), so the transpose reads the low bytes and only the marked spans' high bytes.
   * Default off.
   */
  decodedPlanes?: boolean;
  /**
   * The resident rows' tiles (resident-layout.ts): 'batch' (default) tiles each row by the batch (the least
   * common multiple of batchFrames and, uint16, the hot segment), so each batch's transpose writes one contiguous
   * region of every row buffer; 'untiled' keeps each pixel's whole scan image contiguous.
   */
  rowTiles?: 'batch' | 'untiled';
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
  /**
   * Largest batch's compressed bytes (rounded up to 4) and the batch buffers' sizes (one set shared by the
   * slots; the host's staging holds one compressed batch per slot and one more).
   */
  compressedSlotBytes: number;
  decodedSlotBytes: number;
  indexSlotBytes: number;
  /**
   * The decode variant and its global scratch (one buffer shared by the slots; decodeScratchBytes; with
   * parseAhead, a second list set).
   */
  decodeVariant: string;
  decodeScratchBytes: number;
  /**
   * The parse of batch k + 1 runs on the GPU beside the decode of batch k: two sets of compressed, index and list
   * buffers, used by alternate batches.
   */
  parseAhead: boolean;
  /**
   * With parseAhead: each batch's dispatch is followed by the copy of batch k + 2's chunks (the load's copies
   * then run beside the transposes rather than between passes); the index has indexSets sets (3, else sets).
   */
  copyAhead: boolean;
  /** The decoded slot holds byte planes (LoadRequest.decodedPlanes where it applies); wordsPerFrame is theirs. */
  decodedPlanes: boolean;
  indexSets: number;
  /**
   * A slotted high plane: u32 words per pixel row of a batch's high scratch (one scratch per slot, one buffer
   * per row buffer), and the most slots each pool may grow to (all segments of its pixels, within one binding);
   * 0 and [] otherwise.
   */
  highScratchWordsPerPixel: number;
  highScratchSlotBytes: number;
  maxPoolSlots: number[];
  /** Whole-scan result buffers: errors (4 B/frame), frame totals (8 B/frame), DP sums (8 B/pixel), audit. */
  resultBytes: number;
  residentBytes: number;
  /** compressed x sets + index x indexSets + decoded + slots x high scratch + the decode scratch. */
  scratchBytes: number;
  /** Mapped staging buffers the chunk bytes are read into ((slots + 1) x compressed slot; host-visible). */
  stagingBytes: number;
  peakBytes: number;
  /** The budget the plan was checked against (a growing high-byte pool is checked against it too). */
  budgetBytes?: number;
}

/**
 * Frames per batch (and per decode dispatch). Fourteenth session, H200: 8,192 against 4,096 cut the GPU work of a
 * full scan from 171 to 142 ms (decode 124 -> 110 with the list variant, transpose 31 -> 23, copies 14 -> 7).
 */
export const DEFAULT_BATCH_FRAMES = 8192;
/**
 * A slotted high plane's first pool capacity: 1/16 of all (pixel, segment) pairs, e.g. a bright-field disk of
 * 6 % of the detector's pixels hot in every segment; a pool that fills up doubles (gpu-load-high.ts).
 */
export const DEFAULT_POOL_SHARE = 1 / 16;
export const DEFAULT_SLOTS = 3;
/** Audit counters: max, count > 255 (u64), 257-bin histogram (u64 each), rounded up. */
export const AUDIT_BYTES = 4096;

export function planGpuLoad(req: LoadPlanRequest): LoadPlan {
  if (req.parseAhead === undefined && req.budgetBytes !== undefined) {
    // Parsing ahead costs a second set of batch inputs: without it, a load that fits only that way.
    try {
      return planWith(req, true);
    } catch (e) {
      if (!(e instanceof StemflowError && e.kind === 'budget')) throw e;
      return planWith(req, false);
    }
  }
  return planWith(req, req.parseAhead ?? true);
}

function planWith(req: LoadPlanRequest, parseAheadWanted: boolean): LoadPlan {
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
  const segmentFrames = req.segmentFrames ?? DEFAULT_SEGMENT_FRAMES;
  const tileFrames =
    (req.rowTiles ?? 'batch') === 'untiled'
      ? undefined
      : elemSize === 2
        ? lcm(batchFrames, segmentFrames)
        : batchFrames;
  const fullResident = planResidentLayout({
    frames,
    pixels,
    elemSize,
    maxBindingBytes: limits.maxStorageBufferBindingSize,
    maxBufferBytes: limits.maxBufferSize,
    pixelsPerBufferLimit: req.pixelsPerBufferLimit,
    segmentFrames: req.segmentFrames,
    tileFrames,
  });
  const slotted = fullResident.form === 'planes' && (req.highPlane ?? 'slots') === 'slots';
  const poolShare = req.poolShare ?? DEFAULT_POOL_SHARE;
  if (!(poolShare > 0 && poolShare <= 1)) {
    throw new StemflowError('invalid', `The first pool share must be in (0, 1], not ${poolShare}.`);
  }
  const slotFrames = Math.min(fullResident.segmentFrames, fullResident.framesPadded);
  const bindLimit = Math.min(limits.maxStorageBufferBindingSize, limits.maxBufferSize);
  const poolMax = slotted
    ? Array.from({ length: fullResident.rowBuffers }, (_, b) =>
        Math.min(maxPoolSlots(fullResident, b), Math.floor(bindLimit / slotFrames)),
      )
    : [];
  if (slotted && slotTableBytes(fullResident) > bindLimit) {
    throw new StemflowError(
      'budget',
      `The high bytes' slot table needs ${formatBytes(slotTableBytes(fullResident))}, more than this GPU binds at once (${formatBytes(bindLimit)}); use longer segments or the full high plane`,
    );
  }
  const resident = slotted
    ? slottedResidentLayout(
        fullResident,
        poolMax.map((m) => Math.max(1, Math.ceil(m * poolShare))),
      )
    : fullResident;
  const batches = Math.ceil(frames / batchFrames);
  let largest = 0;
  for (let b = 0; b < batches; b++) {
    let sum = 0;
    const end = Math.min(frames, (b + 1) * batchFrames);
    for (let f = b * batchFrames; f < end; f++) sum += chunkSizes[f];
    largest = Math.max(largest, sum);
  }
  const storageBuffers = limits.maxStorageBuffersPerShaderStage;
  const decodeVariant = req.decodeVariant ?? loadDecodeVariant(storageBuffers, req.subgroups);
  checkDecodeStorageBuffers(decodeVariant, storageBuffers);
  // One decode dispatch a batch (gpu-load.ts), and with parseAhead a second list set.
  const variant = parseDecodeVariant(decodeVariant);
  const decodedPlanes =
    (req.decodedPlanes ?? false) &&
    elemSize === 2 &&
    fullResident.form === 'planes' &&
    variant.shader === 'multi';
  // Decoded frame rows padded to 16 bytes, so that the transpose always runs its 16-byte form (main_vec4: 595-699
  // GB/s of decoded uint16 on the H200, the scalar form 318): at most 12 bytes a frame. Byte planes: two planes of
  // 16-byte rows and a 16-byte span mark.
  const wordsPerFrame = decodedPlanes
    ? decodedPlanesLayout(pixels).wordsPerFrame
    : roundUp(Math.ceil((pixels * elemSize) / 4), 4);
  const compressedSlotBytes = roundUp(Math.max(largest, 4), 4);
  const decodedSlotBytes = batchFrames * wordsPerFrame * 4;
  const indexSlotBytes = batchFrames * 8;
  const resultBytes = roundUp(frames * 4, 4) + frames * 8 + pixels * 8 + AUDIT_BYTES;
  const residentBytes = resident.totalBytes;
  // Parsing ahead binds two batches' chunks and lists at once: only where they fit one binding.
  const listBytes = decodeListBytes(variant, batchFrames, pixels, elemSize);
  const parseAhead =
    parseAheadWanted &&
    variant.list &&
    variant.listRead !== 'none' &&
    batches > 1 &&
    2 * compressedSlotBytes <= limits.maxStorageBufferBindingSize &&
    2 * listBytes <= limits.maxStorageBufferBindingSize;
  const sets = parseAhead ? 2 : 1;
  const copyAhead = parseAhead && (req.copyAhead ?? false) && batches > 2;
  const indexSets = copyAhead ? 3 : sets;
  const decodeScratch =
    decodeScratchBytes(variant, batchFrames, { pixels, elemSize, maxFramesPerDispatch: batchFrames }) +
    (sets - 1) * listBytes;
  const scratchWords = slotted ? highScratchWordsPerPixel(resident, batchFrames) : 0;
  // One scratch a slot: every pixel's row of the batch's high bytes and its own hot bits, plus the pools' small
  // state and its readback.
  const highScratchSlotBytes = slotted
    ? pixels * (scratchWords + batchHotWordsPerPixel(resident, batchFrames)) * 4 + 16 * resident.rowBuffers
    : 0;
  // The batch buffers are shared by the slots (the GPU runs batches in queue order); the high scratch is not (a
  // batch's place pass may run again once the host has read its pools' state).
  const scratchBytes =
    sets * compressedSlotBytes +
    indexSets * indexSlotBytes +
    decodedSlotBytes +
    slots * highScratchSlotBytes +
    decodeScratch;
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
    parseAhead,
    copyAhead,
    decodedPlanes,
    indexSets,
    highScratchWordsPerPixel: scratchWords,
    highScratchSlotBytes,
    maxPoolSlots: poolMax,
    resultBytes,
    residentBytes,
    scratchBytes,
    stagingBytes,
    peakBytes,
    budgetBytes: req.budgetBytes,
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
  const pools = r.bufferBytes.slice(r.rowBuffers, 2 * r.rowBuffers).reduce((a, b) => a + b, 0);
  const poolsMax = plan.maxPoolSlots.reduce((a, b) => a + b, 0) * r.slotFrames;
  return [
    r.form === 'planes' && r.high === 'slots'
      ? `resident ${formatBytes(plan.residentBytes)} = low plane ${formatBytes(rows)} + high bytes in slot pools ${formatBytes(pools)} (${r.hotSlots.reduce((a, b) => a + b, 0)} slots of ${r.slotFrames} positions; they grow while loading if more segments hold counts above 255, to at most ${formatBytes(poolsMax)}) + hot bitmap ${formatBytes(r.hotBytes)} + slot table ${formatBytes(slotTableBytes(r))} (${r.segments} segments of ${r.segmentFrames} positions per pixel), the low plane in ${r.rowBuffers} buffer(s) of up to ${r.pixelsPerBuffer} pixels (detector-major, uint16 as byte planes, exact)`
      : r.form === 'planes'
        ? `resident ${formatBytes(plan.residentBytes)} = low plane ${formatBytes(rows)} + high plane ${formatBytes(rows)} (written only where nonzero) + hot bitmap ${formatBytes(r.hotBytes)} (${r.segments} segments of ${r.segmentFrames} positions per pixel), each plane in ${r.rowBuffers} buffer(s) of up to ${r.pixelsPerBuffer} pixels (detector-major, uint16 as byte planes, exact)`
        : `resident ${formatBytes(plan.residentBytes)} in ${r.rowBuffers} buffer(s) of up to ${r.pixelsPerBuffer} pixels (detector-major, uint${plan.elemSize * 8}, exact)`,
    `scratch ${formatBytes(plan.scratchBytes)}: ${plan.parseAhead ? '2 x ' : ''}a batch's ${formatBytes(plan.compressedSlotBytes)} compressed${plan.parseAhead ? ' (the next batch parsed while one decodes)' : ''} + ${formatBytes(plan.decodedSlotBytes)} decoded${plan.decodedPlanes ? ' (byte planes)' : ''} + ${plan.indexSets > 1 ? `${plan.indexSets} x ` : ''}${formatBytes(plan.indexSlotBytes)} index${plan.highScratchSlotBytes ? ` + ${plan.slots} slots x ${formatBytes(plan.highScratchSlotBytes)} high scratch` : ''} + decode scratch ${formatBytes(plan.decodeScratchBytes)} (${plan.decodeVariant})`,
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

function lcm(a: number, b: number): number {
  let x = a;
  let y = b;
  while (y !== 0) [x, y] = [y, x % y];
  return (a / x) * b;
}
