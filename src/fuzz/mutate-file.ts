/**
 * Mutations of a whole HDF5 file: bit flips (anywhere or in metadata only), truncations (with and without the
 * end-of-file address rewritten to match), inserted and deleted bytes, address fields pointing at themselves,
 * at their own structure (cycles), at another structure, at 0, undefined or just past the end; chunk size
 * fields set to 0, huge or just past the end; and chunk mutations (mutate-chunk.ts) in place. Checksummed
 * structures are resealed most of the time, so that the damage reaches the parser behind the checksum.
 */
import { type FixtureFile, readU, reseal, writeU } from './fixtures.ts';
import { type ChunkMutation, mutateChunk, parseChunk } from './mutate-chunk.ts';
import type { Rng } from './rng.ts';

export interface MutatedFile {
  bytes: Uint8Array;
  description: string;
}

type FileMutation =
  | 'flip'
  | 'flip-meta'
  | 'set-meta'
  | 'truncate'
  | 'truncate-eof'
  | 'insert'
  | 'delete'
  | 'pointer'
  | 'size'
  | 'chunk'
  | 'field';

const WEIGHTS: [FileMutation, number][] = [
  ['flip', 10],
  ['flip-meta', 16],
  ['set-meta', 6],
  ['truncate', 6],
  ['truncate-eof', 4],
  ['insert', 5],
  ['delete', 5],
  ['pointer', 18],
  ['size', 10],
  ['chunk', 10],
  ['field', 10],
];

const UNDEFINED = 2 ** 53 - 1; // written as 0xff x 8 below

export interface FileMutationOptions {
  /** Chunk decode shape of a dataset (elemSize, decoded bytes), for in-place chunk mutations. */
  chunkShape?: (dataset: string) => { elemSize: number; bytes: number; bslz4: boolean } | null;
}

export function mutateFile(rng: Rng, file: FixtureFile, options: FileMutationOptions = {}): MutatedFile {
  const steps = rng.chance(0.12) ? 2 : 1;
  let bytes: Uint8Array = file.bytes.slice();
  const done: string[] = [];
  for (let s = 0; s < steps; s++) {
    const r = applyOne(rng, rng.weighted(WEIGHTS), file, bytes, options);
    bytes = r.bytes;
    done.push(r.description);
  }
  return { bytes, description: done.join(' + ') };
}

function isChunkByte(file: FixtureFile, at: number): boolean {
  return file.chunkMask[at] === 1;
}

/** A random offset outside chunk data (metadata), or anywhere when the file has no metadata left. */
function metaOffset(rng: Rng, file: FixtureFile, n: number): number {
  for (let k = 0; k < 64; k++) {
    const at = rng.int(n);
    if (!isChunkByte(file, at)) return at;
  }
  return rng.int(n);
}

function writeField(bytes: Uint8Array, at: number, width: number, value: number): void {
  if (value === UNDEFINED) {
    for (let k = 0; k < width && at + k < bytes.length; k++) bytes[at + k] = 0xff;
    return;
  }
  const max = width >= 7 ? 2 ** 53 - 1 : 2 ** (8 * width) - 1;
  if (at + width <= bytes.length) writeU(bytes, at, width, Math.min(Math.max(0, value), max));
}

function maybeReseal(rng: Rng, file: FixtureFile, bytes: Uint8Array, at: number): string {
  if (rng.chance(0.8) && reseal(file, bytes, at)) return ' (resealed)';
  return '';
}

