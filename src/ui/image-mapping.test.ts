import { describe, expect, it } from 'vitest';
import { FLAGGED_RGB } from './colormaps';
import { contrastWindow, histogram, level, percentile, renderRgba, scaled, unscaled } from './image-mapping';

describe('image mapping', () => {
  it('windows on min/max of the unflagged values', () => {
    expect(contrastWindow([5, 1, 9, 65535], 'linear', 'minmax', [0, 0, 0, 1])).toEqual([1, 9]);
    expect(contrastWindow([], 'linear', 'minmax')).toEqual([0, 0]);
  });

  it('windows on the 0.5 and 99.5 percentiles (nearest rank)', () => {
    const values = Array.from({ length: 1001 }, (_, i) => i);
    values[1000] = 1e9; // one outlier
    expect(contrastWindow(values, 'linear', 'percentile')).toEqual([5, 995]);
    expect(percentile([1, 2, 3], 50)).toBe(2);
  });

  it('maps values to 8-bit levels, clamped', () => {
    expect(level(0, 0, 10)).toBe(0);
    expect(level(5, 0, 10)).toBe(128);
    expect(level(10, 0, 10)).toBe(255);
    expect(level(-3, 0, 10)).toBe(0);
    expect(level(30, 0, 10)).toBe(255);
    expect(level(3, 3, 3)).toBe(0);
  });

  it('uses log1p on the log scale and inverts it for the legend', () => {
    expect(scaled(0, 'log')).toBe(0);
    expect(scaled(Math.E - 1, 'log')).toBeCloseTo(1, 12);
    expect(unscaled(scaled(1234, 'log'), 'log')).toBeCloseTo(1234, 6);
  });

  it('renders gray RGBA and marks flagged pixels', () => {
    const { rgba, window } = renderRgba(
      [0, 10, 5, 99],
      { colormap: 'gray', scale: 'linear', contrast: 'minmax' },
      [0, 0, 0, 1],
    );
    expect(window).toEqual([0, 10]);
    expect(Array.from(rgba)).toEqual([
      0,
      0,
      0,
      255,
      255,
      255,
      255,
      255,
      128,
      128,
      128,
      255,
      ...FLAGGED_RGB,
      255,
    ]);
  });

  it('windows on chosen percentiles', () => {
    const values = Array.from({ length: 1001 }, (_, i) => i);
    expect(contrastWindow(values, 'linear', 'percentile', undefined, [2, 98])).toEqual([20, 980]);
    expect(contrastWindow(values, 'linear', 'percentile', undefined, [0, 100])).toEqual([0, 1000]);
  });

  it('bins unflagged values into a histogram over their range', () => {
    const h = histogram([0, 1, 2, 3, 4, 100], 'linear', 4, [0, 0, 0, 0, 0, 1]);
    expect([h.min, h.max]).toEqual([0, 4]);
    expect(Array.from(h.counts)).toEqual([1, 1, 1, 2]);
    expect(Array.from(histogram([7, 7], 'linear', 3).counts)).toEqual([2, 0, 0]);
    expect(histogram([], 'log', 3)).toEqual({ counts: new Uint32Array(3), min: 0, max: 0 });
  });
});
