/**
 * CPU twin of the bitshuffle/LZ4 parse pass (src/shaders/bslz4-parse.wgsl), the first half of the decode
 * variants named `list` (src/gpu/passes/bslz4-decode-variants.ts): one thread per LZ4 block walks the block's
 * tokens with exactly the checks of the decode walk (src/kernels/bslz4-decode.ts `lz4Block`, in its order) and
 * writes each sequence to a list, so the decode's lanes copy from the list instead of each parsing every token.
 *
 * Blocks are numbered within a dispatch's frames [frameStart, frameEnd): block b of frame f is entry
 * t = (f - frameStart) * blocksPerFrame + b, where blocksPerFrame is the block count of a frame at the
 * 8 KiB block size (listBlocks). A block b >= blocksPerFrame (frames with smaller blocks) has no entry.
 *
 * Per entry t: `info[2t]` = sequences written, `info[2t + 1]` = the block's verdict + 1 (1: the block decodes
 * exactly from its list), or 0: no list (the frame or a block header before it fails, the block does not
 * exist, or its sequences do not fit the list: more than `cap`, or a literal run starting 65,536 or more bytes
 * into the block); the decode then walks the block's tokens itself. Sequence k of entry t is the word pair
 * seqs[2(t cap + k)] = literals | match << 16, seqs[2(t cap + k) + 1] = offset | literal start << 16 (the
 * literals' first byte, from the block's first compressed byte); the last sequence of a block has match 0.
 * A sequence is written once all of its checks pass; a failing block keeps those before the fault.
 */

import { type ElemSize, HEADER_BYTES, MAX_BLOCK_BYTES } from './bslz4-decode.ts';
import { DECODE_OK, DecodeError } from './decode-errors.ts';

/** Sequences a block's list holds unless the variant says otherwise. */
export const DEFAULT_LIST_CAP = 256;
/** The largest literal start a sequence records (16 bits). */
const MAX_LITERAL_START = 0xffff;

export interface Bslz4ParseParams {
  /** Batch frames [frameStart, frameEnd) of the dispatch. */
  frameStart: number;
  frameEnd: number;
  pixels: number;
  elemSize: ElemSize;
  /** Sequences per block's list. */
  cap: number;
  /** Bytes of the slot that hold data (default its length). */
  slotBytes?: number;
}

export interface Bslz4ParseResult {
  /** (count, verdict + 1 or 0) per block entry. */
  info: Uint32Array;
  /** cap word pairs per block entry; only the first `count` of each are written (the rest 0 here). */
  seqs: Uint32Array;
  blocksPerFrame: number;
}

/** Blocks of a frame of `pixels` elements at the 8 KiB block size: the list entries per frame. */
export function listBlocks(pixels: number, elemSize: ElemSize): number {
  const blockElems = MAX_BLOCK_BYTES / elemSize;
  return Math.floor(pixels / blockElems) + ((pixels % blockElems) & ~7 ? 1 : 0);
}

function be32(a: Uint8Array, i: number): number {
  return ((a[i] << 24) | (a[i + 1] << 16) | (a[i + 2] << 8) | a[i + 3]) >>> 0;
}

/** Parses every block of the dispatch's frames as the parse pass does. */
export function bslz4Parse(slot: Uint8Array, index: Uint32Array, p: Bslz4ParseParams): Bslz4ParseResult {
  const blocksPerFrame = listBlocks(p.pixels, p.elemSize);
  const entries = (p.frameEnd - p.frameStart) * blocksPerFrame;
  const info = new Uint32Array(2 * entries);
  const seqs = new Uint32Array(2 * entries * p.cap);
  const slotBytes = p.slotBytes ?? slot.length;
  for (let t = 0; t < entries; t++) {
    const f = p.frameStart + Math.floor(t / blocksPerFrame);
    const [count, done] = parseBlock(
      slot,
      slotBytes,
      index[2 * f],
      index[2 * f + 1],
      t % blocksPerFrame,
      p,
      (k, x, y) => {
        seqs[2 * (t * p.cap + k)] = x;
        seqs[2 * (t * p.cap + k) + 1] = y;
      },
    );
    info[2 * t] = count;
    info[2 * t + 1] = done;
  }
  return { info, seqs, blocksPerFrame };
}

