/**
 * The token alphabet of the archive codec: a hybrid unsigned integer code (as in JPEG XL's
 * `HybridUintConfig(split_exponent = 4, msb_in_token = 2, lsb_in_token = 0)`).
 *
 * - values 0..15 are their own token and carry no extra bits;
 * - a value v >= 16 with n = floor(log2 v) is token 16 + 4 (n - 4) + (the two bits of v below its leading
 *   one), followed by the n - 2 low bits of v as raw extra bits.
 *
 * Every value up to the dtype's maximum has a token, so rare large counts (up to 65,535 for uint16 and
 * 4,294,967,295 for uint32) are kept exactly: this is the codec's exception path. Detector counts are mostly
 * small, so the entropy-coded token carries nearly all the information and the raw bits are rare.
 */

/** Values below this are literal tokens. */
export const SPLIT = 16;
/** Bits of the value below its leading one that the token carries. */
export const MSB_IN_TOKEN = 2;

/** Number of tokens needed for values of `bits` bits (8 -> 32, 16 -> 64, 32 -> 128). */
export function tokenCount(bits: 8 | 16 | 32): number {
  return SPLIT + (bits - 4) * (1 << MSB_IN_TOKEN);
}

/** Token of a value (0 <= v < 2^32). */
export function tokenOf(v: number): number {
  if (v < SPLIT) return v;
  const n = 31 - Math.clz32(v);
  return SPLIT + ((n - 4) << MSB_IN_TOKEN) + ((v >>> (n - MSB_IN_TOKEN)) & 3);
}

/** Number of raw extra bits that follow a token. */
export function extraBitsOf(token: number): number {
  if (token < SPLIT) return 0;
  return 4 + ((token - SPLIT) >>> MSB_IN_TOKEN) - MSB_IN_TOKEN;
}

/** The value of a token and its extra bits. */
export function tokenValue(token: number, extra: number): number {
  if (token < SPLIT) return token;
  const n = 4 + ((token - SPLIT) >>> MSB_IN_TOKEN);
  return (((4 | (token & 3)) << (n - MSB_IN_TOKEN)) >>> 0) + extra;
}

/**
 * Neighbour context: values are coded with the table of (pixel class, bucket of the two values to their
 * left in the same detector row and lane; missing neighbours count 0). Each neighbour is capped at 16, so the
 * sum never overflows, and the sum is cut into NEIGHBOUR_BUCKETS buckets: 0, 1, 2, 3, 4-5, 6-7, 8-11, 12-15,
 * 16+. Measured on the demo acquisition: 9 % fewer bits than the class alone (docs/archive-format.md).
 */
export const NEIGHBOUR_BUCKETS = 9;

export function neighbourBucket(left1: number, left2: number): number {
  const n = Math.min(left1, 16) + Math.min(left2, 16);
  return n < 4 ? n : n < 6 ? 4 : n < 8 ? 5 : n < 12 ? 6 : n < 16 ? 7 : 8;
}

/**
 * Contexts of a run of `count` values starting at detector pixel `pixel` (a lane): class * NEIGHBOUR_BUCKETS
 * + neighbour bucket. Written into `out`.
 */
export function laneContexts(
  values: ArrayLike<number>,
  first: number,
  count: number,
  pixel: number,
  cols: number,
  classMap: Uint8Array,
  out: Uint16Array,
): Uint16Array {
  let l1 = 0;
  let l2 = 0;
  let col = pixel % cols;
  for (let i = 0; i < count; i++) {
    if (col === 0) {
      l1 = 0;
      l2 = 0;
    }
    out[i] = classMap[pixel + i] * NEIGHBOUR_BUCKETS + neighbourBucket(l1, l2);
    l2 = l1;
    l1 = values[first + i];
    col = col + 1 === cols ? 0 : col + 1;
  }
  return out;
}
