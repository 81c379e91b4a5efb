import { describe, expect, it } from 'vitest';
import {
  annulus,
  brightestRegionCentroid,
  centralValue,
  countCovered,
  defaultGeometry,
  disk,
  floorSqrt,
  halfCentralRadius,
  inscribedRadius,
  insideCircle,
  maskOutline,
  median3x3,
  quantize,
  radialProfile,
  regionContains,
  regionMask,
} from './detector-geometry';

/** A synthetic summed pattern: `inside` counts in a disk of radius r around (cx, cy), `outside` elsewhere. */
function diskPattern(
  rows: number,
  cols: number,
  cx: number,
  cy: number,
  r: number,
  inside = 1000,
  outside = 10,
) {
  const sum = new Float64Array(rows * cols);
  for (let row = 0; row < rows; row++) {
    for (let col = 0; col < cols; col++) {
      sum[row * cols + col] = (col - cx) ** 2 + (row - cy) ** 2 <= r * r ? inside : outside;
    }
  }
  return sum;
}

describe('coverage rule', () => {
  it('counts a pixel whose centre lies exactly on the circle as inside', () => {
    expect(insideCircle(0, 3, 0, 0, 3)).toBe(true);
    expect(insideCircle(3, 4, 0, 0, 5)).toBe(true); // 3-4-5: on the circle
    expect(insideCircle(3, 4, 0, 0, 5 - 1 / 256)).toBe(false);
  });

  it('quantizes centres and radii to 1/256 pixel', () => {
    expect(quantize(1 / 3)).toBe(85 / 256);
    expect(disk(1.0001, 2.9999, 0.1)).toEqual({ kind: 'disk', cx: 1, cy: 3, r: 26 / 256 });
  });

  it('gives a radius-1 disk on a pixel centre exactly 5 pixels (the centre and its 4 neighbours)', () => {
    const mask = regionMask(disk(2, 2, 1), 5, 5);
    expect(Array.from(mask)).toEqual([
      0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0,
    ]);
  });

  it('gives a disk centred on a pixel corner a symmetric cover', () => {
    // Centre (1.5, 1.5); the four central pixels are at distance sqrt(0.5) ~ 0.707.
    expect(countCovered(regionMask(disk(1.5, 1.5, 181 / 256), 4, 4))).toBe(0);
    expect(countCovered(regionMask(disk(1.5, 1.5, 182 / 256), 4, 4))).toBe(4);
  });

  it('matches the lattice-point count of a circle (Gauss circle problem) for integer radii', () => {
    // N(r) = number of integer points with x^2 + y^2 <= r^2: N(1)=5, N(2)=13, N(3)=29, N(4)=49, N(5)=81, N(10)=317.
    const expected: Record<number, number> = { 1: 5, 2: 13, 3: 29, 4: 49, 5: 81, 10: 317 };
    for (const [r, n] of Object.entries(expected)) {
      expect(countCovered(regionMask(disk(20, 20, Number(r)), 41, 41))).toBe(n);
    }
  });

  it('makes an annulus the outer disk minus the inner disk (inner boundary excluded, outer included)', () => {
    const a = annulus(20, 20, 2, 5);
    expect(countCovered(regionMask(a, 41, 41))).toBe(81 - 13);
    expect(regionContains(a, 20, 22)).toBe(false); // d = 2: on the inner circle, excluded
    expect(regionContains(a, 20, 25)).toBe(true); // d = 5: on the outer circle, included
    expect(regionContains(a, 20, 26)).toBe(false);
  });

  it('is exact for fractional quantized geometry (no rounding at the boundary)', () => {
    // Pixel (7, 13) seen from (13 - 3/256, 7 - 4/256): a 3-4-5 triangle scaled by 1/256, d = 5/256 exactly.
    expect(insideCircle(7, 13, 13 - 3 / 256, 7 - 4 / 256, 5 / 256)).toBe(true);
    expect(insideCircle(7, 13, 13 - 3 / 256, 7 - 4 / 256, 4 / 256)).toBe(false);
    // d = 1.25 exactly from (9.25, 6): on the circle of radius 1.25, outside the next smaller radius.
    expect(insideCircle(7, 10, 9.25, 6, 1.25)).toBe(true);
    expect(insideCircle(7, 10, 9.25, 6, 1.25 - 1 / 256)).toBe(false);
    // Far from the origin: centre (1000 + 1/256, 2000 - 1/256), pixel at (2000 + 30, 1000 + 40): still exact.
    const cx = 1000 + 1 / 256;
    const cy = 2000 - 1 / 256;
    const r = quantize(Math.hypot(40 - 1 / 256, 30 + 1 / 256));
    const d2 = (40 - 1 / 256) ** 2 + (30 + 1 / 256) ** 2;
    expect(insideCircle(2030, 1040, cx, cy, r)).toBe(d2 <= r * r);
  });

  it('computes floor(sqrt) exactly at perfect squares', () => {
    for (let k = 0; k < 200; k++) {
      expect(floorSqrt(k * k)).toBe(k);
      if (k > 0) expect(floorSqrt(k * k - 1 / 65536)).toBe(k - 1);
    }
  });
});

describe('mask outline', () => {
  it('draws the 4 edges of a single pixel', () => {
    const mask = new Uint8Array(9);
    mask[4] = 1;
    const s = Array.from(maskOutline(mask, 3, 3));
    expect(s.length).toBe(16);
    expect(s.slice(0, 4)).toEqual([0.5, 0.5, 1.5, 0.5]);
  });

  it('draws the perimeter of a 5-pixel cross as 12 unit edges', () => {
    expect(maskOutline(regionMask(disk(2, 2, 1), 5, 5), 5, 5).length).toBe(12 * 4);
  });

  it('closes the outline at the detector border', () => {
    expect(maskOutline(new Uint8Array(4).fill(1), 2, 2).length).toBe(8 * 4);
  });
});

