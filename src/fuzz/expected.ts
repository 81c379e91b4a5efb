/**
 * What a dataset must decode to when a mutation changed only chunk payload bytes: each chunk of h5py's
 * chunk_info (address, size, filter mask: the oracle's index, not ours) decoded from the mutated bytes by the
 * codec, placed where h5py says. bslz4 has no checksum, so such a change can be undetectable; this is the
 * self-consistency reference for it.
 */
import { createHash } from 'node:crypto';
import { decodeChunk } from '../codec/filters.ts';
import { isStemflowError } from '../errors.ts';
import type { OracleDataset, Range } from './fixtures.ts';

export function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

export const DTYPE_SIZE: Record<string, number> = {
  uint8: 1,
  int8: 1,
  uint16: 2,
  int16: 2,
  uint32: 4,
  int32: 4,
  float32: 4,
  uint64: 8,
  int64: 8,
  float64: 8,
};

/** Byte offsets where `a` and `b` (same length) differ, or null when the lengths differ. */
export function diffOffsets(a: Uint8Array, b: Uint8Array, limit = 4096): number[] | null {
  if (a.length !== b.length) return null;
  const out: number[] = [];
  for (let i = 0; i < a.length && out.length < limit; i++) if (a[i] !== b[i]) out.push(i);
  return out;
}

export function allInside(offsets: number[], ranges: Range[]): boolean {
  return offsets.every((o) => ranges.some((r) => o >= r.start && o < r.end));
}

/**
 * The SHA-256 of `ds` decoded from `bytes` through the oracle's chunk index; 'error:<kind>' when a chunk does
 * not decode; null when the dataset is not chunked by whole trailing dims (not checked this way).
 */
export async function expectedFromOracleIndex(ds: OracleDataset, bytes: Uint8Array): Promise<string | null> {
  const r = await decodeByOracleIndex(ds, bytes);
  return r === null || typeof r === 'string' ? r : sha256(r);
}

/** The bytes of expectedFromOracleIndex ('error:<kind>' or null as there). */
export async function decodeByOracleIndex(
  ds: OracleDataset,
  bytes: Uint8Array,
): Promise<Uint8Array | string | null> {
  const elem = DTYPE_SIZE[ds.dtype];
  if (!ds.chunk_info || !ds.chunks || !elem) return null;
  const { shape, chunks } = ds;
  for (let d = 1; d < shape.length; d++) if (chunks[d] !== shape[d]) return null;
  const rowBytes = shape.slice(1).reduce((a, b) => a * b, 1) * elem;
  const out = new Uint8Array(shape[0] * rowBytes);
  const chunkBytes = chunks[0] * rowBytes;
  const filters = ds.filters.map((f) => ({ id: f.id, cdValues: f.cd_values }));
  for (const [coord, offset, size, mask] of ds.chunk_info) {
    let decoded: Uint8Array;
    try {
      decoded = await decodeChunk(bytes.slice(offset, offset + size), filters, elem, chunkBytes, mask);
    } catch (e) {
      if (isStemflowError(e)) return `error:${e.kind}`;
      throw e;
    }
    const at = coord[0] * rowBytes;
    out.set(decoded.subarray(0, Math.min(chunkBytes, out.length - at)), at);
  }
  return out;
}