function applyOne(
  rng: Rng,
  kind: FileMutation,
  file: FixtureFile,
  bytes: Uint8Array,
  options: FileMutationOptions,
): MutatedFile {
  const n = bytes.length;
  switch (kind) {
    case 'flip':
    case 'flip-meta': {
      const flips = rng.range(1, 3);
      const at: string[] = [];
      let resealed = '';
      for (let k = 0; k < flips; k++) {
        const i = kind === 'flip' ? rng.int(n) : metaOffset(rng, file, n);
        const bit = rng.int(8);
        bytes[i] ^= 1 << bit;
        at.push(`${i}.${bit}`);
        if (kind === 'flip-meta') resealed ||= maybeReseal(rng, file, bytes, i);
      }
      return { bytes, description: `${kind} ${at.join(',')}${resealed}` };
    }
    case 'set-meta': {
      const at = metaOffset(rng, file, n);
      const v = rng.pick([0, 0xff, 0x80, 0x7f, 1, rng.int(256)]);
      bytes[at] = v;
      return { bytes, description: `set ${at} = ${v}${maybeReseal(rng, file, bytes, at)}` };
    }
    case 'truncate':
    case 'truncate-eof': {
      const candidates = [rng.int(n), n - 1, n - rng.range(1, 64), metaOffset(rng, file, n)];
      for (const s of file.signatures) candidates.push(s.at + rng.range(0, 48));
      const cut = Math.max(0, Math.min(n - 1, rng.pick(candidates)));
      const out = bytes.slice(0, cut);
      let eof = '';
      if (kind === 'truncate-eof' && cut >= file.eofField + 8) {
        writeU(out, file.eofField, 8, cut);
        if (file.superblockChecksum && cut >= file.superblockChecksum.end + 4) reseal(file, out, 0);
        eof = ' (end-of-file address rewritten)';
      }
      return { bytes: out, description: `truncate ${cut}${eof}` };
    }
    case 'insert': {
      const at = rng.chance(0.5) ? metaOffset(rng, file, n) : rng.int(n + 1);
      const extra = rng.chance(0.5) ? new Uint8Array(rng.range(1, 16)) : rng.bytes(rng.range(1, 16));
      const out = new Uint8Array(n + extra.length);
      out.set(bytes.subarray(0, at));
      out.set(extra, at);
      out.set(bytes.subarray(at), at + extra.length);
      return { bytes: out, description: `insert ${extra.length}@${at}` };
    }
    case 'delete': {
      const at = rng.chance(0.5) ? metaOffset(rng, file, n) : rng.int(n);
      const len = Math.min(n - at, rng.range(1, 16));
      const out = new Uint8Array(n - len);
      out.set(bytes.subarray(0, at));
      out.set(bytes.subarray(at + len), at);
      return { bytes: out, description: `delete ${len}@${at}` };
    }
    case 'pointer': {
      if (!file.pointers.length) return applyOne(rng, 'field', file, bytes, options);
      const f = rng.pick(file.pointers);
      const others = file.signatures.map((s) => s.at);
      const v = rng.pick([
        f.owner >= 0 ? f.owner : f.at, // the structure holding the pointer: a cycle
        f.at, // the field itself
        others.length ? rng.pick(others) : 0, // another structure, maybe of another kind
        0,
        UNDEFINED,
        n, // just past the end
        n - 1,
        n + 1,
        readU(bytes, f.at, 8) + rng.range(1, 16),
        2 ** 40,
        rng.int(n),
      ]);
      writeField(bytes, f.at, 8, v);
      const shown = v === UNDEFINED ? 'undefined' : String(v);
      return {
        bytes,
        description: `pointer@${f.at} (${f.what}) = ${shown}${maybeReseal(rng, file, bytes, f.at)}`,
      };
    }
    case 'size': {
      if (!file.sizes.length) return applyOne(rng, 'pointer', file, bytes, options);
      const f = rng.pick(file.sizes);
      const old = readU(bytes, f.at, f.width);
      const address = Number(f.what.split('@')[1]);
      const v = rng.pick([
        0,
        1,
        old - 1,
        old + 1,
        n - address,
        n - address + 1,
        2 ** 31,
        2 ** 32 - 1,
        UNDEFINED,
      ]);
      writeField(bytes, f.at, f.width, v);
      const shown = v === UNDEFINED ? 'max' : String(v);
      return {
        bytes,
        description: `size@${f.at}/${f.width} (${f.what}) ${old} -> ${shown}${maybeReseal(rng, file, bytes, f.at)}`,
      };
    }
    case 'chunk': {
      if (!file.chunks.length) return applyOne(rng, 'flip-meta', file, bytes, options);
      const c = rng.pick(file.chunks);
      const shape = options.chunkShape?.(c.dataset);
      const { start, end } = c.range;
      // A first step may have cut the file before this chunk.
      if (end > bytes.length) return applyOne(rng, 'flip-meta', file, bytes, options);
      if (!shape?.bslz4) {
        const i = start + rng.int(end - start);
        bytes[i] ^= 1 << rng.int(8);
        return { bytes, description: `chunk@${start} flip ${i}` };
      }
      // Parsed from the original (valid) chunk; applied to the current bytes.
      const parsed = parseChunk(file.bytes.slice(start, end), shape);
      // In place only: the chunk keeps its stored size (size changes are the 'size' and insert/delete cases).
      const current = { ...parsed, bytes: bytes.slice(start, end) };
      let m = mutateChunk(rng, current, () => parsed.bytes);
      for (let k = 0; k < 8 && m.bytes.length !== end - start; k++)
        m = mutateChunk(rng, current, () => parsed.bytes);
      if (m.bytes.length !== end - start) return { bytes, description: `chunk@${start} unchanged` };
      bytes.set(m.bytes, start);
      return { bytes, description: `chunk@${start} (${c.dataset}): ${m.description}` };
    }
    case 'field': {
      // A 1-8 byte field right after a structure signature (versions, flags, sizes, addresses).
      if (!file.signatures.length) return applyOne(rng, 'flip-meta', file, bytes, options);
      const s = rng.pick(file.signatures);
      const at = s.at + rng.range(4, 40);
      const width = rng.pick([1, 2, 4, 8]);
      const v = rng.pick([0, 1, 2 ** (8 * Math.min(width, 6)) - 1, n, n + 1, rng.u32(), UNDEFINED]);
      if (at + width > n) return { bytes, description: `field past end (no change)` };
      writeField(bytes, at, width, v);
      const shown = v === UNDEFINED ? 'max' : String(v);
      return {
        bytes,
        description: `field ${s.sig}+${at - s.at}/${width} = ${shown}${maybeReseal(rng, file, bytes, at)}`,
      };
    }
  }
}

export type { ChunkMutation };
