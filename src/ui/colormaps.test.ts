import { describe, expect, it } from 'vitest';
import { colormapTable } from './colormaps';

describe('colormaps', () => {
  it('has 256 levels of gray from black to white', () => {
    const gray = colormapTable('gray');
    expect(gray.length).toBe(768);
    expect(Array.from(gray.slice(0, 3))).toEqual([0, 0, 0]);
    expect(Array.from(gray.slice(128 * 3, 129 * 3))).toEqual([128, 128, 128]);
    expect(Array.from(gray.slice(765))).toEqual([255, 255, 255]);
  });

  it('follows matplotlib viridis at its anchor levels (within 6/255)', () => {
    // matplotlib's viridis at levels 0, 128 and 255.
    const anchors: [number, [number, number, number]][] = [
      [0, [0.267004, 0.004874, 0.329415]],
      [128, [0.127568, 0.566949, 0.550556]],
      [255, [0.993248, 0.906157, 0.143936]],
    ];
    const viridis = colormapTable('viridis');
    for (const [level, rgb] of anchors) {
      for (let k = 0; k < 3; k++)
        expect(Math.abs(viridis[level * 3 + k] - rgb[k] * 255)).toBeLessThanOrEqual(6);
    }
  });

  it('makes viridis brighter (in green) at every level', () => {
    const viridis = colormapTable('viridis');
    for (let i = 1; i < 256; i++) expect(viridis[i * 3 + 1]).toBeGreaterThanOrEqual(viridis[(i - 1) * 3 + 1]);
  });
});
