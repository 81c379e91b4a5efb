import { StemflowError } from '../errors';

/**
 * A baseline little-endian TIFF writer for one-channel 32-bit images (float32 or uint32): one uncompressed
 * strip, BlackIsZero, SampleFormat 3 (IEEE float) or 1 (unsigned integer). Readable by tifffile, ImageJ/Fiji,
 * GIMP and DigitalMicrograph. DOM-free.
 */
export type TiffArray = Float32Array | Uint32Array;

const SHORT = 3;
const LONG = 4;
const RATIONAL = 5;
const ASCII = 2;

interface Entry {
  tag: number;
  type: number;
  count: number;
  /** Inline value (SHORT/LONG), or bytes stored after the IFD. */
  value?: number;
  bytes?: Uint8Array;
}

export function encodeTiff(data: TiffArray, rows: number, cols: number, description?: string): Uint8Array {
  if (
    !Number.isInteger(rows) ||
    !Number.isInteger(cols) ||
    rows <= 0 ||
    cols <= 0 ||
    rows * cols !== data.length
  )
    throw new StemflowError('invalid', `A ${rows}x${cols} TIFF cannot hold ${data.length} values`);
  const float = data instanceof Float32Array;
  const rational = (num: number, den: number) => {
    const b = new Uint8Array(8);
    const v = new DataView(b.buffer);
    v.setUint32(0, num, true);
    v.setUint32(4, den, true);
    return b;
  };
  const text = description ? asciiBytes(description) : null;
  const pixelBytes = data.length * 4;
  const entries: Entry[] = [
    { tag: 256, type: LONG, count: 1, value: cols },
    { tag: 257, type: LONG, count: 1, value: rows },
    { tag: 258, type: SHORT, count: 1, value: 32 },
    { tag: 259, type: SHORT, count: 1, value: 1 },
    { tag: 262, type: SHORT, count: 1, value: 1 },
    ...(text ? [{ tag: 270, type: ASCII, count: text.length, bytes: text }] : []),
    { tag: 273, type: LONG, count: 1, value: 0 }, // strip offset, set below
    { tag: 277, type: SHORT, count: 1, value: 1 },
    { tag: 278, type: LONG, count: 1, value: rows },
    { tag: 279, type: LONG, count: 1, value: pixelBytes },
    { tag: 282, type: RATIONAL, count: 1, bytes: rational(1, 1) },
    { tag: 283, type: RATIONAL, count: 1, bytes: rational(1, 1) },
    { tag: 284, type: SHORT, count: 1, value: 1 },
    { tag: 296, type: SHORT, count: 1, value: 1 },
    { tag: 339, type: SHORT, count: 1, value: float ? 3 : 1 },
  ];
  const ifdSize = 2 + entries.length * 12 + 4;
  let extra = 8 + ifdSize;
  const offsets = new Map<Entry, number>();
  for (const e of entries) {
    if (!e.bytes || e.bytes.length <= 4) continue;
    offsets.set(e, extra);
    extra += e.bytes.length + (e.bytes.length % 2); // word-aligned
  }
  const pixelOffset = Math.ceil(extra / 8) * 8;
  entries.find((e) => e.tag === 273)!.value = pixelOffset;
  const out = new Uint8Array(pixelOffset + pixelBytes);
  const view = new DataView(out.buffer);
  out.set([0x49, 0x49]);
  view.setUint16(2, 42, true);
  view.setUint32(4, 8, true);
  view.setUint16(8, entries.length, true);
  entries.forEach((e, i) => {
    const at = 10 + i * 12;
    view.setUint16(at, e.tag, true);
    view.setUint16(at + 2, e.type, true);
    view.setUint32(at + 4, e.count, true);
    if (e.bytes) {
      const offset = offsets.get(e);
      if (offset === undefined) out.set(e.bytes, at + 8);
      else {
        view.setUint32(at + 8, offset, true);
        out.set(e.bytes, offset);
      }
    } else if (e.type === SHORT) view.setUint16(at + 8, e.value!, true);
    else view.setUint32(at + 8, e.value!, true);
  });
  view.setUint32(10 + entries.length * 12, 0, true); // no next IFD
  for (let i = 0; i < data.length; i++) {
    if (float) view.setFloat32(pixelOffset + i * 4, data[i], true);
    else view.setUint32(pixelOffset + i * 4, data[i], true);
  }
  return out;
}

/** NUL-terminated 7-bit ASCII (other characters become '?'), as TIFF's ASCII type requires. */
function asciiBytes(text: string): Uint8Array {
  const out = new Uint8Array(text.length + 1);
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    out[i] = c > 0 && c < 128 ? c : 63;
  }
  return out;
}
