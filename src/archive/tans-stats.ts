/**
 * CPU twin of src/shaders/tans-stats.wgsl: the statistics a record's tables are built from.
 * - `tansPixelSums`: per detector pixel, the sum over the record's frames (float64 here; (lo, hi) u32 on the GPU);
 * - `tansTokenHistogram`: per (context, token), how many values of the record have that token, with each
 *   value's context as its lane sees it (hybrid-uint.ts `laneContexts`).
 */
import { laneContexts, NEIGHBOUR_BUCKETS, tokenOf } from './hybrid-uint';
import { type LaneGeometry, sliceRange } from './lanes';

export type Values = Uint8Array | Uint16Array | Uint32Array;

export function tansPixelSums(values: Values, frames: number, pixels: number): Float64Array {
  const sums = new Float64Array(pixels);
  for (let f = 0; f < frames; f++) {
    const base = f * pixels;
    for (let p = 0; p < pixels; p++) sums[p] += values[base + p];
  }
  return sums;
}

export function tansTokenHistogram(
  values: Values,
  frames: number,
  g: LaneGeometry,
  cols: number,
  classMap: Uint8Array,
  classes: number,
  tokens: number,
): Uint32Array {
  const hist = new Uint32Array(classes * NEIGHBOUR_BUCKETS * tokens);
  const ctx = new Uint16Array(g.slicePixels);
  for (let f = 0; f < frames; f++) {
    for (let s = 0; s < g.slices; s++) {
      const { first, count } = sliceRange(g, s);
      const base = f * g.pixels + first;
      laneContexts(values, base, count, first, cols, classMap, ctx);
      for (let i = 0; i < count; i++) hist[ctx[i] * tokens + tokenOf(values[base + i])]++;
    }
  }
  return hist;
}

/**
 * Pixel classes (contexts) from the record's per-pixel sums: pixels ranked by sum (ties by pixel index) and
 * cut into `classes` groups of (nearly) equal size, class 0 the dimmest. A pixel's class picks the tANS
 * table its values are coded with, so pixels of similar mean share a distribution.
 */
export function classMapFromSums(sums: Float64Array, classes: number): Uint8Array {
  const pixels = sums.length;
  const order = Array.from({ length: pixels }, (_, i) => i);
  order.sort((a, b) => sums[a] - sums[b] || a - b);
  const map = new Uint8Array(pixels);
  for (let rank = 0; rank < pixels; rank++) map[order[rank]] = Math.floor((rank * classes) / pixels);
  return map;
}

/** The audit that tans-stats.wgsl's `main` gathers with the sums: max value, values above 255. */
export function tansStatsAudit(values: Values): { max: number; above255: number } {
  let max = 0;
  let above255 = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v > max) max = v;
    if (v > 255) above255++;
  }
  return { max, above255 };
}

/** Per-pixel sums from the GPU's (lo, hi) u32 pairs (exact below 2^53, which a record cannot reach). */
export function sumsFromPairs(pairs: Uint32Array): Float64Array {
  const sums = new Float64Array(pairs.length / 2);
  for (let p = 0; p < sums.length; p++) sums[p] = pairs[2 * p] + pairs[2 * p + 1] * 2 ** 32;
  return sums;
}

/**
 * The same class map as `classMapFromSums`, in linear time (the encoder builds one per record on the host): a
 * stable LSD radix sort of the pixels by sum (11-bit digits of the low and high 32 bits; digits that every
 * pixel shares are skipped), so equal sums keep pixel order, as in `classMapFromSums`. Sums must be exact
 * non-negative integers below 2^53 (they are).
 */
export function classMapFromSumsFast(sums: Float64Array, classes: number): Uint8Array {
  const pixels = sums.length;
  const lo = new Uint32Array(pixels);
  const hi = new Uint32Array(pixels);
  for (let p = 0; p < pixels; p++) {
    const s = sums[p];
    const h = Math.floor(s / 2 ** 32);
    hi[p] = h;
    lo[p] = s - h * 2 ** 32;
  }
  let order = new Uint32Array(pixels);
  let next = new Uint32Array(pixels);
  for (let p = 0; p < pixels; p++) order[p] = p;
  const count = new Uint32Array(2048);
  for (const [key, shift] of [
    [lo, 0],
    [lo, 11],
    [lo, 22],
    [hi, 0],
    [hi, 11],
    [hi, 22],
  ] as const) {
    count.fill(0);
    for (let p = 0; p < pixels; p++) count[(key[p] >>> shift) & 2047]++;
    if (count[(key[0] >>> shift) & 2047] === pixels) continue; // every pixel has this digit
    let at = 0;
    for (let d = 0; d < 2048; d++) {
      const n = count[d];
      count[d] = at;
      at += n;
    }
    for (let i = 0; i < pixels; i++) {
      const p = order[i];
      next[count[(key[p] >>> shift) & 2047]++] = p;
    }
    [order, next] = [next, order];
  }
  const map = new Uint8Array(pixels);
  for (let rank = 0; rank < pixels; rank++) map[order[rank]] = Math.floor((rank * classes) / pixels);
  return map;
}
