/**
 * CPU twin of the fused bitshuffle/LZ4 decode + audit pass (src/shaders/bslz4-decode.wgsl,
 * src/gpu/passes/bslz4-decode.ts): the same walk over the same buffers, the same error codes
 * (src/kernels/decode-errors.ts) for every input, and on valid input the bytes of src/codec bslz4Decode.
 *
 * Inputs: the compressed slot (the chunks of a batch's frames back to back at arbitrary byte offsets), an
 * index of (byteOffset, byteSize) per frame, pixel flags (u32 per pixel, nonzero = flagged). Outputs: decoded
 * words (frame f at word f * wordsPerFrame, values packed little-endian in the source dtype, pad words 0),
 * an error code per frame, per-frame totals over unflagged pixels (u64), and the audit over unflagged pixels
 * of every frame that decoded (maximum, count above 255, 257-bin histogram; u64 counters).
 *
 * Chunk walk (first fault wins, in this order): index inside the slot; 12-byte header (big-endian u64 size =
 * pixels * elemSize, big-endian u32 block size in bytes: nonzero multiple of 8 * elemSize, at most 8192);
 * per block a big-endian u32 length (nonzero, inside the chunk) and a raw LZ4 block that decodes to exactly
 * the block's bytes; then (pixels mod 8) raw elements and nothing after them.
 */
import { StemflowError } from '../errors.ts';
import { DECODE_OK, DecodeError } from './decode-errors.ts';

export type ElemSize = 1 | 2 | 4;

/** Largest block the GPU decodes in workgroup memory (8 KiB); larger blocks are UNSUPPORTED_BLOCK_SIZE. */
export const MAX_BLOCK_BYTES = 8192;
export const HEADER_BYTES = 12;
export const HISTOGRAM_BINS = 257;

/** Word offsets of the audit counters (a flat u32 array; u64 counters are (lo, hi) pairs). */
export const AUDIT_LAYOUT = {
  /** Maximum unflagged value (u32). */
  max: 0,
  /** Number of frames that failed to decode (u32). */
  failedFrames: 1,
  /** Number of unflagged values above 255 (u64). */
  above255: 2,
  /** 257 u64 bins: values 0..255, then one bin for all values above 255. */
  histogram: 4,
  /** Total words. */
  words: 4 + 2 * HISTOGRAM_BINS,
} as const;

export interface DecodeAudit {
  maxValue: number;
  failedFrames: number;
  countAbove255: bigint;
  /** 257 bins: values 0..255, then the count of values above 255. */
  histogram: BigUint64Array;
}

export interface Bslz4DecodeParams {
  /** Frames in the batch (index entries used). */
  frameCount: number;
  /** Pixels (elements) per frame. */
  pixels: number;
  elemSize: ElemSize;
  /** Words per decoded frame; default ceil(pixels * elemSize / 4), more gives zero pad words. */
  wordsPerFrame?: number;
  /**
   * false: the audit's histogram counts bins 0 and 256 only (the pass's AUDIT_BINS; the load's transpose counts
   * bins 1..255, detectorTranspose's `histogram`). Default true.
   */
  auditBins?: boolean;
}

export interface Bslz4DecodeResult {
  words: Uint32Array;
  errors: Uint32Array;
  /** Sum of unflagged values per frame (0 for a failed frame). */
  totals: BigUint64Array;
  audit: DecodeAudit;
}

export function emptyAudit(): DecodeAudit {
  return { maxValue: 0, failedFrames: 0, countAbove255: 0n, histogram: new BigUint64Array(HISTOGRAM_BINS) };
}

/** Reads the flat audit words (as the GPU pass writes them) into an object. */
export function auditFromWords(words: Uint32Array): DecodeAudit {
  const u64 = (i: number) => BigInt(words[i]) | (BigInt(words[i + 1]) << 32n);
  const histogram = new BigUint64Array(HISTOGRAM_BINS);
  for (let b = 0; b < HISTOGRAM_BINS; b++) histogram[b] = u64(AUDIT_LAYOUT.histogram + 2 * b);
  return {
    maxValue: words[AUDIT_LAYOUT.max],
    failedFrames: words[AUDIT_LAYOUT.failedFrames],
    countAbove255: u64(AUDIT_LAYOUT.above255),
    histogram,
  };
}

/** The minimum words per frame for `pixels` values of `elemSize` bytes. */
export function minWordsPerFrame(pixels: number, elemSize: ElemSize): number {
  return Math.ceil((pixels * elemSize) / 4);
}

