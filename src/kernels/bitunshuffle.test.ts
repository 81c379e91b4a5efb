import { describe, expect, it } from 'vitest';
import { bitshuffle, bitunshuffle } from './bitunshuffle.ts';

describe('bitunshuffle (CPU twin)', () => {
  it('puts value bit p of element i in plane p, byte i/8, bit i%8', () => {
    const values = new Uint16Array(16);
    values[9] = 1 << 12;
    const bytes = bitshuffle(values, { frameElems: 16, frameCount: 1, elemSize: 2, blockElems: 16 });
    // 16 planes of 2 bytes: plane 12, byte 1, bit 1.
    expect([...bytes].map((b, i) => (b ? i : -1)).filter((i) => i >= 0)).toEqual([12 * 2 + 1]);
    expect(bytes[25]).toBe(0b10);
  });

  it('round-trips with a short block and a raw tail', () => {
    const values = Uint32Array.from({ length: 2 * 43 }, (_, i) => (i * 2654435761) >>> 0);
    const shape = { frameElems: 43, frameCount: 2, elemSize: 4 as const, blockElems: 16 };
    expect(bitunshuffle(bitshuffle(values, shape), shape)).toEqual(values);
  });

  it('rejects block sizes that are not multiples of 8 and unsupported element sizes', () => {
    expect(() =>
      bitunshuffle(new Uint8Array(8), { frameElems: 8, frameCount: 1, elemSize: 1, blockElems: 12 }),
    ).toThrow(/multiple of 8/);
    const bad = { frameElems: 8, frameCount: 1, elemSize: 3 as 1, blockElems: 8 };
    expect(() => bitunshuffle(new Uint8Array(24), bad)).toThrow(/not 1, 2 or 4/);
  });
});
