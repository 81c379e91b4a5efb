import { describe, expect, it } from 'vitest';
import { COLORMAPS, colormapTable } from './colormaps';

describe('colormaps', () => {
  it('has 256 levels of gray from black to white', () => {
    const gray = colormapTable('gray');
    expect(gray.length).toBe(768);
    expect(Array.from(gray.slice(0, 3))).toEqual([0, 0, 0]);
    expect(Array.from(gray.slice(128 * 3, 129 * 3))).toEqual([128, 128, 128]);
    expect(Array.from(gray.slice(765))).toEqual([255, 255, 255]);
  });

  it("matches matplotlib's listed colours exactly (round(255 * value))", () => {
    // matplotlib's _cm_listed data at levels 0, 128 and 255.
    const anchors: Record<string, [number, [number, number, number]][]> = {
      viridis: [
        [0, [0.267004, 0.004874, 0.329415]],
        [128, [0.127568, 0.566949, 0.550556]],
        [255, [0.993248, 0.906157, 0.143936]],
      ],
      inferno: [
        [0, [0.001462, 0.000466, 0.013866]],
        [255, [0.988362, 0.998364, 0.644924]],
      ],
      magma: [
        [0, [0.001462, 0.000466, 0.013866]],
        [255, [0.987053, 0.991438, 0.749504]],
      ],
    };
    for (const [name, list] of Object.entries(anchors)) {
      const table = colormapTable(name as 'viridis');
      for (const [level, rgb] of list)
        expect(Array.from(table.slice(level * 3, level * 3 + 3))).toEqual(
          rgb.map((v) => Math.round(v * 255)),
        );
    }
  });

  it('has four maps of 256 levels, the perceptual ones rising in lightness', () => {
    expect(COLORMAPS).toEqual(['gray', 'viridis', 'inferno', 'magma']);
    for (const name of COLORMAPS) {
      const t = colormapTable(name);
      expect(t.length).toBe(768);
      const luma = (i: number) => 0.299 * t[i * 3] + 0.587 * t[i * 3 + 1] + 0.114 * t[i * 3 + 2];
      expect(luma(255)).toBeGreaterThan(luma(128));
      expect(luma(128)).toBeGreaterThan(luma(0));
    }
  });
});
