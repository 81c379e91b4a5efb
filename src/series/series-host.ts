/**
 * The host side of a series query (src/series/series.ts): which pixels each acquisition's lanes decode, and the
 * exact images from the sums read back.
 */
import type { LaneGeometry } from '../archive/lanes';
import { neededPixels } from './tans-query';

/**
 * One acquisition's mask bits for a query: the full mask (bit 0), or, from the previous mask, the pixels a delta
 * adds (bit 0) and removes (bit 1), whichever decodes less (a lane decodes up to the last pixel it needs; `mode`
 * may force either); flagged pixels are never included. `need` holds the pixels to decode per slice, then the
 * active slices' indices.
 */
export function chooseQueryBits(
  mask: Uint8Array,
  previous: Uint8Array | null,
  flagged: Uint8Array,
  geometry: LaneGeometry,
  mode: 'auto' | 'full' | 'delta',
): { bits: Uint8Array; need: Uint32Array; mode: 'full' | 'delta'; decoded: number } {
  const pixels = mask.length;
  const full = new Uint8Array(pixels);
  const delta = new Uint8Array(pixels);
  for (let i = 0; i < pixels; i++) {
    if (flagged[i]) continue;
    const now = mask[i] !== 0;
    full[i] = now ? 1 : 0;
    if (previous) {
      const before = previous[i] !== 0;
      delta[i] = now && !before ? 1 : !now && before ? 2 : 0;
    }
  }
  const needFull = neededPixels(full, geometry);
  const needDelta = neededPixels(delta, geometry);
  const cost = (n: Uint32Array) => n.reduce((x, y) => x + y, 0);
  const useDelta =
    previous !== null && mode !== 'full' && (mode === 'delta' || cost(needDelta) < cost(needFull));
  const chosen = useDelta ? needDelta : needFull;
  const need = new Uint32Array(2 * geometry.slices);
  need.set(chosen);
  let k = 0;
  for (let s = 0; s < geometry.slices; s++) if (chosen[s] > 0) need[geometry.slices + k++] = s;
  return { bits: useDelta ? delta : full, need, mode: useDelta ? 'delta' : 'full', decoded: cost(chosen) };
}

/**
 * The exact images from the mapped readback: per acquisition, accumulator A (u64 as lo, hi words) of every frame
 * from `wordOffset`, and for a delta (`before` given) accumulator B after it: image = before + A - B. Every image
 * value fits 2^53.
 */
export function combineImages(
  words: Uint32Array,
  acquisitions: { frames: number; wordOffset: number; before: Float64Array | null }[],
): Float64Array[] {
  return acquisitions.map(({ frames: n, wordOffset: base, before }) => {
    const out = new Float64Array(n);
    if (!before) {
      for (let f = 0; f < n; f++) out[f] = words[base + 2 * f] + words[base + 2 * f + 1] * 2 ** 32;
      return out;
    }
    const removedBase = base + 2 * n;
    for (let f = 0; f < n; f++) {
      const added = words[base + 2 * f] + words[base + 2 * f + 1] * 2 ** 32;
      const removed = words[removedBase + 2 * f] + words[removedBase + 2 * f + 1] * 2 ** 32;
      out[f] = before[f] + added - removed;
    }
    return out;
  });
}
