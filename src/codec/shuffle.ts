/**
 * HDF5 byte shuffle filter (id 2, cd_values[0] = element size). Byte j of element i is stored at
 * j * n + i, where n = floor(bytes / elemSize); the (bytes mod elemSize) leftover bytes are copied raw at
 * the end. Like the HDF5 library, the filter leaves data untouched for 1-byte elements or fewer than 2
 * elements.
 */

function isIdentity(length: number, elemSize: number): boolean {
  return elemSize <= 1 || Math.floor(length / elemSize) <= 1;
}

/** Applies the HDF5 byte shuffle (encode direction). Returns a new buffer. */
export function shuffle(src: Uint8Array, elemSize: number): Uint8Array {
  if (isIdentity(src.length, elemSize)) return src.slice();
  const n = Math.floor(src.length / elemSize);
  const dst = new Uint8Array(src.length);
  for (let j = 0; j < elemSize; j++) {
    let o = j * n;
    for (let s = j, end = n * elemSize; s < end; s += elemSize) dst[o++] = src[s];
  }
  dst.set(src.subarray(n * elemSize), n * elemSize);
  return dst;
}

/** Inverts the HDF5 byte shuffle (decode direction). Returns a new buffer. */
export function unshuffle(src: Uint8Array, elemSize: number): Uint8Array {
  if (isIdentity(src.length, elemSize)) return src.slice();
  const n = Math.floor(src.length / elemSize);
  const dst = new Uint8Array(src.length);
  for (let j = 0; j < elemSize; j++) {
    let s = j * n;
    for (let o = j, end = n * elemSize; o < end; o += elemSize) dst[o] = src[s++];
  }
  dst.set(src.subarray(n * elemSize), n * elemSize);
  return dst;
}
