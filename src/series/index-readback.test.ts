import { describe, expect, it } from 'vitest';
import { READBACK_PARTS, readbackParts } from './index-readback';

describe('index query parts', () => {
  it('cuts an order into consecutive parts as even as they can be, at most READBACK_PARTS', () => {
    expect(READBACK_PARTS).toBe(3);
    expect(readbackParts(21)).toEqual([
      [0, 7],
      [7, 14],
      [14, 21],
    ]);
    expect(readbackParts(4)).toEqual([
      [0, 1],
      [1, 2],
      [2, 4],
    ]);
    expect(readbackParts(2)).toEqual([
      [0, 1],
      [1, 2],
    ]);
    expect(readbackParts(1)).toEqual([[0, 1]]);
    expect(readbackParts(0)).toEqual([[0, 0]]);
  });
});
