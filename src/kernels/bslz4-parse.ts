/**
 * CPU twin of phase 1 of the two-phase bitshuffle/LZ4 decode (src/shaders/bslz4-parse.wgsl: `plan` and
 * `parse`). It walks each frame's chunk with the checks of src/kernels/bslz4-decode.ts in the same order and
 * gives the same verdict (first fault wins); instead of decoding, it writes each block's LZ4 sequences into the
 * sequence table, laid out exactly as the shader lays it out (see the shader's header). Phase 2:
 * src/kernels/bslz4-resolve.ts.
 */

import { type Bslz4DecodeParams, checkDecodeParams, HEADER_BYTES, MAX_BLOCK_BYTES } from './bslz4-decode.ts';
import { DECODE_OK, DecodeError } from './decode-errors.ts';

/** Sequence-table entries (2 u32 words each) for a slot of `slotBytes` bytes. */
export function sequenceTableEntries(slotBytes: number): number {
  return Math.floor(slotBytes / 2) + 3;
}

export interface Bslz4Parsed {
  /**
   * True when the chunks of the in-slot index entries are not disjoint and in slot order: the table cannot
   * hold them, and the batch is decoded by the production pass instead.
   */
  fallback: boolean;
  /** Per batch frame: 0 or the error code of the twin (src/kernels/bslz4-decode.ts). */
  verdicts: Uint32Array;
  /** The sequence table: sequenceTableEntries(slot.length) entries of (x, y) u32 words. */
  seqs: Uint32Array;
}

/** Whether every in-slot chunk starts at or after the end of every earlier in-slot chunk (`plan`). */
export function chunksInOrder(slotBytes: number, index: Uint32Array, frameCount: number): boolean {
  let end = 0;
  for (let f = 0; f < frameCount; f++) {
    const off = index[2 * f];
    const size = index[2 * f + 1];
    if (off > slotBytes || size > slotBytes - off) continue;
    if (off < end) return false;
    end = Math.max(end, off + size);
  }
  return true;
}

function be32(a: Uint8Array, i: number): number {
  return ((a[i] << 24) | (a[i + 1] << 16) | (a[i + 2] << 8) | a[i + 3]) >>> 0;
}

/** Phase 1 over a batch. */
export function bslz4ParseBatch(
  slot: Uint8Array,
  index: Uint32Array,
  params: Bslz4DecodeParams,
): Bslz4Parsed {
  checkDecodeParams(params);
  const { frameCount } = params;
  const verdicts = new Uint32Array(frameCount);
  const seqs = new Uint32Array(2 * sequenceTableEntries(slot.length));
  if (!chunksInOrder(slot.length, index, frameCount)) return { fallback: true, verdicts, seqs };
  for (let f = 0; f < frameCount; f++) {
    verdicts[f] = parseFrame(slot, index[2 * f], index[2 * f + 1], params, seqs);
  }
  return { fallback: false, verdicts, seqs };
}

function parseFrame(
  slot: Uint8Array,
  off: number,
  size: number,
  { pixels, elemSize }: Bslz4DecodeParams,
  seqs: Uint32Array,
): number {
  if (off > slot.length || size > slot.length - off) return DecodeError.INDEX_OUT_OF_SLOT;
  if (size < HEADER_BYTES) return DecodeError.HEADER_TRUNCATED;
  if (be32(slot, off) !== 0 || be32(slot, off + 4) !== pixels * elemSize) return DecodeError.SIZE_MISMATCH;
  const blockBytes = be32(slot, off + 8);
  if (blockBytes === 0 || blockBytes % (8 * elemSize) !== 0) return DecodeError.BAD_BLOCK_SIZE;
  if (blockBytes > MAX_BLOCK_BYTES) return DecodeError.UNSUPPORTED_BLOCK_SIZE;
  const blockElems = blockBytes / elemSize;
  const full = Math.floor(pixels / blockElems);
  const last = (pixels % blockElems) & ~7;
  const count = full + (last > 0 ? 1 : 0);
  let pos = HEADER_BYTES;
  let first = 0;
  for (let b = 0; b < count; b++) {
    if (size - pos < 4) return DecodeError.BLOCK_TRUNCATED;
    const length = be32(slot, off + pos);
    pos += 4;
    if (length === 0) return DecodeError.BLOCK_EMPTY;
    if (length > size - pos) return DecodeError.BLOCK_TRUNCATED;
    const elems = b < full ? blockElems : last;
    const start = off + pos;
    const err = parseBlock(slot, start, start + length, elems * elemSize, seqs);
    if (err !== DECODE_OK) return err;
    pos += length;
    first += elems;
  }
  const tailBytes = (pixels - first) * elemSize;
  if (size - pos < tailBytes) return DecodeError.TAIL_TRUNCATED;
  if (size - pos > tailBytes) return DecodeError.TRAILING_BYTES;
  return DECODE_OK;
}

/**
 * One raw LZ4 block slot[start, end) of `outEnd` decoded bytes: the checks of lz4Block in
 * src/kernels/bslz4-decode.ts in its order; writes the block's table at entry start >> 1.
 */
export function parseBlock(
  src: Uint8Array,
  start: number,
  end: number,
  outEnd: number,
  seqs: Uint32Array,
): number {
  const base = start >>> 1;
  let ip = start;
  let op = 0;
  let n = 0;
  let err: number = DECODE_OK;
  const put = (x: number, y: number) => {
    seqs[2 * (base + 1 + n)] = x >>> 0;
    seqs[2 * (base + 1 + n) + 1] = y >>> 0;
    n++;
  };
  for (;;) {
    if (ip >= end) {
      err = DecodeError.LZ4_TRUNCATED;
      break;
    }
    const token = src[ip++];
    let lit = token >>> 4;
    if (lit === 15) {
      for (;;) {
        if (ip >= end) {
          err = DecodeError.LZ4_TRUNCATED;
          break;
        }
        const b = src[ip++];
        lit += b;
        if (lit > end - ip) {
          err = DecodeError.LZ4_TRUNCATED;
          break;
        }
        if (b !== 255) break;
      }
      if (err !== DECODE_OK) break;
    }
    if (lit > end - ip) {
      err = DecodeError.LZ4_TRUNCATED;
      break;
    }
    if (lit > outEnd - op) {
      err = DecodeError.LZ4_OVERRUN;
      break;
    }
    const litSrc = ip - start;
    const litOut = op;
    ip += lit;
    op += lit;
    if (ip === end) {
      put(litOut, lit | (litSrc << 16));
      err = op === outEnd ? DECODE_OK : DecodeError.LZ4_SHORT;
      break;
    }
    if (end - ip < 2) {
      err = DecodeError.LZ4_TRUNCATED;
      break;
    }
    const offset = src[ip] | (src[ip + 1] << 8);
    ip += 2;
    if (offset === 0 || offset > op) {
      err = DecodeError.LZ4_BAD_OFFSET;
      break;
    }
    let count = token & 15;
    if (count === 15) {
      for (;;) {
        if (ip >= end) {
          err = DecodeError.LZ4_TRUNCATED;
          break;
        }
        const b = src[ip++];
        count += b;
        if (count + 4 > outEnd - op) {
          err = DecodeError.LZ4_OVERRUN;
          break;
        }
        if (b !== 255) break;
      }
      if (err !== DECODE_OK) break;
    }
    count += 4;
    if (count > outEnd - op) {
      err = DecodeError.LZ4_OVERRUN;
      break;
    }
    put(litOut | (offset << 16), lit | (litSrc << 16));
    op += count;
  }
  seqs[2 * base] = n;
  seqs[2 * base + 1] = 0;
  return err;
}
