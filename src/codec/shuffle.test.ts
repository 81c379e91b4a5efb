import { describe, expect, it } from 'vitest';
import { shuffle, unshuffle } from './shuffle';
import { expectSameBytes, randomBytes } from './test-support';

describe('HDF5 byte shuffle', () => {
  it('groups byte j of every element, leftover bytes at the end (hand-computed)', () => {
    const raw = Uint8Array.of(0xa0, 0xa1, 0xa2, 0xb0, 0xb1, 0xb2, 0xc0, 0xc1, 0xc2, 0xd0, 0xd1);
    const expected = [0xa0, 0xb0, 0xc0, 0xa1, 0xb1, 0xc1, 0xa2, 0xb2, 0xc2, 0xd0, 0xd1];
    expect(Array.from(shuffle(raw, 3))).toEqual(expected);
    expect(Array.from(unshuffle(Uint8Array.from(expected), 3))).toEqual(Array.from(raw));
  });

  it('leaves 1-byte elements and single elements untouched, as HDF5 does', () => {
    const raw = Uint8Array.of(1, 2, 3, 4, 5);
    expect(Array.from(shuffle(raw, 1))).toEqual([1, 2, 3, 4, 5]);
    expect(Array.from(shuffle(raw, 4))).toEqual([1, 2, 3, 4, 5]);
    expect(Array.from(unshuffle(raw, 8))).toEqual([1, 2, 3, 4, 5]);
  });

  for (const elemSize of [2, 3, 4, 8]) {
    it(`round-trips elemSize ${elemSize}`, () => {
      for (const n of [0, 2, 9, 1000, 1003]) {
        const raw = randomBytes(n, n + elemSize);
        const s = shuffle(raw, elemSize);
        if (n >= 2 * elemSize) expect(Buffer.compare(s, raw)).not.toBe(0);
        expectSameBytes(unshuffle(s, elemSize), raw);
      }
    });
  }
});
