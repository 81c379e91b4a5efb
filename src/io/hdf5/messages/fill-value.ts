import type { Cursor } from '../cursor';

/** Fill value message (0x05, versions 1-3): the fill value bytes, or null when undefined or default (zeros). */
export function parseFillValue(c: Cursor): Uint8Array | null {
  const version = c.u8();
  if (version === 1 || version === 2) {
    c.u8(); // space allocation time
    c.u8(); // fill value write time
    const defined = c.u8();
    if (version === 1 || defined) {
      const size = c.u32();
      return size > 0 && defined ? c.take(size).slice() : null;
    }
    return null;
  }
  if (version === 3) {
    const flags = c.u8();
    if (flags & 0x20) {
      const size = c.u32();
      return size > 0 ? c.take(size).slice() : null;
    }
    return null;
  }
  return c.fail(`Unknown fill value message version ${version}`);
}

/** The old fill value message (0x04): size and bytes. */
export function parseOldFillValue(c: Cursor): Uint8Array | null {
  const size = c.u32();
  return size > 0 ? c.take(size).slice() : null;
}
