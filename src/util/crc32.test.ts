import { crc32 as zlibCrc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { crc32 } from './crc32';

describe('crc32', () => {
  it('gives the standard check value and the empty input', () => {
    expect(crc32(new TextEncoder().encode('123456789'))).toBe(0xcbf43926);
    expect(crc32(new Uint8Array(0))).toBe(0);
  });

  it("equals Node's zlib.crc32 on random lengths, in one piece and continued across pieces", () => {
    let seed = 12345;
    const next = () => {
      seed = (seed * 1103515245 + 12345) >>> 0;
      return seed >>> 24;
    };
    for (const n of [1, 7, 8, 9, 63, 64, 1000, 65_537]) {
      const bytes = Uint8Array.from({ length: n }, next);
      const expected = zlibCrc32(bytes);
      expect(crc32(bytes), `length ${n}`).toBe(expected);
      const cut = Math.floor(n / 3);
      expect(crc32(bytes.subarray(cut), crc32(bytes.subarray(0, cut))), `length ${n} in two`).toBe(expected);
    }
  });
});
