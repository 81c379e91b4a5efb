/** Deterministic test data for GPU tests: detector-like counts and full-range values. */

import { mulberry32 } from '../util/prng.ts';

/** mulberry32: a small seeded generator of uint32 values. */
export const rng = mulberry32;

/**
 * Sparse electron counts like a 4D-STEM frame: mostly 0, some 1-3, a bright disc of larger counts in the
 * middle, and rare hot values up to `max` (beyond 255 for uint16 so that the high bit planes are used).
 */
export function sparseCounts(
  frames: number,
  rows: number,
  cols: number,
  seed: number,
  max = 1833,
): Uint16Array {
  const next = rng(seed);
  const out = new Uint16Array(frames * rows * cols);
  const r2 = (Math.min(rows, cols) / 6) ** 2;
  for (let f = 0; f < frames; f++) {
    for (let y = 0; y < rows; y++) {
      for (let x = 0; x < cols; x++) {
        const u = next() / 2 ** 32;
        const inDisc = (y - rows / 2) ** 2 + (x - cols / 2) ** 2 < r2;
        let v = inDisc ? 20 + (next() % 200) : u < 0.9 ? 0 : u < 0.99 ? 1 + (next() % 3) : next() % 40;
        if (next() % 2000 === 0) v = next() % (max + 1);
        out[(f * rows + y) * cols + x] = v;
      }
    }
  }
  return out;
}

/** Uniform values over the whole range of the type. */
export function fullRange<T extends Uint8Array | Uint16Array | Uint32Array>(
  type: { new (n: number): T },
  n: number,
  seed: number,
): T {
  const next = rng(seed);
  const out = new type(n);
  for (let i = 0; i < n; i++) out[i] = next();
  return out;
}
