/**
 * CPU twin of src/shaders/tans-encode.wgsl: tANS-encodes every lane of a record.
 *
 * A lane's stream is u32 words, bits written least significant first in encoding order; the encoder walks
 * the lane's values last to first and, per value, writes the state's low bits (the transition) and then the
 * token's extra bits; at the end it writes the final state (tableLog bits) and a stop bit 1, and pads with
 * zeros to a word. The decoder reads the stream backwards from the stop bit. A lane whose stream would take
 * as many words as its values stored raw, or more, is stored raw instead (the decoder tells the two apart by
 * the word count alone).
 */
import { extraBitsOf, laneContexts, tokenOf } from './hybrid-uint';
import { type ArchiveDtype, DTYPE_BITS, type LaneGeometry, rawLaneWords, sliceRange } from './lanes';
import type { RecordTables } from './record-tables';
import type { Values } from './tans-stats';

export const ENCODE_OK = 0;
/** A value's token has frequency 0 in its class table: the tables were not built from these values. */
export const ENCODE_TOKEN_ABSENT = 1;

/** Writes bits LSB-first into a growing word list. */
class BitWriter {
  words: number[] = [];
  private acc = 0;
  private n = 0;
  write(v: number, k: number): void {
    if (k === 0) return;
    this.acc = (this.acc | (v << this.n)) >>> 0;
    if (this.n + k >= 32) {
      this.words.push(this.acc);
      this.acc = this.n === 0 ? 0 : v >>> (32 - this.n);
      this.n = this.n + k - 32;
    } else {
      this.n += k;
    }
  }
  finish(): number[] {
    if (this.n > 0) this.words.push(this.acc);
    this.acc = 0;
    this.n = 0;
    return this.words;
  }
}

/** Packs `count` values starting at `first` little-endian at the dtype's width. */
export function packRaw(values: Values, first: number, count: number, dtype: ArchiveDtype): Uint32Array {
  const out = new Uint32Array(rawLaneWords(count, dtype));
  const bits = DTYPE_BITS[dtype];
  const per = 32 / bits;
  for (let i = 0; i < count; i++) {
    const w = Math.floor(i / per);
    out[w] = (out[w] | (values[first + i] << ((i % per) * bits))) >>> 0;
  }
  return out;
}

/** Encodes one lane: the values at values[first .. first + count) whose pixels start at `pixel`. */
export function encodeLane(
  values: Values,
  first: number,
  count: number,
  pixel: number,
  t: RecordTables,
): { words: Uint32Array; error: number } {
  const R = t.tableLog;
  const L = 1 << R;
  const raw = rawLaneWords(count, t.dtype);
  const out = new BitWriter();
  const contexts = laneContexts(values, first, count, pixel, t.cols, t.classMap, new Uint16Array(count));
  let x = L;
  for (let i = count - 1; i >= 0; i--) {
    const v = values[first + i];
    const token = tokenOf(v);
    const c = contexts[i];
    const sym = t.encodeSymbols[c * t.tokens + token];
    const f = sym & 0xffff;
    if (f === 0) return { words: new Uint32Array(0), error: ENCODE_TOKEN_ABSENT };
    let nb = R - (31 - Math.clz32(f));
    if (x >>> nb < f) nb--;
    out.write(x & ((1 << nb) - 1), nb);
    x = L + t.encodePositions[c * L + (sym >>> 16) + (x >>> nb) - f];
    const eb = extraBitsOf(token);
    if (eb > 0) out.write(v & ((1 << eb) - 1), eb);
    if (out.words.length >= raw) return { words: packRaw(values, first, count, t.dtype), error: ENCODE_OK };
  }
  out.write(x - L, R);
  out.write(1, 1);
  const words = out.finish();
  if (words.length >= raw) return { words: packRaw(values, first, count, t.dtype), error: ENCODE_OK };
  return { words: Uint32Array.from(words), error: ENCODE_OK };
}

export interface EncodedLanes {
  /** Word offset of each lane in `words`, plus the end (lanes + 1 entries). */
  offsets: Uint32Array;
  words: Uint32Array;
  /** Per lane: ENCODE_OK or ENCODE_TOKEN_ABSENT. */
  errors: Uint32Array;
}

/** Encodes all lanes of `frames` frames (values frame-major, `g.pixels` per frame). */
export function tansEncode(values: Values, frames: number, g: LaneGeometry, t: RecordTables): EncodedLanes {
  const lanes = frames * g.slices;
  const parts: Uint32Array[] = [];
  const offsets = new Uint32Array(lanes + 1);
  const errors = new Uint32Array(lanes);
  let total = 0;
  for (let f = 0; f < frames; f++) {
    for (let s = 0; s < g.slices; s++) {
      const lane = f * g.slices + s;
      const { first, count } = sliceRange(g, s);
      const { words, error } = encodeLane(values, f * g.pixels + first, count, first, t);
      errors[lane] = error;
      parts.push(words);
      offsets[lane] = total;
      total += words.length;
    }
  }
  offsets[lanes] = total;
  const words = new Uint32Array(total);
  for (let lane = 0; lane < lanes; lane++) words.set(parts[lane], offsets[lane]);
  return { offsets, words, errors };
}
