import { describe, expect, it } from 'vitest';
import { lookup3 } from './checksum';

const text = (s: string) => new TextEncoder().encode(s);

describe('lookup3 (Jenkins hashlittle)', () => {
  it('matches the published test vectors', () => {
    expect(lookup3(new Uint8Array(0))).toBe(0xdeadbeef);
    expect(lookup3(text('Four score and seven years ago'))).toBe(0x17770551);
    expect(lookup3(text('Four score and seven years ago'), 1)).toBe(0xcd628161);
  });

  it('handles every tail length', () => {
    const seen = new Set<number>();
    for (let n = 0; n <= 25; n++) seen.add(lookup3(text('abcdefghijklmnopqrstuvwxy'.slice(0, n))));
    expect(seen.size).toBe(26);
  });
});
