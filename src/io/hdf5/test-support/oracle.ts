import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';
import type { OracleDataset as FixtureDataset } from '../../../testing/fixtures';
import type { ChunkDecoder, Dtype } from '../types';

/** The shared fixture oracle's dataset record, with what this module's own testdata adds. */
export interface OracleDataset extends FixtureDataset {
  readable: boolean;
  /** Only in this module's testdata: false for big-endian datasets. */
  little_endian?: boolean;
}

export interface OracleFile {
  size: number;
  datasets: Record<string, OracleDataset>;
  external_links: Record<string, [string, string]>;
}

export interface Oracle {
  dir: string;
  files: Record<string, OracleFile>;
}

/** The fixture folders that carry an oracle.json written by h5py (the shared one and this module's own). */
export function loadOracles(): Oracle[] {
  const dirs = [join(process.cwd(), 'test/fixtures'), join(import.meta.dirname, '../testdata')];
  return dirs
    .filter((d) => existsSync(join(d, 'oracle.json')))
    .map((dir) => ({ dir, files: JSON.parse(readFileSync(join(dir, 'oracle.json'), 'utf8')).files }));
}

/** numpy's name of a dtype (little-endian assumed by the oracle). */
export function numpyName(d: Dtype): string {
  return `${d.class}${d.size * 8}`;
}

/** A decoder for the filters Node can undo by itself (deflate, shuffle), for readDataset tests. */
export const zlibDecoder: ChunkDecoder = async (chunk, filters, mask) => {
  let data = chunk;
  for (let k = filters.length - 1; k >= 0; k--) {
    if (mask & (1 << k)) continue;
    const f = filters[k];
    if (f.id === 1) data = new Uint8Array(inflateSync(data));
    else if (f.id === 2) data = unshuffle(data, f.cdValues[0]);
    else throw new Error(`filter ${f.id} not available in tests`);
  }
  return data;
};

function unshuffle(data: Uint8Array, size: number): Uint8Array {
  const n = Math.floor(data.length / size);
  const out = new Uint8Array(data.length);
  for (let b = 0; b < size; b++) for (let i = 0; i < n; i++) out[i * size + b] = data[b * n + i];
  out.set(data.subarray(n * size), n * size);
  return out;
}
