import { describe, expect, it } from 'vitest';
import { annulus, countCovered, disk, insideRect, rect, regionMask } from './detector-geometry';
import { composeMask, extendStroke, shapeLayer, strokeLayer } from './detector-layers';

/** The covered pixels of a mask as "row,col" strings (sorted), to compare exact pixel sets. */
function covered(mask: Uint8Array, cols: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < mask.length; i++) if (mask[i]) out.push(`${Math.floor(i / cols)},${i % cols}`);
  return out;
}

describe('rectangle coverage', () => {
  it('covers the pixel centres with 2|x - cx| <= w and 2|y - cy| <= h, edges included', () => {
    // Centre on a pixel centre: w = 2 reaches exactly the neighbours' centres (included): 3 x 1 pixels.
    expect(covered(regionMask(rect(4, 3, 2, 0), 8, 8), 8)).toEqual(['3,3', '3,4', '3,5']);
    // Centre on a pixel corner: w = 1 reaches the two centres at distance 0.5 exactly: 2 x 2 pixels.
    expect(covered(regionMask(rect(3.5, 2.5, 1, 1), 8, 8), 8)).toEqual(['2,3', '2,4', '3,3', '3,4']);
    // Just below the edge: nothing but the centre column and row.
    expect(countCovered(regionMask(rect(4, 4, 1.99609375, 1.99609375), 8, 8))).toBe(1);
  });

  it('counts w x h pixel centres for integer sizes on a pixel centre, clipped at the border', () => {
    expect(countCovered(regionMask(rect(5, 5, 4, 6), 12, 12))).toBe(5 * 7);
    expect(countCovered(regionMask(rect(0, 0, 4, 4), 12, 12))).toBe(3 * 3);
  });

  it('quantizes centre and size to 1/256 pixel and is exact on the grid', () => {
    const r = rect(1.0001, 2.9999, 3.00001, -1);
    expect(r).toEqual({ kind: 'rect', cx: 1, cy: 3, w: 3, h: 0 });
    expect(insideRect(3, 2.5, rect(1, 3, 3, 0))).toBe(true);
    expect(insideRect(3, 2.50390625, rect(1, 3, 3, 0))).toBe(false);
  });
});

describe('combined detectors', () => {
  it('applies layers in order: add covers, subtract uncovers, later layers win', () => {
    const base = disk(8, 8, 3);
    const minusCentre = shapeLayer(disk(8, 8, 1), 'subtract');
    const plusCorner = shapeLayer(rect(1, 1, 2, 2), 'add');
    const mask = composeMask(base, [minusCentre, plusCorner], 16, 16);
    const expected = regionMask(annulus(8, 8, 1, 3), 16, 16);
    for (let row = 0; row <= 2; row++) for (let col = 0; col <= 2; col++) expected[row * 16 + col] = 1;
    expect(mask).toEqual(expected);
    // Adding the centre back after subtracting it restores the disk.
    expect(composeMask(base, [minusCentre, shapeLayer(disk(8, 8, 1))], 16, 16)).toEqual(
      regionMask(base, 16, 16),
    );
    // The same layers in the other order: the subtraction wins.
    expect(composeMask(base, [shapeLayer(disk(8, 8, 1)), minusCentre], 16, 16)).toEqual(
      regionMask(annulus(8, 8, 1, 3), 16, 16),
    );
  });

  it('covers, for a brush stroke, the union of disks around its points', () => {
    const stroke = strokeLayer('add', 1, [
      [2, 2],
      [5, 2],
    ]);
    const mask = composeMask(disk(0, 0, 0), [stroke], 8, 8);
    const union = regionMask(disk(2, 2, 1), 8, 8);
    const second = regionMask(disk(5, 2, 1), 8, 8);
    for (let i = 0; i < union.length; i++) union[i] |= second[i];
    union[0] = 1; // the primary disk of radius 0 covers its own centre pixel
    expect(mask).toEqual(union);
    expect(countCovered(mask)).toBe(1 + 5 + 5);
  });

  it('erases with a subtracting stroke and clips stamps at the detector border', () => {
    const erase = strokeLayer('subtract', 1.5, [[0, 0]]);
    const mask = composeMask(rect(1.5, 1.5, 4, 4), [erase], 4, 4);
    // A 4x4 square minus the pixels within 1.5 of (0, 0): (0,0), (0,1), (1,0), (1,1).
    expect(countCovered(mask)).toBe(12);
    expect([mask[0], mask[1], mask[4], mask[5], mask[2]]).toEqual([0, 0, 0, 0, 1]);
  });

  it('fills the gap between pointer events with points no further apart than half the radius', () => {
    let stroke = strokeLayer('add', 2, [[0, 0]]);
    stroke = extendStroke(stroke, 10, 0);
    expect(stroke.points).toEqual(Array.from({ length: 11 }, (_, i) => [i, 0]));
    // The row under the stroke is covered without a gap.
    const mask = composeMask(disk(0, 0, 0), [stroke], 4, 12);
    for (let col = 0; col <= 11; col++) expect(mask[col]).toBe(1);
    // A first point starts the stroke; a repeated point adds nothing.
    expect(extendStroke(strokeLayer('add', 2), 3.3, 4).points).toEqual([[3.30078125, 4]]);
    expect(extendStroke(stroke, 10, 0).points.length).toBe(11);
  });
});
