/**
 * CPU twin of the `bitunshuffle` GPU pass (src/shaders/bitunshuffle.wgsl), written independently of the codec
 * in src/codec. Frames of `frameElems` elements lie back to back; each frame is one bitshuffle chunk: full
 * blocks of `blockElems` elements, one short block of (frameElems mod blockElems) rounded down to a multiple
 * of 8, then (frameElems mod 8) raw little-endian elements. Output: one u32 per element, as the GPU writes.
 */
import { StemflowError } from '../errors.ts';

export type ElemSize = 1 | 2 | 4;

export interface BitshuffleShape {
  frameElems: number;
  frameCount: number;
  elemSize: ElemSize;
  /** Elements per block: a positive multiple of 8. */
  blockElems: number;
}

export function checkShape({ frameElems, frameCount, elemSize, blockElems }: BitshuffleShape): void {
  if (![1, 2, 4].includes(elemSize)) {
    throw new StemflowError('invalid', `Element size ${elemSize} is not 1, 2 or 4 bytes.`);
  }
  if (!Number.isInteger(blockElems) || blockElems <= 0 || blockElems % 8 !== 0) {
    throw new StemflowError(
      'invalid',
      `A bitshuffle block of ${blockElems} elements is not a multiple of 8.`,
    );
  }
  if (!Number.isInteger(frameElems) || frameElems <= 0 || !Number.isInteger(frameCount) || frameCount < 0) {
    throw new StemflowError(
      'invalid',
      `${frameCount} frames of ${frameElems} elements is not a valid shape.`,
    );
  }
}

/** Bit-shuffled bytes (frameCount * frameElems * elemSize) to element values. */
export function bitunshuffle(bytes: Uint8Array, shape: BitshuffleShape): Uint32Array {
  checkShape(shape);
  const { frameElems: n, frameCount, elemSize } = shape;
  if (bytes.length < n * frameCount * elemSize) {
    throw new StemflowError(
      'invalid',
      `${bytes.length} bytes cannot hold ${frameCount} frames of ${n} elements.`,
    );
  }
  const out = new Uint32Array(n * frameCount);
  for (let f = 0; f < frameCount; f++) {
    forEachBlock(n, shape.blockElems, (first, count) => {
      const base = (f * n + first) * elemSize;
      const planeBytes = count / 8;
      for (let p = 0; p < 8 * elemSize; p++) {
        for (let i = 0; i < count; i++) {
          const bit = (bytes[base + p * planeBytes + (i >> 3)] >> (i & 7)) & 1;
          out[f * n + first + i] |= bit << p;
        }
      }
    });
    for (let e = n - (n % 8); e < n; e++) out[f * n + e] = readRaw(bytes, (f * n + e) * elemSize, elemSize);
  }
  return out;
}

/** The forward transform (values to bit-shuffled bytes), to build test inputs. */
export function bitshuffle(values: ArrayLike<number>, shape: BitshuffleShape): Uint8Array {
  checkShape(shape);
  const { frameElems: n, frameCount, elemSize } = shape;
  const bytes = new Uint8Array(n * frameCount * elemSize);
  for (let f = 0; f < frameCount; f++) {
    forEachBlock(n, shape.blockElems, (first, count) => {
      const base = (f * n + first) * elemSize;
      const planeBytes = count / 8;
      for (let p = 0; p < 8 * elemSize; p++) {
        for (let i = 0; i < count; i++) {
          const bit = (values[f * n + first + i] >>> p) & 1;
          bytes[base + p * planeBytes + (i >> 3)] |= bit << (i & 7);
        }
      }
    });
    for (let e = n - (n % 8); e < n; e++) {
      for (let j = 0; j < elemSize; j++)
        bytes[(f * n + e) * elemSize + j] = (values[f * n + e] >>> (8 * j)) & 0xff;
    }
  }
  return bytes;
}

/** Calls `visit(firstElement, elementCount)` for each bit-shuffled block of a chunk of n elements. */
function forEachBlock(n: number, blockElems: number, visit: (first: number, count: number) => void): void {
  const full = Math.floor(n / blockElems);
  for (let b = 0; b < full; b++) visit(b * blockElems, blockElems);
  const last = (n % blockElems) - (n % 8);
  if (last > 0) visit(full * blockElems, last);
}

function readRaw(bytes: Uint8Array, at: number, elemSize: number): number {
  let v = 0;
  for (let j = 0; j < elemSize; j++) v += bytes[at + j] * 2 ** (8 * j);
  return v;
}
