import { describe, expect, it } from 'vitest';
import { colormapTable, FLAGGED_RGB } from './colormaps';
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

describe('contrast window by selection, painting by packed words', () => {
  const prng = (seed: number) => () => {
    seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
    return seed / 2 ** 32;
  };

  it('gives the sorted nearest-rank percentiles on random, repetitive, sorted and tiny inputs', () => {
    const next = prng(7);
    const inputs: number[][] = [
      Array.from({ length: 10_001 }, () => Math.floor(next() * 1e6)),
      Array.from({ length: 5_000 }, () => Math.floor(next() * 4)), // many ties
      Array.from({ length: 3_000 }, (_, i) => i), // sorted
      Array.from({ length: 3_000 }, (_, i) => 3_000 - i), // reversed
      [5],
      [2, 1],
      new Array(1000).fill(9),
    ];
    for (const values of inputs) {
      const sorted = Float64Array.from(values).sort();
      for (const p of [
        [0.5, 99.5],
        [0, 100],
        [1, 99],
        [50, 50],
        [99, 1],
      ] as [number, number][]) {
        expect(contrastWindow(values, 'linear', 'percentile', undefined, p)).toEqual([
          percentile(sorted, p[0]),
          percentile(sorted, p[1]),
        ]);
      }
      const logSorted = Float64Array.from(values, (v) => scaled(v, 'log')).sort();
      expect(contrastWindow(values, 'log', 'percentile')).toEqual([
        percentile(logSorted, 0.5),
        percentile(logSorted, 99.5),
      ]);
    }
  });

  it('paints every pixel as level() and the colormap say, flagged pixels in their colour', () => {
    const next = prng(3);
    const values = Array.from({ length: 4096 }, () => Math.floor(next() * 5000) - 100);
    values[7] = Number.NaN;
    const exclude = values.map((_, i) => (i % 97 === 0 ? 1 : 0));
    const lut = colormapTable('viridis');
    for (const scale of ['linear', 'log'] as const) {
      const { rgba, window } = renderRgba(
        values,
        { colormap: 'viridis', scale, contrast: 'percentile' },
        exclude,
      );
      for (let i = 0; i < values.length; i++) {
        const px = Array.from(rgba.subarray(4 * i, 4 * i + 4));
        if (exclude[i]) expect(px).toEqual([...FLAGGED_RGB, 255]);
        else {
          const l = level(scaled(values[i], scale), window[0], window[1]);
          expect(px).toEqual([lut[3 * l], lut[3 * l + 1], lut[3 * l + 2], 255]);
        }
      }
    }
  });
});
