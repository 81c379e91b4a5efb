/**
 * Every stored chunk of the fixtures, cut out of the files at h5py's chunk_info, with its decode checked
 * against h5py: the datasets' chunks decoded by the codec and laid out must hash to the oracle's SHA-256.
 * The references of the codec and GPU targets.
 */
import { decodeChunk } from '../codec/filters.ts';
import { expectedFromOracleIndex, sha256 } from './expected.ts';
import { type FuzzOracle, loadFixtureFile, loadFuzzOracle } from './fixtures.ts';
import { type ParsedChunk, parseChunk } from './mutate-chunk.ts';

export interface PoolChunk {
  file: string;
  dataset: string;
  /** Byte offset of the stored chunk in its file. */
  address: number;
  elemSize: 1 | 2 | 4;
  /** Decoded bytes of the chunk (elements x elemSize). */
  chunkBytes: number;
  filters: { id: number; cdValues: number[] }[];
  filterMask: number;
  stored: Uint8Array;
  /** Decoded by the codec; the dataset's layout of these hashes to h5py's SHA-256. */
  reference: Uint8Array;
  /** bslz4 only: the parsed block table and LZ4 sequences. */
  parsed: ParsedChunk | null;
}

export interface ChunkPool {
  oracle: FuzzOracle;
  bslz4: PoolChunk[];
  /** gzip and shuffle+gzip chunks. */
  other: PoolChunk[];
  /** bslz4 chunks grouped by (elemSize, chunkBytes), the GPU target's batch configurations. */
  configs: PoolChunk[][];
}

const ELEM: Record<string, 1 | 2 | 4> = { uint8: 1, uint16: 2, uint32: 4 };

export async function loadChunkPool(): Promise<ChunkPool> {
  const oracle = loadFuzzOracle();
  const bslz4: PoolChunk[] = [];
  const other: PoolChunk[] = [];
  for (const name of Object.keys(oracle.files).sort()) {
    const file = loadFixtureFile(name, oracle);
    for (const [path, ds] of Object.entries(oracle.files[name].datasets)) {
      const elemSize = ELEM[ds.dtype];
      if (!ds.chunk_info || !ds.chunks || !elemSize || ds.readable === false || !ds.filters.length) continue;
      if ((await expectedFromOracleIndex(ds, file.bytes)) !== ds.sha256) {
        throw new Error(`fuzz: the chunks of ${name}:${path} do not decode to h5py's values`);
      }
      const filters = ds.filters.map((f) => ({ id: f.id, cdValues: f.cd_values }));
      const chunkBytes = ds.chunks.reduce((a, b) => a * b, 1) * elemSize;
      const isBslz4 = filters.length === 1 && filters[0].id === 32008 && filters[0].cdValues[4] === 2;
      for (const [, offset, size, mask] of ds.chunk_info) {
        const stored = file.bytes.slice(offset, offset + size);
        const reference = await decodeChunk(stored, filters, elemSize, chunkBytes, mask);
        const entry: PoolChunk = {
          file: name,
          dataset: path,
          address: offset,
          elemSize,
          chunkBytes,
          filters,
          filterMask: mask,
          stored,
          reference,
          parsed: isBslz4 ? parseChunk(stored, { elemSize, bytes: chunkBytes }) : null,
        };
        (isBslz4 ? bslz4 : other).push(entry);
      }
    }
  }
  const groups = new Map<string, PoolChunk[]>();
  for (const c of bslz4) {
    const key = `${c.elemSize}:${c.chunkBytes}`;
    groups.set(key, [...(groups.get(key) ?? []), c]);
  }
  return { oracle, bslz4, other, configs: [...groups.values()] };
}

export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export { sha256 };
