import { StemflowError } from '../errors';

/** NumPy .npy version 1.0 files: little-endian unsigned integer or float64 arrays, C order. */
export type NpyArray = Uint8Array | Uint16Array | Uint32Array | Float32Array | Float64Array;

const DESCR: Record<string, string> = {
  Uint8Array: '|u1',
  Uint16Array: '<u2',
  Uint32Array: '<u4',
  Float32Array: '<f4',
  Float64Array: '<f8',
};

/** Encodes an array with the given shape as .npy bytes (header padded so data starts on a 64-byte boundary). */
export function encodeNpy(data: NpyArray, shape: number[]): Uint8Array {
  const n = shape.reduce((a, b) => a * b, 1);
  if (n !== data.length)
    throw new StemflowError('invalid', `Shape ${shape.join('x')} does not hold ${data.length} values`);
  const descr = DESCR[data.constructor.name];
  const shapeText = shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(', ')})`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shapeText}, }`;
  const unpadded = 10 + header.length + 1;
  header += ' '.repeat((64 - (unpadded % 64)) % 64) + '\n';
  const out = new Uint8Array(10 + header.length + data.byteLength);
  out.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0]);
  new DataView(out.buffer).setUint16(8, header.length, true);
  for (let i = 0; i < header.length; i++) out[10 + i] = header.charCodeAt(i);
  out.set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength), 10 + header.length);
  return out;
}

/** Decodes .npy bytes written by numpy or encodeNpy (little-endian u1/u2/u4/f4/f8, C order). */
export function decodeNpy(bytes: Uint8Array): { data: NpyArray; shape: number[] } {
  const magic = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59];
  if (bytes.length < 10 || magic.some((b, i) => bytes[i] !== b))
    throw new StemflowError('corrupt', 'Not a .npy file');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const major = bytes[6];
  const headerLength = major === 1 ? view.getUint16(8, true) : view.getUint32(8, true);
  const start = (major === 1 ? 10 : 12) + headerLength;
  if (start > bytes.length)
    throw new StemflowError('truncated', 'The .npy header runs past the end of the file');
  const header = new TextDecoder().decode(bytes.subarray(major === 1 ? 10 : 12, start));
  const descr = /'descr':\s*'([^']+)'/.exec(header)?.[1];
  const fortran = /'fortran_order':\s*True/.test(header);
  const shapeText = /'shape':\s*\(([^)]*)\)/.exec(header)?.[1];
  if (!descr || shapeText === undefined || fortran)
    throw new StemflowError('unsupported', `Unsupported .npy header: ${header.trim()}`);
  const shape = shapeText
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map(Number);
  const n = shape.reduce((a, b) => a * b, 1);
  const body = new Uint8Array(bytes.subarray(start)); // a copy: Node Buffers slice without copying
  const make: Record<string, (b: ArrayBuffer) => NpyArray> = {
    '|u1': (b) => new Uint8Array(b, 0, n),
    '<u2': (b) => new Uint16Array(b, 0, n),
    '<u4': (b) => new Uint32Array(b, 0, n),
    '<f4': (b) => new Float32Array(b, 0, n),
    '<f8': (b) => new Float64Array(b, 0, n),
  };
  const ctor = make[descr];
  if (!ctor) throw new StemflowError('unsupported', `Unsupported .npy dtype ${descr}`);
  const itemSize = Number(descr.slice(2));
  if (body.byteLength < n * itemSize) {
    throw new StemflowError(
      'truncated',
      `The .npy file holds ${body.byteLength} data bytes; shape ${shape.join('x')} needs ${n * itemSize}`,
    );
  }
  return { data: ctor(body.buffer as ArrayBuffer), shape };
}
