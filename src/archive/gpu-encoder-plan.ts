/**
 * Memory plan of the GPU archive encoder (gpu-encoder.ts): every buffer of one record slot, sized before anything
 * is allocated, and refused ('budget', with the numbers) when the device's limits cannot hold it.
 */
import { StemflowError } from '../errors';
import { decodeScratchBytes } from '../gpu/passes/bslz4-decode-memory';
import { DEFAULT_DECODE_VARIANT } from '../gpu/passes/bslz4-decode-variants';
import { AUDIT_LAYOUT, type ElemSize } from '../kernels/bslz4-decode';
import type { AcquisitionSource } from '../source/acquisition-source';
import { laneStride } from './gpu-tans-passes';
import { NEIGHBOUR_BUCKETS, tokenCount } from './hybrid-uint';
import { type ArchiveDtype, DTYPE_BITS, type LaneGeometry, rawLaneWords } from './lanes';

export interface GpuEncoderPlanInput {
  frames: number;
  dtype: ArchiveDtype;
  geometry: LaneGeometry;
  /** Detector columns (neighbour contexts). */
  cols: number;
  classes: number;
  tableLog: number;
  /** Largest stored (compressed) bytes of one record. */
  maxStoredBytes: number;
  slots: number;
  /**
   * Extra output readbacks the encoder may lend to the converter (mapped in place, written without a host
   * copy, given back once written; default 0).
   */
  lendReadbacks?: number;
  /** GPU bytes the encoder may allocate in all (optional): a plan above it is refused with its numbers. */
  budgetBytes?: number;
  limits: { maxBufferSize: number; maxStorageBufferBindingSize: number };
  /** The decode pass's variant (default DEFAULT_DECODE_VARIANT). */
  decodeVariant?: string;
}

export interface GpuEncoderPlan extends GpuEncoderPlanInput {
  lendReadbacks: number;
  wordsPerFrame: number;
  lanes: number;
  laneStride: number;
  tokens: number;
  /**
   * Buffers of one slot: label, bytes (the most it may need), whether bound as storage (else a mappable
   * staging buffer), and whether it is created when first needed (the output readback, at the size then
   * needed: a record's data words are a fraction of the worst case, and a mapped buffer is cleared in full on
   * first use; the record output, only for a record whose words exceed the decoded buffer).
   */
  buffers: { label: string; bytes: number; bound: boolean; lazy?: boolean }[];
  slotBytes: number;
  /**
   * Buffers one for all the slots: the lane scratch, which a record uses only from its lane encoding to its
   * compaction (submitted in turn, so one queue orders them: gpu-encoder-record.ts).
   */
  shared: { label: string; bytes: number; bound: boolean }[];
  sharedBytes: number;
  decodeVariant: string;
  /** The decode pass's global scratch for a record (one buffer shared by the slots; decodeScratchBytes). */
  decodeScratchBytes: number;
  /** Bytes of one lent output readback at most (created when first lent, at the size then needed). */
  lendBytes: number;
  /** slots x slotBytes + sharedBytes + decodeScratchBytes + lendReadbacks x lendBytes. */
  totalBytes: number;
}

export const align4 = (n: number) => Math.ceil(Math.max(4, n) / 4) * 4;

