import { describe, expect, it } from 'vitest';
import { virtualDetectorSums } from './virtual-detector.ts';

describe('virtualDetectorSums (CPU twin)', () => {
  it('sums only unmasked pixels, per frame', () => {
    const values = Uint16Array.from([1, 2, 3, 4, 10, 20, 30, 40]);
    const mask = Uint32Array.from([1, 0, 1, 0]);
    expect([...virtualDetectorSums(values, 2, mask)]).toEqual([4n, 40n]);
  });

  it('stays exact beyond 2^53', () => {
    const pixels = 2 ** 22;
    const values = new Uint32Array(pixels).fill(0xffffffff);
    const sums = virtualDetectorSums(values, 1, new Uint32Array(pixels).fill(1));
    expect(sums[0]).toBe(BigInt(pixels) * 0xffffffffn);
    expect(sums[0] > 2n ** 53n).toBe(true);
  });
});