export function checkDecodeParams({
  frameCount,
  pixels,
  elemSize,
  wordsPerFrame,
}: Bslz4DecodeParams): number {
  if (![1, 2, 4].includes(elemSize)) {
    throw new StemflowError('invalid', `Element size ${elemSize} is not 1, 2 or 4 bytes.`);
  }
  if (!Number.isInteger(pixels) || pixels <= 0 || pixels * elemSize > 0xffffffff) {
    throw new StemflowError('invalid', `A frame of ${pixels} pixels cannot be decoded.`);
  }
  if (!Number.isInteger(frameCount) || frameCount < 0) {
    throw new StemflowError('invalid', `${frameCount} is not a frame count.`);
  }
  const min = minWordsPerFrame(pixels, elemSize);
  const words = wordsPerFrame ?? min;
  if (!Number.isInteger(words) || words < min) {
    throw new StemflowError('invalid', `${words} words per frame cannot hold ${pixels} values.`);
  }
  return words;
}

/** The decode's chunk index of a batch: (offset, size) of each frame's chunk in the slot, interleaved. */
export function chunkIndex(stored: { offsets: Uint32Array; sizes: Uint32Array }): Uint32Array {
  const n = stored.sizes.length;
  const index = new Uint32Array(n * 2);
  for (let f = 0; f < n; f++) {
    index[2 * f] = stored.offsets[f];
    index[2 * f + 1] = stored.sizes[f];
  }
  return index;
}

/**
 * Decodes a batch exactly like the GPU pass. `audit` (optional) is accumulated into, as the GPU's audit
 * buffer is across batches; the result's audit is that object.
 */
export function bslz4DecodeBatch(
  slot: Uint8Array,
  index: Uint32Array,
  flags: Uint32Array,
  params: Bslz4DecodeParams,
  audit: DecodeAudit = emptyAudit(),
): Bslz4DecodeResult {
  const wordsPerFrame = checkDecodeParams(params);
  const { frameCount, pixels, elemSize } = params;
  if (index.length < 2 * frameCount) {
    throw new StemflowError('invalid', `The index holds fewer than ${frameCount} frames.`);
  }
  if (flags.length < pixels) {
    throw new StemflowError('invalid', `The pixel flags hold fewer than ${pixels} pixels.`);
  }
  const words = new Uint32Array(frameCount * wordsPerFrame);
  const bytes = new Uint8Array(words.buffer);
  const errors = new Uint32Array(frameCount);
  const totals = new BigUint64Array(frameCount);
  const scratch = new Uint8Array(MAX_BLOCK_BYTES);
  const frameBytes = pixels * elemSize;
  for (let f = 0; f < frameCount; f++) {
    const out = bytes.subarray(f * wordsPerFrame * 4, f * wordsPerFrame * 4 + frameBytes);
    const err = decodeFrame(slot, index[2 * f], index[2 * f + 1], out, pixels, elemSize, scratch);
    errors[f] = err;
    if (err !== DECODE_OK) {
      out.fill(0);
      audit.failedFrames = (audit.failedFrames + 1) >>> 0;
      continue;
    }
    totals[f] = auditFrame(out, pixels, elemSize, flags, audit, params.auditBins ?? true);
  }
  return { words, errors, totals, audit };
}

function be32(a: Uint8Array, i: number): number {
  return ((a[i] << 24) | (a[i + 1] << 16) | (a[i + 2] << 8) | a[i + 3]) >>> 0;
}

/** Decodes one chunk into `out` (pixels * elemSize bytes); returns its error code. */
function decodeFrame(
  slot: Uint8Array,
  offset: number,
  size: number,
  out: Uint8Array,
  pixels: number,
  elemSize: number,
  scratch: Uint8Array,
): number {
  if (offset > slot.length || size > slot.length - offset) return DecodeError.INDEX_OUT_OF_SLOT;
  const chunk = slot.subarray(offset, offset + size);
  if (size < HEADER_BYTES) return DecodeError.HEADER_TRUNCATED;
  if (be32(chunk, 0) !== 0 || be32(chunk, 4) !== pixels * elemSize) return DecodeError.SIZE_MISMATCH;
  const blockBytes = be32(chunk, 8);
  if (blockBytes === 0 || blockBytes % (8 * elemSize) !== 0) return DecodeError.BAD_BLOCK_SIZE;
  if (blockBytes > MAX_BLOCK_BYTES) return DecodeError.UNSUPPORTED_BLOCK_SIZE;
  const blockElems = blockBytes / elemSize;
  const fullBlocks = Math.floor(pixels / blockElems);
  const lastElems = (pixels % blockElems) & ~7;
  const count = fullBlocks + (lastElems > 0 ? 1 : 0);
  let pos = HEADER_BYTES;
  let dst = 0;
  for (let b = 0; b < count; b++) {
    if (size - pos < 4) return DecodeError.BLOCK_TRUNCATED;
    const length = be32(chunk, pos);
    pos += 4;
    if (length === 0) return DecodeError.BLOCK_EMPTY;
    if (length > size - pos) return DecodeError.BLOCK_TRUNCATED;
    const elems = b < fullBlocks ? blockElems : lastElems;
    const bytes = elems * elemSize;
    const err = lz4Block(chunk, pos, pos + length, scratch, bytes);
    if (err !== DECODE_OK) return err;
    unshuffleBlock(scratch, out, dst, elems, elemSize);
    pos += length;
    dst += bytes;
  }
  const tailBytes = (pixels & 7) * elemSize;
  if (size - pos < tailBytes) return DecodeError.TAIL_TRUNCATED;
  if (size - pos > tailBytes) return DecodeError.TRAILING_BYTES;
  out.set(chunk.subarray(pos, pos + tailBytes), dst);
  return DECODE_OK;
}

