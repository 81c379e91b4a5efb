/**
 * The fuzzer's raw material: the committed fixtures (test/fixtures/*.h5), h5py's oracle for them, and the
 * places in each file worth damaging (structure signatures, checksummed ranges, address and size fields, chunk
 * byte ranges), found once per file from the bytes and the oracle (never from our own reader's answers).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { lookup3 } from '../io/hdf5/checksum.ts';

export interface OracleDataset {
  shape: number[];
  dtype: string;
  chunks: number[] | null;
  layout: 'chunked' | 'contiguous' | 'compact';
  index: string | null;
  filters: { id: number; cd_values: number[] }[];
  chunk_info: [number[], number, number, number][] | null;
  readable?: boolean;
  expected_error?: string;
  sha256?: string;
}

export interface OracleAcquisition {
  master: string;
  shards: string[];
  dataset: string;
  frames: number;
  sha256: string;
}

export interface FuzzOracle {
  files: Record<string, { size: number; sha256: string; datasets: Record<string, OracleDataset> }>;
  acquisitions: Record<string, OracleAcquisition>;
}

/** A byte range [start, end) of a file. */
export interface Range {
  start: number;
  end: number;
}

/** A field worth rewriting: `width` little-endian bytes at `at` inside the structure starting at `owner`. */
export interface Field {
  at: number;
  width: number;
  /** Start of the structure (signature) holding the field, or -1. */
  owner: number;
  what: string;
}

export interface FixtureFile {
  name: string;
  bytes: Uint8Array;
  /** Offsets of the 8-byte end-of-file address and, for superblock v2/3, its checksum range. */
  eofField: number;
  superblockChecksum: Range | null;
  /** Structure starts by signature ('TREE', 'OHDR', ...). */
  signatures: { sig: string; at: number }[];
  /** Checksummed structures: bytes [start, end) guarded by the lookup3 at `end`. */
  checksummed: Range[];
  /** Stored chunks of every dataset (h5py's chunk_info). */
  chunks: { dataset: string; range: Range }[];
  /** 1 for each byte inside a stored chunk. */
  chunkMask: Uint8Array;
  /** Address fields pointing at a structure or a chunk. */
  pointers: Field[];
  /** Size fields of chunks (found next to the chunk's address field). */
  sizes: Field[];
}

const SIGNATURES = [
  'TREE',
  'SNOD',
  'HEAP',
  'OHDR',
  'OCHK',
  'GCOL',
  'FRHP',
  'FHDB',
  'FHIB',
  'BTHD',
  'BTIN',
  'BTLF',
  'FAHD',
  'FADB',
  'EAHD',
  'EAIB',
  'EASB',
  'EADB',
];
const CHECKSUMMED = new Set(['OHDR', 'OCHK', 'FRHP', 'FHDB', 'FHIB', 'BTHD', 'BTIN', 'BTLF']);
for (const s of ['FAHD', 'FADB', 'EAHD', 'EAIB', 'EASB', 'EADB']) CHECKSUMMED.add(s);
/** The longest checksummed structure searched for its checksum (longer ones are left unresealed). */
const MAX_CHECKSUMMED = 4096;

export function fixturesDir(): string {
  return process.env.STEMFLOW_FIXTURES ?? join(process.cwd(), 'test', 'fixtures');
}

export function loadFuzzOracle(dir = fixturesDir()): FuzzOracle {
  return JSON.parse(readFileSync(join(dir, 'oracle.json'), 'utf8'));
}

export function readU(bytes: Uint8Array, at: number, n: number): number {
  let v = 0;
  for (let k = n - 1; k >= 0; k--) v = v * 256 + bytes[at + k];
  return v;
}

export function writeU(bytes: Uint8Array, at: number, n: number, value: number): void {
  let v = value;
  for (let k = 0; k < n; k++) {
    bytes[at + k] = v % 256;
    v = Math.floor(v / 256);
  }
}

