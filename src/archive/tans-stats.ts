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
