/**
 * CPU twin of phase 2 of the two-phase bitshuffle/LZ4 decode (src/shaders/bslz4-resolve.wgsl): from the
 * verdicts and sequence table of phase 1 (src/kernels/bslz4-parse.ts), resolves every output word of every
 * block by following the sequence table back to literals (the shader's walk, word by word), undoes the bit
 * transpose and audits, giving exactly the words, errors, totals and audit of src/kernels/bslz4-decode.ts.
 * `bslz4Decode2pBatch` runs both phases (or the production twin when phase 1 asks for the fallback).
 */
import {
  type Bslz4DecodeParams,
  type Bslz4DecodeResult,
  bslz4DecodeBatch,
  checkDecodeParams,
  type DecodeAudit,
  emptyAudit,
  HEADER_BYTES,
} from './bslz4-decode.ts';
import { type Bslz4Parsed, bslz4ParseBatch } from './bslz4-parse.ts';
import { DECODE_OK } from './decode-errors.ts';

function be32(a: Uint8Array, i: number): number {
  return ((a[i] << 24) | (a[i + 1] << 16) | (a[i + 2] << 8) | a[i + 3]) >>> 0;
}

/** The last sequence i in [lo, hi] whose output start is <= p. */
function find(seqs: Uint32Array, t: number, p: number, lo0: number, hi0: number): number {
  let lo = lo0;
  let hi = hi0;
  if ((seqs[2 * (t + hi)] & 0xffff) <= p) return hi;
  hi -= 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if ((seqs[2 * (t + mid)] & 0xffff) <= p) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/**
 * Output bytes [a, a + 4) of a block (compressed bytes from slot byte `start`, table entries from `t`, `nseq`
 * sequences, `outEnd` bytes), as the shader's resolve_word finds them.
 */
export function resolveWord(
  slot: Uint8Array,
  seqs: Uint32Array,
  t: number,
  nseq: number,
  start: number,
  outEnd: number,
  a: number,
): number {
  let word = 0;
  let done = 0;
  while (done < 4) {
    let p = a + done;
    let k = 4 - done;
    let lo = 0;
    let hi = nseq - 1;
    let bytes = 0;
    for (let hop = 0; hop <= outEnd; hop++) {
      const i = find(seqs, t, p, lo, hi);
      const x = seqs[2 * (t + i)];
      const y = seqs[2 * (t + i) + 1];
      const os = x & 0xffff;
      const offset = x >>> 16;
      const litEnd = os + (y & 0xffff);
      if (p < litEnd || offset === 0) {
        k = Math.min(k, litEnd - p);
        const s = start + (y >>> 16) + (p - os);
        for (let q = 0; q < k; q++) bytes |= slot[s + q] << (8 * q);
        break;
      }
      const me = i + 1 < nseq ? seqs[2 * (t + i + 1)] & 0xffff : outEnd;
      const r = (p - litEnd) % offset;
      k = Math.min(k, offset - r, me - p);
      p = litEnd - offset + r;
      lo = 0;
      hi = i;
    }
    word = (word | (bytes << (8 * done))) >>> 0;
    done += k;
  }
  return word;
}

/** Phase 2 over a batch parsed by bslz4ParseBatch (not a fallback). */
export function bslz4ResolveBatch(
  slot: Uint8Array,
  index: Uint32Array,
  flags: Uint32Array,
  params: Bslz4DecodeParams,
  parsed: Bslz4Parsed,
  audit: DecodeAudit = emptyAudit(),
): Bslz4DecodeResult {
  const wordsPerFrame = checkDecodeParams(params);
  const { frameCount, pixels, elemSize } = params;
  const words = new Uint32Array(frameCount * wordsPerFrame);
  const bytes = new Uint8Array(words.buffer);
  const errors = new Uint32Array(frameCount);
  const totals = new BigUint64Array(frameCount);
  const block = new Uint8Array(8192);
  const blockWords = new Uint32Array(block.buffer);
  const { seqs, verdicts } = parsed;
  for (let f = 0; f < frameCount; f++) {
    const err = verdicts[f];
    errors[f] = err;
    if (err !== DECODE_OK) {
      audit.failedFrames = (audit.failedFrames + 1) >>> 0;
      continue;
    }
    const off = index[2 * f];
    const out = bytes.subarray(f * wordsPerFrame * 4, f * wordsPerFrame * 4 + pixels * elemSize);
    const blockBytes = be32(slot, off + 8);
    const blockElems = blockBytes / elemSize;
    const full = Math.floor(pixels / blockElems);
    const last = (pixels % blockElems) & ~7;
    const count = full + (last > 0 ? 1 : 0);
    let pos = HEADER_BYTES;
    let first = 0;
    for (let b = 0; b < count; b++) {
      const length = be32(slot, off + pos);
      const start = off + pos + 4;
      const elems = b < full ? blockElems : last;
      const n = elems * elemSize;
      const base = start >>> 1;
      const nseq = seqs[2 * base];
      for (let w = 0; w < n / 4; w++)
        blockWords[w] = resolveWord(slot, seqs, base + 1, nseq, start, n, 4 * w);
      unshuffle(block, out, first * elemSize, elems, elemSize);
      pos += 4 + length;
      first += elems;
    }
    out.set(slot.subarray(off + pos, off + pos + (pixels - first) * elemSize), first * elemSize);
    totals[f] = auditValues(out, pixels, elemSize, flags, audit);
  }
  return { words, errors, totals, audit };
}

function unshuffle(src: Uint8Array, out: Uint8Array, dst: number, elems: number, elemSize: number): void {
  const pb = elems >>> 3;
  for (let g = 0; g < pb; g++) {
    for (let j = 0; j < elemSize; j++) {
      const base = 8 * j * pb + g;
      for (let k = 0; k < 8; k++) {
        let v = 0;
        for (let bit = 0; bit < 8; bit++) v |= ((src[base + bit * pb] >>> k) & 1) << bit;
        out[dst + (8 * g + k) * elemSize + j] = v;
      }
    }
  }
}

function auditValues(
  out: Uint8Array,
  pixels: number,
  elemSize: number,
  flags: Uint32Array,
  audit: DecodeAudit,
): bigint {
  const dv = new DataView(out.buffer, out.byteOffset, out.byteLength);
  let sum = 0;
  let sumHigh = 0n;
  let above = 0;
  for (let p = 0; p < pixels; p++) {
    if (flags[p] !== 0) continue;
    const v =
      elemSize === 1 ? out[p] : elemSize === 2 ? dv.getUint16(2 * p, true) : dv.getUint32(4 * p, true);
    sum += v;
    if (sum >= 2 ** 52) {
      sumHigh += BigInt(sum);
      sum = 0;
    }
    if (v > audit.maxValue) audit.maxValue = v;
    if (v > 255) above++;
    else audit.histogram[v]++;
  }
  audit.histogram[256] += BigInt(above);
  audit.countAbove255 += BigInt(above);
  return sumHigh + BigInt(sum);
}

/** Both phases over a batch: the result of bslz4DecodeBatch (src/kernels/bslz4-decode.ts) for every input. */
export function bslz4Decode2pBatch(
  slot: Uint8Array,
  index: Uint32Array,
  flags: Uint32Array,
  params: Bslz4DecodeParams,
  audit: DecodeAudit = emptyAudit(),
): Bslz4DecodeResult & { fallback: boolean } {
  const parsed = bslz4ParseBatch(slot, index, params);
  if (parsed.fallback) return { ...bslz4DecodeBatch(slot, index, flags, params, audit), fallback: true };
  return { ...bslz4ResolveBatch(slot, index, flags, params, parsed, audit), fallback: false };
}
