import { describe, expect, it } from 'vitest';
import type { LaneGeometry } from '../archive/lanes';
import { chooseQueryBits, combineImages } from './series-host';

/** 4 x 4 detector in 2 slices of 8 pixels (2 rows each). */
const g = { pixels: 16, slices: 2, slicePixels: 8 } as LaneGeometry;
const mask = (...on: number[]) => {
  const m = new Uint8Array(16);
  for (const i of on) m[i] = 1;
  return m;
};

describe('chooseQueryBits: the pixels a query decodes', () => {
  it('a full mask without flagged pixels, the slices to decode up to their last needed pixel', () => {
    const flagged = mask(5);
    const q = chooseQueryBits(mask(1, 5, 6), null, flagged, g, 'auto');
    expect(q.mode).toBe('full');
    expect(Array.from(q.bits)).toEqual([0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    // Slice 0 decodes its pixels 0..6 (7), slice 1 nothing; the active list holds slice 0.
    expect(Array.from(q.need)).toEqual([7, 0, 0, 0]);
    expect(q.decoded).toBe(7);
  });

  it('a delta when it decodes less: added pixels on bit 0, removed on bit 1', () => {
    const before = mask(0, 1, 2, 3, 4, 5, 6, 7, 8);
    const now = mask(0, 1, 2, 3, 4, 5, 6, 7, 9);
    const q = chooseQueryBits(now, before, new Uint8Array(16), g, 'auto');
    expect(q.mode).toBe('delta');
    expect(q.bits[8]).toBe(2);
    expect(q.bits[9]).toBe(1);
    expect(q.bits.reduce((n, b) => n + (b ? 1 : 0), 0)).toBe(2);
    // Slice 0 needs nothing; slice 1 decodes its pixels 0..1.
    expect(Array.from(q.need)).toEqual([0, 2, 1, 0]);
    expect(q.decoded).toBe(2);
  });

  it('the full mask when it ends earlier than the delta, or when asked; a delta when asked', () => {
    const before = mask(15);
    const now = mask(0);
    expect(chooseQueryBits(now, before, new Uint8Array(16), g, 'auto').mode).toBe('full');
    expect(chooseQueryBits(now, before, new Uint8Array(16), g, 'delta').mode).toBe('delta');
    expect(chooseQueryBits(mask(9), mask(8), new Uint8Array(16), g, 'full').mode).toBe('full');
    expect(chooseQueryBits(mask(9), null, new Uint8Array(16), g, 'delta').mode).toBe('full');
  });
});

describe('combineImages: exact images from the u64 sums read back', () => {
  it('full images from accumulator A; delta images as before + A - B; sums above 2^32', () => {
    const big = 2 ** 40 + 12_345;
    const words = new Uint32Array([
      // acquisition 0 (full): 3 frames of A
      7,
      0,
      big % 2 ** 32,
      Math.floor(big / 2 ** 32),
      0,
      0,
      // acquisition 1 (delta): 2 frames of A, then 2 of B
      5,
      0,
      0,
      1,
      2,
      0,
      1,
      0,
    ]);
    const [full, delta] = combineImages(words, [
      { frames: 3, wordOffset: 0, before: null },
      { frames: 2, wordOffset: 6, before: new Float64Array([100, 2 ** 33]) },
    ]);
    expect(Array.from(full)).toEqual([7, big, 0]);
    expect(Array.from(delta)).toEqual([100 + 5 - 2, 2 ** 33 + 2 ** 32 - 1]);
  });
});
