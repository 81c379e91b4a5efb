/**
 * NumPy .npz files (a ZIP of .npy members, stored uncompressed) for the archive's global state, so Python
 * users can `numpy.load` it. Written as stored members with their CRC-32 (src/util/crc32.ts), the container
 * assembled here; by @zip.js/zip.js (ZIP64) from 4 GiB; read by @zip.js/zip.js (checks every CRC). .npy
 * members by src/io/npy.ts.
 */
import { configure, Uint8ArrayReader, Uint8ArrayWriter, ZipReader, ZipWriter } from '@zip.js/zip.js';
import { StemflowError } from '../errors';
import { decodeNpy, encodeNpy, type NpyArray } from '../io/npy';
import { crc32 } from '../util/crc32';

configure({ useWebWorkers: false });

export interface NpzArray {
  data: NpyArray;
  shape: number[];
}

/** One member of an .npz being written: its .npy bytes and their CRC-32, made when its array is complete. */
export interface NpzMember {
  /** Member name without the `.npy` suffix. */
  name: string;
  bytes: Uint8Array;
  crc: number;
}

/** The .npy member of an array (encoded and checksummed now; the container is assembled by `npzParts`). */
export function npzMember(name: string, { data, shape }: NpzArray): NpzMember {
  const bytes = encodeNpy(data, shape);
  return { name, bytes, crc: crc32(bytes) };
}

// DOS date of every member: 2000-01-01 00:00 (the archive's bytes do not depend on when it was written).
const DOS_DATE = ((2000 - 1980) << 9) | (1 << 5) | 1;
const U32_LIMIT = 0xffffffff;

/**
 * The .npz of `members` (in order) as parts to write one after another: per member its local header and its
 * bytes, then the central directory. A ZIP of stored (uncompressed) members, as numpy.savez writes; without
 * ZIP64, so null when it would need it (a member or the whole at 4 GiB or more, or 65,535 members or more).
 */
export function npzParts(members: readonly NpzMember[]): Uint8Array[] | null {
  const enc = new TextEncoder();
  const parts: Uint8Array[] = [];
  const central: Uint8Array[] = [];
  let offset = 0;
  if (members.length >= 0xffff) return null;
  for (const m of members) {
    const name = enc.encode(`${m.name}.npy`);
    const size = m.bytes.byteLength;
    if (size >= U32_LIMIT || offset + 30 + name.length + size >= U32_LIMIT) return null;
    const local = new Uint8Array(30 + name.length);
    const l = new DataView(local.buffer);
    l.setUint32(0, 0x04034b50, true);
    l.setUint16(4, 20, true); // version needed: 2.0
    l.setUint16(6, 0, true); // flags
    l.setUint16(8, 0, true); // stored
    l.setUint16(10, 0, true); // time
    l.setUint16(12, DOS_DATE, true);
    l.setUint32(14, m.crc, true);
    l.setUint32(18, size, true);
    l.setUint32(22, size, true);
    l.setUint16(26, name.length, true);
    l.setUint16(28, 0, true);
    local.set(name, 30);
    const entry = new Uint8Array(46 + name.length);
    const c = new DataView(entry.buffer);
    c.setUint32(0, 0x02014b50, true);
    c.setUint16(4, 20, true); // made by: 2.0, MS-DOS attributes
    c.setUint16(6, 20, true);
    c.setUint16(8, 0, true);
    c.setUint16(10, 0, true);
    c.setUint16(12, 0, true);
    c.setUint16(14, DOS_DATE, true);
    c.setUint32(16, m.crc, true);
    c.setUint32(20, size, true);
    c.setUint32(24, size, true);
    c.setUint16(28, name.length, true);
    // extra 0, comment 0, disk 0, internal 0, external 0
    c.setUint32(42, offset, true);
    entry.set(name, 46);
    parts.push(local, m.bytes);
    central.push(entry);
    offset += local.byteLength + size;
  }
  const centralBytes = central.reduce((n, e) => n + e.byteLength, 0);
  if (offset + centralBytes + 22 >= U32_LIMIT) return null;
  const end = new Uint8Array(centralBytes + 22);
  let at = 0;
  for (const e of central) {
    end.set(e, at);
    at += e.byteLength;
  }
  const d = new DataView(end.buffer, centralBytes);
  d.setUint32(0, 0x06054b50, true);
  d.setUint16(8, members.length, true);
  d.setUint16(10, members.length, true);
  d.setUint32(12, centralBytes, true);
  d.setUint32(16, offset, true);
  parts.push(end);
  return parts;
}

/**
 * Writes arrays as an .npz (member names get the `.npy` suffix numpy expects): stored members assembled here
 * (`npzParts`), or by @zip.js/zip.js with ZIP64 when they reach 4 GiB.
 */
export async function encodeNpz(arrays: Record<string, NpzArray>): Promise<Uint8Array> {
  const members = Object.entries(arrays).map(([name, a]) => npzMember(name, a));
  const parts = npzParts(members);
  if (parts) return concatParts(parts);
  const zip = new ZipWriter(new Uint8ArrayWriter(), { level: 0, extendedTimestamp: false });
  for (const m of members) {
    await zip.add(`${m.name}.npy`, new Uint8ArrayReader(m.bytes), {
      level: 0,
      lastModDate: new Date(Date.UTC(2000, 0, 1)),
    });
  }
  return zip.close();
}

function concatParts(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

/** Reads every member of an .npz. A damaged container or member is a 'corrupt' error. */
export async function decodeNpz(bytes: Uint8Array, what = 'npz'): Promise<Map<string, NpzArray>> {
  const out = new Map<string, NpzArray>();
  let zip: ZipReader<unknown> | undefined;
  try {
    zip = new ZipReader(new Uint8ArrayReader(bytes), { checkSignature: true });
    for (const entry of await zip.getEntries()) {
      if (entry.directory) continue;
      if (!entry.filename.endsWith('.npy') || !entry.getData) {
        throw new StemflowError('corrupt', `${what}: member ${entry.filename} is not a .npy array.`);
      }
      const data = await entry.getData(new Uint8ArrayWriter(), { checkSignature: true });
      out.set(entry.filename.slice(0, -4), decodeNpy(data));
    }
  } catch (error) {
    if (error instanceof StemflowError) throw error;
    throw new StemflowError('corrupt', `${what} is not a readable .npz: ${(error as Error).message}`);
  } finally {
    await zip?.close();
  }
  return out;
}