/** Sizes every buffer of the encoder; refuses ('budget') what the device's limits cannot hold. */
export function planGpuEncoder(input: GpuEncoderPlanInput): GpuEncoderPlan {
  const { frames, dtype, geometry: g, classes, tableLog, maxStoredBytes, slots, limits } = input;
  const bits = DTYPE_BITS[dtype];
  const pixels = g.pixels;
  const wordsPerFrame = Math.ceil((pixels * bits) / 32);
  const lanes = frames * g.slices;
  const stride = laneStride(rawLaneWords(g.slicePixels, dtype));
  const tokens = tokenCount(bits);
  const L = 1 << tableLog;
  if (frames * pixels >= 2 ** 32) {
    throw new StemflowError(
      'budget',
      `A record of ${frames} frames x ${pixels} pixels has ${frames * pixels} values; the GPU counts at most 2^32 - 1 per record. Use smaller records.`,
    );
  }
  const contexts = classes * NEIGHBOUR_BUCKETS;
  const small = Math.max(pixels * 8 + 8 + frames * 4, contexts * tokens * 4, lanes * 8);
  const buffers = [
    { label: 'compressed upload', bytes: align4(maxStoredBytes + 4), bound: false },
    { label: 'compressed', bytes: align4(maxStoredBytes + 4), bound: true },
    { label: 'chunk index', bytes: align4(frames * 8), bound: true },
    { label: 'pixel flags', bytes: align4(pixels * 4), bound: true },
    { label: 'decoded', bytes: align4(frames * wordsPerFrame * 4), bound: true },
    { label: 'frame errors', bytes: align4(frames * 4), bound: true },
    { label: 'frame totals', bytes: align4(frames * 8), bound: true },
    { label: 'pixel sums', bytes: align4(pixels * 8), bound: true },
    { label: 'bslz4 audit', bytes: AUDIT_LAYOUT.words * 4, bound: true },
    { label: 'stats audit', bytes: 8, bound: true },
    { label: 'class map', bytes: align4(pixels * 4), bound: true },
    { label: 'histogram', bytes: align4(contexts * tokens * 4), bound: true },
    { label: 'encode symbols', bytes: align4(contexts * tokens * 4), bound: true },
    { label: 'encode positions', bytes: align4(contexts * L * 4), bound: true },
    { label: 'lane counts', bytes: align4(lanes * 4), bound: true },
    { label: 'lane errors', bytes: align4(lanes * 4), bound: true },
    { label: 'lane offsets', bytes: align4((lanes + 1) * 4), bound: true },
    // The compaction writes into `decoded` (free once the lanes are encoded) when the words fit, which they do
    // unless a record's lanes grow past their raw size; this buffer is created only for such a record.
    { label: 'record output', bytes: align4(lanes * stride * 4), bound: true, lazy: true },
    { label: 'small readback', bytes: align4(small), bound: false },
    { label: 'output readback', bytes: align4(lanes * stride * 4), bound: false, lazy: true },
  ];
  const shared = [{ label: 'lane scratch', bytes: align4(lanes * stride * 4), bound: true }];
  for (const b of [...buffers, ...shared]) {
    const max = b.bound ? limits.maxStorageBufferBindingSize : limits.maxBufferSize;
    if (b.bytes > max) {
      throw new StemflowError(
        'budget',
        `GPU encoder: the ${b.label} buffer of a ${frames}-frame record needs ${b.bytes} bytes; this GPU allows ${max} per ${b.bound ? 'binding' : 'buffer'}. Use smaller records.`,
      );
    }
  }
  const slotBytes = buffers.reduce((n, b) => n + b.bytes, 0);
  const sharedBytes = shared.reduce((n, b) => n + b.bytes, 0);
  const decodeVariant = input.decodeVariant ?? DEFAULT_DECODE_VARIANT;
  const decodeScratch = decodeScratchBytes(decodeVariant, frames, {
    pixels,
    elemSize: (bits / 8) as ElemSize,
  });
  if (decodeScratch > limits.maxStorageBufferBindingSize) {
    throw new StemflowError(
      'budget',
      `GPU encoder: the decode scratch of a ${frames}-frame record needs ${decodeScratch} bytes; this GPU allows ${limits.maxStorageBufferBindingSize} per binding. Use smaller records.`,
    );
  }
  const lendReadbacks = Math.max(0, Math.floor(input.lendReadbacks ?? 0));
  const lendBytes = align4(lanes * stride * 4);
  const totalBytes = slotBytes * slots + sharedBytes + decodeScratch + lendReadbacks * lendBytes;
  if (input.budgetBytes !== undefined && totalBytes > input.budgetBytes) {
    const gib = (n: number) => `${(n / 2 ** 30).toFixed(2)} GiB`;
    const fit = Math.floor(
      (input.budgetBytes - sharedBytes - decodeScratch - lendReadbacks * lendBytes) / slotBytes,
    );
    throw new StemflowError(
      'budget',
      `GPU encoder: ${slots} record slot(s) of ${gib(slotBytes)} (${frames} frames each) + lane scratch ${gib(sharedBytes)} + decode scratch ${gib(decodeScratch)} + ${lendReadbacks} lent readback(s) of ${gib(lendBytes)} = ${gib(totalBytes)} exceed the budget of ${gib(input.budgetBytes)}; ${fit >= 1 ? `at most ${fit} slot(s) fit` : 'use smaller records'}.`,
    );
  }
  return {
    ...input,
    lendReadbacks,
    wordsPerFrame,
    lanes,
    laneStride: stride,
    tokens,
    buffers,
    slotBytes,
    shared,
    sharedBytes,
    decodeVariant,
    decodeScratchBytes: decodeScratch,
    lendBytes,
    totalBytes,
  };
}

/** Readbacks are created at the size needed + 25 %, in steps of 16 MiB, up to the plan's size. */
export function readbackBytes(needed: number, max: number): number {
  const step = 16 * 2 ** 20;
  return Math.max(needed, Math.min(max, Math.ceil((needed * 1.25) / step) * step));
}

/** Largest stored bytes of any `frames`-frame record of the source (records start at multiples of frames). */
export function maxRecordStored(source: Pick<AcquisitionSource, 'storedSizes'>, frames: number): number {
  const sizes = source.storedSizes();
  let max = 0;
  for (let first = 0; first < sizes.length; first += frames) {
    let n = 0;
    for (let f = first; f < Math.min(sizes.length, first + frames); f++) n += sizes[f];
    max = Math.max(max, n);
  }
  return max;
}
