import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../util/prng';
import { classMapFromSums, classMapFromSumsFast } from './tans-stats';

describe('classMapFromSumsFast', () => {
  it('equals classMapFromSums: many ties, sums past 2^32, uneven class sizes', () => {
    const next = mulberry32(9);
    for (const [pixels, classes, spread] of [
      [1155, 8, 3],
      [36864, 32, 1000],
      [1024, 256, 2 ** 45],
      [7, 3, 1],
    ]) {
      const sums = Float64Array.from({ length: pixels }, () => Math.floor((next() / 2 ** 32) * spread));
      expect(classMapFromSumsFast(sums, classes)).toEqual(classMapFromSums(sums, classes));
    }
  });
});
