/**
 * Mutations of one bitshuffle/LZ4 chunk (HDF5 filter 32008): bit flips, truncations, inserted and deleted
 * bytes, header sizes and block sizes that disagree with the chunk shape, block lengths set to 0, huge or just
 * past the end, LZ4 match offsets pointing outside the window and length bytes running past either end. The
 * places are found by parsing the valid original once (`parseChunk`).
 */
import type { Rng } from './rng.ts';

/** One LZ4 sequence of a valid block, positions relative to the chunk. */
interface Sequence {
  token: number;
  /** Literal-length extension bytes, then the match offset (-1 on the last sequence), match extensions. */
  litExt: number[];
  offsetAt: number;
  matchExt: number[];
  /** Output position (in the block) where the match starts. */
  op: number;
}

export interface ChunkShape {
  elemSize: number;
  /** Decoded bytes of the chunk. */
  bytes: number;
}

export interface ParsedChunk {
  bytes: Uint8Array;
  shape: ChunkShape;
  blockBytes: number;
  /** Offsets (in the chunk) of each block's 4-byte length field. */
  blocks: { lengthAt: number; start: number; end: number; sequences: Sequence[] }[];
  tailAt: number;
}

function be32(a: Uint8Array, i: number): number {
  return ((a[i] << 24) | (a[i + 1] << 16) | (a[i + 2] << 8) | a[i + 3]) >>> 0;
}

export function writeBE32(a: Uint8Array, i: number, v: number): void {
  if (i < 0 || i + 4 > a.length) return;
  a[i] = (v >>> 24) & 0xff;
  a[i + 1] = (v >>> 16) & 0xff;
  a[i + 2] = (v >>> 8) & 0xff;
  a[i + 3] = v & 0xff;
}

/** Parses a valid chunk (the fixtures'): its block table and every LZ4 sequence. */
export function parseChunk(bytes: Uint8Array, shape: ChunkShape): ParsedChunk {
  const blockBytes = be32(bytes, 8);
  if (blockBytes === 0 || bytes.length < 12) throw new Error('fuzz: parseChunk needs a valid chunk');
  const blocks: ParsedChunk['blocks'] = [];
  let pos = 12;
  let left = shape.bytes - (shape.bytes % (8 * shape.elemSize));
  while (left > 0 && pos + 4 <= bytes.length) {
    const length = be32(bytes, pos);
    const start = pos + 4;
    const end = start + length;
    blocks.push({ lengthAt: pos, start, end, sequences: parseBlock(bytes, start, end) });
    pos = end;
    left -= Math.min(left, blockBytes);
  }
  return { bytes, shape, blockBytes, blocks, tailAt: pos };
}

function parseBlock(src: Uint8Array, start: number, end: number): Sequence[] {
  const out: Sequence[] = [];
  let ip = start;
  let op = 0;
  while (ip < end) {
    const token = ip;
    let lit = src[ip++] >>> 4;
    const litExt: number[] = [];
    if (lit === 15) {
      let b = 255;
      while (b === 255 && ip < end) {
        litExt.push(ip);
        b = src[ip++];
        lit += b;
      }
    }
    ip += lit;
    op += lit;
    if (ip >= end) {
      out.push({ token, litExt, offsetAt: -1, matchExt: [], op });
      break;
    }
    const offsetAt = ip;
    ip += 2;
    let match = src[token] & 15;
    const matchExt: number[] = [];
    if (match === 15) {
      let b = 255;
      while (b === 255 && ip < end) {
        matchExt.push(ip);
        b = src[ip++];
        match += b;
      }
    }
    out.push({ token, litExt, offsetAt, matchExt, op });
    op += match + 4;
  }
  return out;
}

export type ChunkMutation =
  | 'none'
  | 'flip'
  | 'header-size'
  | 'header-block'
  | 'block-length'
  | 'lz4-offset'
  | 'lz4-length'
  | 'lz4-token'
  | 'truncate'
  | 'insert'
  | 'delete'
  | 'append'
  | 'foreign'
  | 'random-block';

