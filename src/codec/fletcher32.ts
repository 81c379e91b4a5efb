import { StemflowError } from '../errors';

/**
 * HDF5 Fletcher-32 checksum filter (id 3): the writer appends a 4-byte checksum (little-endian) of the
 * chunk. Checksum of big-endian 16-bit words (an odd last byte is the high byte of a word), sums folded
 * every 360 words, as H5_checksum_fletcher32.
 */
export function fletcher32(data: Uint8Array): number {
  const words = data.length >>> 1;
  let sum1 = 0;
  let sum2 = 0;
  let i = 0;
  let left = words;
  while (left > 0) {
    const n = Math.min(left, 360);
    left -= n;
    for (let w = 0; w < n; w++, i += 2) {
      sum1 = (sum1 + ((data[i] << 8) | data[i + 1])) >>> 0;
      sum2 = (sum2 + sum1) >>> 0;
    }
    sum1 = (sum1 & 0xffff) + (sum1 >>> 16);
    sum2 = (sum2 & 0xffff) + (sum2 >>> 16);
  }
  if (data.length % 2 === 1) {
    sum1 = (sum1 + (data[i] << 8)) >>> 0;
    sum2 = (sum2 + sum1) >>> 0;
    sum1 = (sum1 & 0xffff) + (sum1 >>> 16);
    sum2 = (sum2 & 0xffff) + (sum2 >>> 16);
  }
  sum1 = (sum1 & 0xffff) + (sum1 >>> 16);
  sum2 = (sum2 & 0xffff) + (sum2 >>> 16);
  return ((sum2 << 16) | sum1) >>> 0;
}

/**
 * Verifies and strips the Fletcher-32 checksum of a chunk. Accepts, as HDF5 does, the byte-swapped
 * checksum written by HDF5 before 1.6.3. Returns a view of the data without the checksum.
 */
export function fletcher32Decode(chunk: Uint8Array): Uint8Array {
  if (chunk.length < 4) {
    throw new StemflowError(
      'truncated',
      `A Fletcher-32 chunk has ${chunk.length} bytes, fewer than its checksum.`,
    );
  }
  const end = chunk.length - 4;
  const stored = (chunk[end] | (chunk[end + 1] << 8) | (chunk[end + 2] << 16) | (chunk[end + 3] << 24)) >>> 0;
  const data = chunk.subarray(0, end);
  const sum = fletcher32(data);
  const swapped = (((sum & 0x00ff00ff) << 8) | ((sum >>> 8) & 0x00ff00ff)) >>> 0;
  if (stored !== sum && stored !== swapped) {
    throw new StemflowError(
      'corrupt',
      `A chunk fails its Fletcher-32 checksum (stored ${stored.toString(16)}, computed ${sum.toString(16)}).`,
    );
  }
  return data;
}

/** Appends the Fletcher-32 checksum to a chunk (encode direction). */
export function fletcher32Encode(data: Uint8Array): Uint8Array {
  const out = new Uint8Array(data.length + 4);
  out.set(data);
  const sum = fletcher32(data);
  out[data.length] = sum & 0xff;
  out[data.length + 1] = (sum >>> 8) & 0xff;
  out[data.length + 2] = (sum >>> 16) & 0xff;
  out[data.length + 3] = sum >>> 24;
  return out;
}
