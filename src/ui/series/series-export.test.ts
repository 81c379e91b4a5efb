import { describe, expect, it } from 'vitest';
import { decodeNpy } from '../../io/npy';
import { maskRuns, seriesExportRecord, seriesStackNpy } from './series-export';

describe('series exports', () => {
  it('stacks the images in order as float64 (acquisitions, rows, cols), exact above 2^32', () => {
    const a = Float64Array.from([0, 1, 2, 3, 4, 2 ** 40 + 1]);
    const b = Float64Array.from([5, 6, 7, 8, 9, 10]);
    const { data, shape } = decodeNpy(seriesStackNpy([b, a], [2, 3]));
    expect(shape).toEqual([2, 2, 3]);
    expect(Array.from(data)).toEqual([5, 6, 7, 8, 9, 10, 0, 1, 2, 3, 4, 2 ** 40 + 1]);
  });

  it('records the mask as runs of pixels, the order and the source', () => {
    expect(maskRuns([0, 1, 1, 0, 1, 0, 0, 1, 1, 1])).toEqual([
      [1, 2],
      [4, 1],
      [7, 3],
    ]);
    const record = JSON.parse(
      seriesExportRecord({
        acquisitions: [
          { index: 1, name: 'second' },
          { index: 0, name: 'first' },
        ],
        scan: [2, 3],
        detector: [2, 5],
        mask: [0, 1, 1, 0, 1, 0, 0, 1, 1, 1],
        source: { kind: 'detector panel', detector: 'BF' },
        queryMs: 4.5,
      }),
    );
    expect(record.stack.shape).toEqual([2, 2, 3]);
    expect(record.acquisitions.map((a: { name: string }) => a.name)).toEqual(['second', 'first']);
    expect(record.mask.pixels).toBe(6);
    expect(record.mask.source).toEqual({ kind: 'detector panel', detector: 'BF' });
  });
});