/** Block b of the chunk slot[off, off + size): (sequences written, verdict + 1 or 0), as the shader. */
function parseBlock(
  slot: Uint8Array,
  slotBytes: number,
  off: number,
  size: number,
  b: number,
  p: Bslz4ParseParams,
  put: (k: number, x: number, y: number) => void,
): [number, number] {
  const { pixels, elemSize } = p;
  if (off > slotBytes || size > slotBytes - off || size < HEADER_BYTES) return [0, 0];
  if (be32(slot, off) !== 0 || be32(slot, off + 4) !== pixels * elemSize) return [0, 0];
  const blockBytes = be32(slot, off + 8);
  if (blockBytes === 0 || blockBytes % (8 * elemSize) !== 0 || blockBytes > MAX_BLOCK_BYTES) return [0, 0];
  const blockElems = blockBytes / elemSize;
  const full = Math.floor(pixels / blockElems);
  const last = (pixels % blockElems) & ~7;
  const count = full + (last > 0 ? 1 : 0);
  if (b >= count) return [0, 0];
  let pos = HEADER_BYTES;
  let start = 0;
  let length = 0;
  for (let s = 0; s <= b; s++) {
    if (size - pos < 4) return [0, 0];
    length = be32(slot, off + pos);
    pos += 4;
    if (length === 0 || length > size - pos) return [0, 0];
    start = off + pos;
    pos += length;
  }
  const outEnd = (b < full ? blockElems : last) * elemSize;
  const end = start + length;
  const fail = (k: number, err: number): [number, number] => [k, 1 + err];
  let ip = start;
  let op = 0;
  let k = 0;
  for (;;) {
    if (ip >= end) return fail(k, DecodeError.LZ4_TRUNCATED);
    const token = slot[ip++];
    let lit = token >>> 4;
    if (lit === 15) {
      for (;;) {
        if (ip >= end) return fail(k, DecodeError.LZ4_TRUNCATED);
        const byte = slot[ip++];
        lit += byte;
        if (lit > end - ip) return fail(k, DecodeError.LZ4_TRUNCATED);
        if (byte !== 255) break;
      }
    }
    if (lit > end - ip) return fail(k, DecodeError.LZ4_TRUNCATED);
    if (lit > outEnd - op) return fail(k, DecodeError.LZ4_OVERRUN);
    const litStart = ip - start;
    ip += lit;
    op += lit;
    if (ip === end) {
      if (k >= p.cap || litStart > MAX_LITERAL_START) return [k, 0];
      put(k, lit, (litStart << 16) >>> 0);
      return [k + 1, 1 + (op === outEnd ? DECODE_OK : DecodeError.LZ4_SHORT)];
    }
    if (end - ip < 2) return fail(k, DecodeError.LZ4_TRUNCATED);
    const offset = slot[ip] | (slot[ip + 1] << 8);
    ip += 2;
    if (offset === 0 || offset > op) return fail(k, DecodeError.LZ4_BAD_OFFSET);
    let match = token & 15;
    if (match === 15) {
      for (;;) {
        if (ip >= end) return fail(k, DecodeError.LZ4_TRUNCATED);
        const byte = slot[ip++];
        match += byte;
        if (match + 4 > outEnd - op) return fail(k, DecodeError.LZ4_OVERRUN);
        if (byte !== 255) break;
      }
    }
    match += 4;
    if (match > outEnd - op) return fail(k, DecodeError.LZ4_OVERRUN);
    if (k >= p.cap || litStart > MAX_LITERAL_START) return [k, 0];
    put(k, (lit | (match << 16)) >>> 0, (offset | (litStart << 16)) >>> 0);
    k++;
    op += match;
  }
}