describe('default geometry', () => {
  it('finds the centroid of the bright disk and ignores flagged hot pixels', () => {
    const sum = diskPattern(64, 64, 30, 25, 8);
    const flagged = new Uint8Array(64 * 64);
    sum[5 * 64 + 60] = 1e9;
    flagged[5 * 64 + 60] = 1;
    expect(brightestRegionCentroid(sum, 64, 64, flagged)).toEqual({ cx: 30, cy: 25 });
  });

  it('picks the region with the largest total intensity, not the single brightest pixel', () => {
    const sum = diskPattern(64, 64, 40, 40, 6, 1000, 0);
    sum[3 * 64 + 3] = 1100; // an unflagged isolated bright pixel
    expect(brightestRegionCentroid(sum, 64, 64)).toEqual({ cx: 40, cy: 40 });
  });

  it('returns the detector centre for an empty pattern', () => {
    expect(brightestRegionCentroid(new Float64Array(12), 3, 4)).toEqual({ cx: 1.5, cy: 1 });
  });

  it('computes the radial profile as the median per unit ring', () => {
    const sum = diskPattern(21, 21, 10, 10, 3, 100, 0);
    const p = radialProfile(sum, 21, 21, { cx: 10, cy: 10 });
    expect(p[0]).toBe(100);
    expect(p[1]).toBe(100);
    expect(p[2]).toBe(100);
    // Ring 3 holds d in [3, 4): 4 pixels at d = 3 are inside, 16 (d = sqrt(10), sqrt(13), ...) are not.
    expect(p[3]).toBe(0);
    expect(p[4]).toBe(0);
    sum[10 * 21 + 14] = 1e6; // a hot pixel in ring 4 does not lift its median
    expect(radialProfile(sum, 21, 21, { cx: 10, cy: 10 })[4]).toBe(0);
    expect(centralValue(sum, 21, 21, { cx: 10, cy: 10 })).toBe(100);
  });

  it('places the BF radius where the profile crosses half of its centre', () => {
    expect(halfCentralRadius(Float64Array.from([100, 100, 100, 0, 0]))).toBe(3);
    expect(halfCentralRadius(Float64Array.from([100, 100, 75, 25, 0]))).toBe(2.5 + 0.5);
    expect(halfCentralRadius(Float64Array.from([Number.NaN, 100, Number.NaN, 0]))).toBe(1.5 + 1);
    expect(halfCentralRadius(Float64Array.from([100, 90, 80]))).toBe(3);
    // An explicit central value (a hot ring 0 is ignored).
    expect(halfCentralRadius(Float64Array.from([1e6, 100, 100, 0]), 100)).toBe(2.5 + 0.5);
  });

  it('derives BF and ADF from a synthetic disk pattern', () => {
    const g = defaultGeometry(diskPattern(96, 96, 47, 49, 10), 96, 96);
    expect(g.centre).toEqual({ cx: 47, cy: 49 });
    expect(g.bfRadius).toBeGreaterThan(9.5);
    expect(g.bfRadius).toBeLessThan(11);
    expect(g.bf).toEqual(disk(47, 49, g.bfRadius));
    expect(g.adf.inner).toBe(quantize(1.5 * g.bfRadius));
    expect(g.adf.outer).toBe(quantize(3 * g.bfRadius));
    // All the bright disk's pixels lie in the BF disk, none in the ADF annulus.
    const bf = regionMask(g.bf, 96, 96);
    const adf = regionMask(g.adf, 96, 96);
    const bright = diskPattern(96, 96, 47, 49, 10, 1, 0);
    for (let i = 0; i < bright.length; i++) {
      if (bright[i]) expect(bf[i]).toBe(1);
      expect(bf[i] && adf[i]).toBe(0);
    }
  });

  it('is not moved by unflagged hot pixels (3x3 median first)', () => {
    const sum = diskPattern(96, 96, 47.5, 47.5, 16, 20000, 300);
    sum[10 * 96 + 80] = 65535 * 2304; // a hot pixel the detector did not flag
    sum[47 * 96 + 47] = 65535 * 2304; // and one inside the disk
    const g = defaultGeometry(sum, 96, 96);
    expect(g.centre).toEqual({ cx: 47.5, cy: 47.5 });
    expect(g.bfRadius).toBeGreaterThan(15.5);
    expect(g.bfRadius).toBeLessThan(17);
  });

  it('takes the 3x3 median over unflagged neighbours only', () => {
    const values = Float64Array.from([1, 2, 3, 4, 100, 6, 7, 8, 9]);
    const flagged = Uint8Array.from([0, 0, 0, 0, 0, 0, 0, 0, 1]);
    const m = median3x3(values, 3, 3, flagged);
    expect(m.values[4]).toBe(5); // median of 1,2,3,4,100,6,7,8 = (4 + 6) / 2
    expect(m.values[0]).toBe(3); // 1,2,4,100
    expect(m.values[8]).toBe(8); // 100, 6, 8 (9 is flagged)
    expect(Array.from(median3x3([5], 1, 1, [1]).empty)).toEqual([1]);
  });

  it('clamps the ADF outer radius to the largest circle inside the detector', () => {
    const g = defaultGeometry(diskPattern(32, 32, 15.5, 15.5, 8), 32, 32);
    expect(inscribedRadius(32, 32, g.centre)).toBe(16);
    expect(g.adf.outer).toBe(16);
    expect(g.adf.inner).toBe(Math.min(quantize(1.5 * g.bfRadius), 8));
    expect(g.adf.inner).toBeLessThan(g.adf.outer);
  });
});
