import type { Cursor } from '../cursor';

export interface FilterInfo {
  id: number;
  name?: string;
  cdValues: number[];
  optional: boolean;
}

const KNOWN: Record<number, string> = {
  1: 'deflate',
  2: 'shuffle',
  3: 'fletcher32',
  4: 'szip',
  5: 'nbit',
  6: 'scaleoffset',
  32001: 'blosc',
  32004: 'lz4',
  32008: 'bitshuffle',
  32015: 'zstd',
};

/** Filter pipeline message (0x0B), versions 1 and 2. */
export function parseFilterPipeline(c: Cursor): FilterInfo[] {
  const version = c.u8();
  if (version !== 1 && version !== 2) c.fail(`Unknown filter pipeline message version ${version}`);
  const n = c.u8();
  if (n > 32) c.fail(`A pipeline of ${n} filters`);
  if (version === 1) c.skip(6);
  const out: FilterInfo[] = [];
  for (let k = 0; k < n; k++) {
    const id = c.u16();
    const nameLength = version === 1 || id >= 256 ? c.u16() : 0;
    const flags = c.u16();
    const nValues = c.u16();
    let name: string | undefined;
    if (nameLength > 0) {
      const raw = c.take(version === 1 ? Math.ceil(nameLength / 8) * 8 : nameLength);
      const end = raw.indexOf(0);
      name = new TextDecoder().decode(raw.subarray(0, end < 0 ? raw.length : end));
    }
    const cdValues = Array.from({ length: nValues }, () => c.u32());
    if (version === 1 && nValues % 2 === 1) c.skip(4);
    out.push({ id, name: name || KNOWN[id], cdValues, optional: (flags & 1) !== 0 });
  }
  return out;
}