const WEIGHTS: [ChunkMutation, number][] = [
  ['none', 3],
  ['flip', 16],
  ['header-size', 7],
  ['header-block', 8],
  ['block-length', 9],
  ['lz4-offset', 14],
  ['lz4-length', 9],
  ['lz4-token', 6],
  ['truncate', 8],
  ['insert', 5],
  ['delete', 5],
  ['append', 3],
  ['foreign', 4],
  ['random-block', 3],
];

export interface MutatedChunk {
  bytes: Uint8Array;
  /** Human-readable list of what was done, for the reproduction line. */
  description: string;
}

/**
 * Applies one to three mutations to a copy of `chunk`. `foreign` is another valid chunk (of a different shape
 * or element size) used by the 'foreign' mutation.
 */
export function mutateChunk(rng: Rng, chunk: ParsedChunk, foreign: () => Uint8Array): MutatedChunk {
  const steps = rng.chance(0.15) ? rng.range(2, 3) : 1;
  let bytes: Uint8Array = chunk.bytes.slice();
  const done: string[] = [];
  for (let s = 0; s < steps; s++) {
    const kind = rng.weighted(WEIGHTS);
    const r = applyOne(rng, kind, chunk, bytes, foreign);
    bytes = r.bytes;
    done.push(r.description);
    if (kind === 'none') break;
  }
  return { bytes, description: done.join(' + ') };
}

function pickSequence(rng: Rng, chunk: ParsedChunk): { seq: Sequence; block: number } | null {
  const withMatch = chunk.blocks.flatMap((b, i) =>
    b.sequences.filter((q) => q.offsetAt >= 0).map((seq) => ({ seq, block: i })),
  );
  return withMatch.length ? rng.pick(withMatch) : null;
}

