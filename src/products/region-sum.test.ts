import { describe, expect, it } from 'vitest';
import { isStemflowError } from '../errors';
import { addFrames, checkRegion, normalizeRegion, regionFrameCount, regionRuns } from './region-sum';

describe('scan regions', () => {
  it('orders and clamps the corners of a dragged rectangle to the scan', () => {
    expect(normalizeRegion({ row: 5, col: 1 }, { row: 2, col: 3 }, [8, 8])).toEqual({
      row0: 2,
      row1: 5,
      col0: 1,
      col1: 3,
    });
    expect(normalizeRegion({ row: -3, col: 6.7 }, { row: 9, col: 12 }, [8, 8])).toEqual({
      row0: 0,
      row1: 7,
      col0: 6,
      col1: 7,
    });
    expect(normalizeRegion({ row: -3, col: 0 }, { row: -1, col: 2 }, [8, 8])).toBeNull();
  });

  it('reads a region as one run of consecutive frames per scan row', () => {
    const r = { row0: 1, row1: 3, col0: 2, col1: 4 };
    expect(regionRuns(r, 10)).toEqual([
      [12, 3],
      [22, 3],
      [32, 3],
    ]);
    expect(regionFrameCount(r)).toBe(9);
  });

  it('adds frames per pixel exactly', () => {
    const target = new Float64Array(3);
    addFrames(target, Uint32Array.from([1, 2, 3, 4294967295, 0, 10]), 2, 3);
    expect(Array.from(target)).toEqual([4294967296, 2, 13]);
  });

  it('refuses regions outside the scan, empty ones and sums that could pass 2^53', () => {
    const bad = (r: Parameters<typeof checkRegion>[0], max = 65535) => {
      try {
        checkRegion(r, [4, 4], max);
        return null;
      } catch (e) {
        return e;
      }
    };
    expect(bad({ row0: 0, row1: 3, col0: 0, col1: 3 })).toBeNull();
    expect(isStemflowError(bad({ row0: 0, row1: 4, col0: 0, col1: 3 }), 'invalid')).toBe(true);
    expect(isStemflowError(bad({ row0: 2, row1: 1, col0: 0, col1: 3 }), 'invalid')).toBe(true);
    expect(isStemflowError(bad({ row0: 0, row1: 0, col0: 0.5, col1: 3 }), 'invalid')).toBe(true);
    expect(isStemflowError(bad({ row0: 0, row1: 3, col0: 0, col1: 3 }, 2 ** 50), 'budget')).toBe(true);
  });
});