/** Loads one fixture and maps its structure. */
export function loadFixtureFile(name: string, oracle: FuzzOracle, dir = fixturesDir()): FixtureFile {
  const bytes = new Uint8Array(readFileSync(join(dir, name)));
  const entry = oracle.files[name];
  const chunks: { dataset: string; range: Range }[] = [];
  for (const [path, ds] of Object.entries(entry?.datasets ?? {})) {
    for (const [, offset, size] of ds.chunk_info ?? [])
      chunks.push({ dataset: path, range: { start: offset, end: offset + size } });
  }
  const chunkMask = new Uint8Array(bytes.length);
  for (const c of chunks) chunkMask.fill(1, c.range.start, Math.min(c.range.end, bytes.length));
  const version = bytes[8];
  const eofField = version >= 2 ? 28 : 40;
  const superblockChecksum = version >= 2 ? { start: 0, end: 44 } : null;

  const signatures: { sig: string; at: number }[] = [];
  for (let i = 0; i + 4 <= bytes.length; i++) {
    if (bytes[i] < 0x41 || bytes[i] > 0x5a) continue;
    const sig = String.fromCharCode(bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]);
    if (SIGNATURES.includes(sig) && !chunkMask[i]) signatures.push({ sig, at: i });
  }
  const checksummed: Range[] = [];
  if (superblockChecksum) checksummed.push(superblockChecksum);
  for (let k = 0; k < signatures.length; k++) {
    const { sig, at } = signatures[k];
    if (!CHECKSUMMED.has(sig)) continue;
    // A structure's checksum lies before the next structure.
    const nextAt = k + 1 < signatures.length ? signatures[k + 1].at : bytes.length;
    const limit = Math.min(bytes.length - 4, at + MAX_CHECKSUMMED, nextAt - 4);
    for (let end = at + 8; end <= limit; end++) {
      if (readU(bytes, end, 4) === lookup3(bytes.subarray(at, end))) {
        checksummed.push({ start: at, end });
        break;
      }
    }
  }

  // Address fields: 8-byte little-endian values equal to a structure start or a chunk address.
  const targets = new Map<number, string>();
  for (const { sig, at } of signatures) targets.set(at, sig);
  for (const c of chunks) targets.set(c.range.start, 'chunk');
  const chunkAt = new Map(chunks.map((c) => [c.range.start, c]));
  const ownerOf = (at: number) => {
    let owner = -1;
    for (const s of signatures) if (s.at <= at && s.at > owner) owner = s.at;
    return owner;
  };
  const pointers: Field[] = [];
  const sizes: Field[] = [];
  for (let i = 0; i + 8 <= bytes.length; i++) {
    if (chunkMask[i]) continue;
    if (bytes[i + 5] !== 0 || bytes[i + 6] !== 0 || bytes[i + 7] !== 0) continue;
    const value = readU(bytes, i, 8);
    const what = targets.get(value);
    if (what === undefined || value === 0) continue;
    pointers.push({ at: i, width: 8, owner: ownerOf(i), what: `address of ${what}@${value}` });
    if (what !== 'chunk') continue;
    // The chunk's stored size, near its address (v1 B-tree key before the child pointer, or after it).
    const chunk = chunkAt.get(value)!;
    const size = chunk.range.end - chunk.range.start;
    for (let j = Math.max(0, i - 48); j < Math.min(bytes.length - 1, i + 24); j++) {
      for (const width of [4, 3, 2, 8]) {
        if (j + width > bytes.length || (j < i + 8 && j + width > i)) continue;
        if (readU(bytes, j, width) === size) {
          sizes.push({ at: j, width, owner: ownerOf(j), what: `size of chunk@${value}` });
          break;
        }
      }
    }
  }
  return {
    name,
    bytes,
    eofField,
    superblockChecksum,
    signatures,
    checksummed,
    chunks,
    chunkMask,
    pointers,
    sizes,
  };
}

/** The checksummed range that holds `at`, if any. */
export function checksumOf(file: FixtureFile, at: number): Range | undefined {
  return file.checksummed.find((r) => at >= r.start && at < r.end);
}

/** Rewrites the lookup3 checksums of every checksummed structure (of the original) that `at` falls in. */
export function reseal(file: FixtureFile, bytes: Uint8Array, at: number): boolean {
  const r = checksumOf(file, at);
  if (!r || r.end + 4 > bytes.length) return false;
  writeU(bytes, r.end, 4, lookup3(bytes.subarray(r.start, r.end)));
  return true;
}