function applyOne(
  rng: Rng,
  kind: ChunkMutation,
  chunk: ParsedChunk,
  bytes: Uint8Array,
  foreign: () => Uint8Array,
): MutatedChunk {
  const n = bytes.length;
  const { elemSize } = chunk.shape;
  switch (kind) {
    case 'none':
      return { bytes, description: 'none' };
    case 'flip': {
      const flips = rng.range(1, 4);
      const at: string[] = [];
      for (let k = 0; k < flips && n > 0; k++) {
        const i = rng.int(n);
        const bit = rng.int(8);
        bytes[i] ^= 1 << bit;
        at.push(`${i}.${bit}`);
      }
      return { bytes, description: `flip ${at.join(',')}` };
    }
    case 'header-size': {
      const v = rng.pick([
        0,
        chunk.shape.bytes + elemSize,
        chunk.shape.bytes - elemSize,
        chunk.shape.bytes * 2,
        chunk.shape.bytes + 1,
        0xffffffff,
        rng.u32(),
      ]);
      const high = rng.chance(0.2) ? rng.pick([1, 0xffffffff]) : 0;
      writeBE32(bytes, 0, high);
      writeBE32(bytes, 4, v >>> 0);
      return { bytes, description: `header size ${high}:${v >>> 0}` };
    }
    case 'header-block': {
      const v = rng.pick([
        0,
        7,
        8,
        8 * elemSize,
        chunk.blockBytes / 2,
        chunk.blockBytes * 2,
        chunk.blockBytes + 8 * elemSize,
        4096,
        8192,
        8200,
        16384,
        0xfffffff8,
        rng.u32(),
      ]);
      writeBE32(bytes, 8, v >>> 0);
      return { bytes, description: `header block ${v >>> 0}` };
    }
    case 'block-length': {
      if (!chunk.blocks.length) return applyOne(rng, 'flip', chunk, bytes, foreign);
      const b = rng.int(chunk.blocks.length);
      const { lengthAt, start, end } = chunk.blocks[b];
      const len = end - start;
      const left = n - start;
      const v = rng.pick([0, 1, len - 1, len + 1, left, left + 1, 0xffffffff, 0x80000000, rng.int(2 * len)]);
      writeBE32(bytes, lengthAt, v >>> 0);
      return { bytes, description: `block ${b} length ${v >>> 0} (was ${len})` };
    }
    case 'lz4-offset': {
      const p = pickSequence(rng, chunk);
      if (!p) return applyOne(rng, 'flip', chunk, bytes, foreign);
      const { seq } = p;
      // 0, just outside the window (op + 1), far outside, the maximum, or any.
      const v = rng.pick([0, seq.op + 1, seq.op + rng.range(2, 300), 65535, rng.int(65536), 1]) & 0xffff;
      bytes[seq.offsetAt] = v & 0xff;
      bytes[seq.offsetAt + 1] = v >>> 8;
      return { bytes, description: `block ${p.block} offset@${seq.offsetAt} = ${v} (op ${seq.op})` };
    }
    case 'lz4-length': {
      const p = pickSequence(rng, chunk);
      if (!p) return applyOne(rng, 'flip', chunk, bytes, foreign);
      const { seq } = p;
      const ext = [...seq.litExt, ...seq.matchExt];
      if (ext.length && rng.chance(0.6)) {
        const at = rng.pick(ext);
        const v = rng.pick([0, 255, 254, rng.int(256)]);
        bytes[at] = v;
        return { bytes, description: `block ${p.block} length byte@${at} = ${v}` };
      }
      // Make the match or literal length run long: nibble 15 and the next bytes 255.
      const lit = rng.chance(0.5);
      bytes[seq.token] |= lit ? 0xf0 : 0x0f;
      const run = rng.range(1, 40);
      const at = lit ? seq.token + 1 : seq.offsetAt + 2;
      for (let k = 0; k < run && at + k < n; k++) bytes[at + k] = 255;
      return { bytes, description: `block ${p.block} ${lit ? 'literal' : 'match'} length run@${at} x${run}` };
    }
    case 'lz4-token': {
      const seqs = chunk.blocks.flatMap((b) => b.sequences);
      if (!seqs.length) return applyOne(rng, 'flip', chunk, bytes, foreign);
      const seq = rng.pick(seqs);
      const v = rng.pick([0x00, 0xff, 0xf0, 0x0f, rng.int(256)]);
      bytes[seq.token] = v;
      return { bytes, description: `token@${seq.token} = ${v}` };
    }
    case 'truncate': {
      const candidates = [0, 1, 11, 12, 15, 16, n - 1, rng.int(n)];
      for (const b of chunk.blocks) candidates.push(b.lengthAt, b.start, b.end - 1);
      const cut = Math.max(0, Math.min(n, rng.pick(candidates)));
      return { bytes: bytes.slice(0, cut), description: `truncate ${cut}` };
    }
    case 'insert': {
      const at = rng.int(n + 1);
      const extra = rng.bytes(rng.range(1, 16));
      const out = new Uint8Array(n + extra.length);
      out.set(bytes.subarray(0, at));
      out.set(extra, at);
      out.set(bytes.subarray(at), at + extra.length);
      return { bytes: out, description: `insert ${extra.length}@${at}` };
    }
    case 'delete': {
      const at = rng.int(Math.max(1, n));
      const len = Math.min(n - at, rng.range(1, 16));
      const out = new Uint8Array(n - len);
      out.set(bytes.subarray(0, at));
      out.set(bytes.subarray(at + len), at);
      return { bytes: out, description: `delete ${len}@${at}` };
    }
    case 'append': {
      const extra = rng.bytes(rng.range(1, 8));
      const out = new Uint8Array(n + extra.length);
      out.set(bytes);
      out.set(extra, n);
      return { bytes: out, description: `append ${extra.length}` };
    }
    case 'foreign': {
      const other = foreign();
      return { bytes: other.slice(), description: `foreign chunk (${other.length} bytes)` };
    }
    case 'random-block': {
      if (!chunk.blocks.length) return applyOne(rng, 'flip', chunk, bytes, foreign);
      const b = rng.int(chunk.blocks.length);
      const { start, end } = chunk.blocks[b];
      if (end > bytes.length) return applyOne(rng, 'flip', chunk, bytes, foreign);
      bytes.set(rng.bytes(end - start), start);
      return { bytes, description: `random block ${b}` };
    }
  }
}