/**
 * One raw LZ4 block src[start, end) into dst[0, outEnd): the exact checks of the shader, in its order. Length
 * extension bytes stop early once the literal run already passes the input (LZ4_TRUNCATED) or the match
 * already passes the output (LZ4_OVERRUN), which keeps every counter small.
 */
function lz4Block(src: Uint8Array, start: number, end: number, dst: Uint8Array, outEnd: number): number {
  let ip = start;
  let op = 0;
  for (;;) {
    if (ip >= end) return DecodeError.LZ4_TRUNCATED;
    const token = src[ip++];
    let lit = token >>> 4;
    if (lit === 15) {
      for (;;) {
        if (ip >= end) return DecodeError.LZ4_TRUNCATED;
        const b = src[ip++];
        lit += b;
        if (lit > end - ip) return DecodeError.LZ4_TRUNCATED;
        if (b !== 255) break;
      }
    }
    if (lit > end - ip) return DecodeError.LZ4_TRUNCATED;
    if (lit > outEnd - op) return DecodeError.LZ4_OVERRUN;
    for (let i = 0; i < lit; i++) dst[op + i] = src[ip + i];
    ip += lit;
    op += lit;
    if (ip === end) break;
    if (end - ip < 2) return DecodeError.LZ4_TRUNCATED;
    const offset = src[ip] | (src[ip + 1] << 8);
    ip += 2;
    if (offset === 0 || offset > op) return DecodeError.LZ4_BAD_OFFSET;
    let match = token & 15;
    if (match === 15) {
      for (;;) {
        if (ip >= end) return DecodeError.LZ4_TRUNCATED;
        const b = src[ip++];
        match += b;
        if (match + 4 > outEnd - op) return DecodeError.LZ4_OVERRUN;
        if (b !== 255) break;
      }
    }
    match += 4;
    if (match > outEnd - op) return DecodeError.LZ4_OVERRUN;
    for (let i = 0; i < match; i++) dst[op + i] = dst[op - offset + (i % offset)];
    op += match;
  }
  return op === outEnd ? DECODE_OK : DecodeError.LZ4_SHORT;
}

/** Undoes the bit transpose of one block (elems a multiple of 8) from `src` into out[dst..]. */
function unshuffleBlock(
  src: Uint8Array,
  out: Uint8Array,
  dst: number,
  elems: number,
  elemSize: number,
): void {
  const planeBytes = elems >>> 3;
  for (let g = 0; g < planeBytes; g++) {
    for (let j = 0; j < elemSize; j++) {
      const base = 8 * j * planeBytes + g;
      for (let k = 0; k < 8; k++) {
        let v = 0;
        for (let bit = 0; bit < 8; bit++) v |= ((src[base + bit * planeBytes] >>> k) & 1) << bit;
        out[dst + (8 * g + k) * elemSize + j] = v;
      }
    }
  }
}

/**
 * Adds a decoded frame's unflagged values to `audit`; returns their sum. `bins` false: the histogram gets only
 * bins 0 and 256 (Bslz4DecodeParams.auditBins).
 */
export function auditFrame(
  out: Uint8Array,
  pixels: number,
  elemSize: number,
  flags: Uint32Array,
  audit: DecodeAudit,
  bins = true,
): bigint {
  const values =
    elemSize === 1
      ? out
      : elemSize === 2
        ? new Uint16Array(out.buffer, out.byteOffset, pixels)
        : new Uint32Array(out.buffer, out.byteOffset, pixels);
  let sum = 0;
  let sumHigh = 0n;
  let above = 0;
  for (let p = 0; p < pixels; p++) {
    if (flags[p] !== 0) continue;
    const v = values[p];
    sum += v;
    if (sum >= 2 ** 52) {
      sumHigh += BigInt(sum);
      sum = 0;
    }
    if (v > audit.maxValue) audit.maxValue = v;
    if (v > 255) above++;
    else if (bins || v === 0) audit.histogram[v]++;
  }
  audit.histogram[256] += BigInt(above);
  audit.countAbove255 += BigInt(above);
  return sumHigh + BigInt(sum);
}
