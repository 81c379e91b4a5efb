/**
 * Decodes lanes of a record (tans-encode.ts describes the stream): the lane walk of the CPU twins of the decode
 * passes (tans-compare.ts for src/shaders/tans-compare.wgsl). Every read is checked against the lane's words; a
 * lane that lies gets an error code and decodes no further. Codes match the shaders.
 */
import { extraBitsOf, NEIGHBOUR_BUCKETS, neighbourBucket, tokenValue } from './hybrid-uint';
import { type ArchiveDtype, DTYPE_BITS, type LaneGeometry, rawLaneWords, sliceRange } from './lanes';
import type { RecordTables } from './record-tables';
import type { Values } from './tans-stats';

export const LANE_OK = 0;
/** The lane's word range is reversed or outside the record's data. */
export const LANE_BAD_RANGE = 1;
/** The lane has more words than its values take raw. */
export const LANE_TOO_LONG = 2;
/** The lane is empty or its last word is 0 (no stop bit). */
export const LANE_NO_STOP_BIT = 3;
/** A read went past the start of the lane. */
export const LANE_UNDERRUN = 4;
/** After the last value the state is not the initial state, or bits are left over. */
export const LANE_BAD_END = 5;
/** A decoded token is outside the dtype's alphabet. */
export const LANE_BAD_TOKEN = 6;

export const LANE_ERROR_NAMES = [
  'ok',
  'lane range outside the record',
  'lane longer than raw',
  'no stop bit',
  'stream underrun',
  'bad final state',
  'token outside the alphabet',
] as const;

/** Reads `count` values of a raw lane. */
function unpackRaw(
  words: Uint32Array,
  at: number,
  count: number,
  dtype: ArchiveDtype,
  out: (i: number, v: number) => void,
) {
  const bits = DTYPE_BITS[dtype];
  const per = 32 / bits;
  const mask = bits === 32 ? 0xffffffff : (1 << bits) - 1;
  for (let i = 0; i < count; i++) {
    out(i, ((words[at + Math.floor(i / per)] >>> ((i % per) * bits)) & mask) >>> 0);
  }
}

/**
 * Decodes one lane stored in words[start .. end) and hands each value to `out(i, v)`. Returns an error code.
 */
export function decodeLane(
  words: Uint32Array,
  start: number,
  end: number,
  count: number,
  pixel: number,
  t: RecordTables,
  out: (i: number, v: number) => void,
  /** Decode only the first `limit` values (the end-of-lane checks then do not apply). */
  limit = count,
): number {
  if (!(start <= end && end <= words.length)) return LANE_BAD_RANGE;
  const n = end - start;
  const raw = rawLaneWords(count, t.dtype);
  if (n > raw) return LANE_TOO_LONG;
  if (n === raw) {
    unpackRaw(words, start, limit, t.dtype, out);
    return LANE_OK;
  }
  if (n === 0 || words[end - 1] === 0) return LANE_NO_STOP_BIT;
  let p = (n - 1) * 32 + (31 - Math.clz32(words[end - 1]));
  const read = (k: number): number => {
    // k <= 31; caller checks p >= k
    p -= k;
    const i = start + (p >>> 5);
    const sh = p & 31;
    let v = words[i] >>> sh;
    if (sh + k > 32) v |= words[i + 1] << (32 - sh);
    return k === 0 ? 0 : (v & (0xffffffff >>> (32 - k))) >>> 0;
  };
  const R = t.tableLog;
  const L = 1 << R;
  if (p < R) return LANE_UNDERRUN;
  let s = read(R);
  let l1 = 0;
  let l2 = 0;
  let col = pixel % t.cols;
  for (let i = 0; i < limit; i++) {
    if (col === 0) {
      l1 = 0;
      l2 = 0;
    }
    const c = t.classMap[pixel + i] * NEIGHBOUR_BUCKETS + neighbourBucket(l1, l2);
    const cell = t.decodeCells[c * L + s];
    const token = (cell >>> 16) & 0xff;
    if (token >= t.tokens) return LANE_BAD_TOKEN;
    const nb = (cell >>> 12) & 15;
    const eb = extraBitsOf(token);
    if (p < eb + nb) return LANE_UNDERRUN;
    const extra = read(eb);
    const v = tokenValue(token, extra);
    out(i, v);
    l2 = l1;
    l1 = v;
    col = col + 1 === t.cols ? 0 : col + 1;
    s = (cell & 0xfff) + read(nb);
  }
  if (limit === count && (s !== 0 || p !== 0)) return LANE_BAD_END;
  return LANE_OK;
}

/**
 * Decodes every lane of `frames` frames into `out` (frame-major values) and returns the per-lane error codes.
 * A failed lane's values are left as they were.
 */
export function tansDecode(
  words: Uint32Array,
  offsets: Uint32Array,
  frames: number,
  g: LaneGeometry,
  t: RecordTables,
  out: Values,
): Uint32Array {
  const errors = new Uint32Array(frames * g.slices);
  for (let f = 0; f < frames; f++) {
    for (let s = 0; s < g.slices; s++) {
      const lane = f * g.slices + s;
      const { first, count } = sliceRange(g, s);
      const base = f * g.pixels + first;
      errors[lane] = decodeLane(words, offsets[lane], offsets[lane + 1], count, first, t, (i, v) => {
        out[base + i] = v;
      });
    }
  }
  return errors;
}
