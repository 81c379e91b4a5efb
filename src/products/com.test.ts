import { describe, expect, it } from 'vitest';
import { comBitMasks, combineBits, comImages, comSumsFromFrames, weightBits } from './com';

describe('centre of mass (exact sums, twin of the bit-mask GPU route)', () => {
  it('bit masks recombine to the weighted sums exactly', () => {
    const rows = 5;
    const cols = 7;
    const frames = Float64Array.from({ length: 3 * rows * cols }, (_, i) => (i * 7919) % 13);
    const mask = new Uint8Array(rows * cols).fill(1);
    mask[3] = 0;
    const flagged = new Uint8Array(rows * cols);
    flagged[10] = 1;
    const direct = comSumsFromFrames(frames, rows, cols, mask, flagged);
    const { x, y } = comBitMasks(
      mask.map((m, p) => (m && !flagged[p] ? 1 : 0)),
      rows,
      cols,
    );
    expect(x).toHaveLength(weightBits(cols));
    const image = (m: Uint8Array) =>
      Float64Array.from({ length: 3 }, (_, f) => {
        let s = 0;
        for (let p = 0; p < rows * cols; p++) if (m[p]) s += frames[f * rows * cols + p];
        return s;
      });
    expect(Array.from(combineBits(x.map(image)))).toEqual(Array.from(direct.sumX));
    expect(Array.from(combineBits(y.map(image)))).toEqual(Array.from(direct.sumY));
  });

  it('a single bright pixel has its own coordinates as centre of mass; an empty frame gives NaN', () => {
    const frames = new Float64Array(2 * 12);
    frames[2 * 4 + 3] = 9; // frame 0, row 2, col 3 of a 3 x 4 detector
    const sums = comSumsFromFrames(frames, 3, 4, new Uint8Array(12).fill(1), null);
    const { comX, comY } = comImages(sums, 1.5, 1);
    expect([comX[0], comY[0]]).toEqual([1.5, 1]);
    expect(Number.isNaN(comX[1])).toBe(true);
  });
});
