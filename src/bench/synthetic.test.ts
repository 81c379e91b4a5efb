import { describe, expect, it } from 'vitest';
import { bslz4Decode } from '../codec/bslz4';
import { generateSynthetic } from './synthetic';

describe('synthetic ARINA-like acquisition', () => {
  it('is deterministic, decodes exactly, and looks like 4D-STEM (sparse, bright centre, rare > 255)', () => {
    const a = generateSynthetic({ scan: [8, 8], detector: 96, distinct: 40, seed: 7 });
    const b = generateSynthetic({ scan: [8, 8], detector: 96, distinct: 40, seed: 7 });
    expect(a.chunks.map((c) => c.length)).toEqual(b.chunks.map((c) => c.length));
    let zeros = 0;
    let centre = 0;
    let corner = 0;
    let total = 0;
    for (let k = 0; k < a.chunks.length; k++) {
      const decoded = new Uint16Array(bslz4Decode(a.chunks[k], 2, 96 * 96 * 2).buffer);
      expect(decoded).toEqual(a.values[k]);
      for (let p = 0; p < decoded.length; p++) {
        total++;
        if (decoded[p] === 0) zeros++;
      }
      centre += decoded[48 * 96 + 48];
      corner += decoded[2 * 96 + 2];
    }
    expect(zeros / total).toBeGreaterThan(0.5);
    expect(centre).toBeGreaterThan(10 * (corner + 1));
    expect(a.chunkOf(63)).toBe(63 % 40);
    const ratio = a.chunks.reduce((s, c) => s + c.length, 0) / (40 * 96 * 96 * 2);
    expect(ratio).toBeLessThan(0.5);
  });
});
