import { describe, expect, it } from 'vitest';
import { prng } from '../bench/synthetic';
import {
  blockAt,
  blockValue,
  buildPackedIndex,
  chooseIndexList,
  chunkFramesFor,
  indexGeometry,
  listEntry,
  packedQuery,
} from './packed-index';

/** Counts like a detector's: mostly 0 and small, some blocks all zero, rare large values up to the u32 maximum. */
function counts(frames: number, pixels: number, seed: number): Uint32Array {
  const rand = prng(seed);
  const out = new Uint32Array(frames * pixels);
  for (let f = 0; f < frames; f++) {
    for (let p = 0; p < pixels; p++) {
      if (p % 7 === 3) continue; // pixels that never count (width 0 everywhere)
      const r = rand();
      out[f * pixels + p] =
        r < 0.6
          ? 0
          : r < 0.95
            ? Math.floor(rand() * 12)
            : r < 0.999
              ? Math.floor(rand() * 70000)
              : 0xffffffff - p;
    }
  }
  return out;
}

describe('packed index (CPU twin)', () => {
  it('cuts chunks inside records, in multiples of 1024 frames', () => {
    expect(chunkFramesFor(36864, 1 << 30)).toBe(7168);
    expect(chunkFramesFor(1 << 20, 1 << 20)).toBe(1024);
    const g = indexGeometry(
      [
        { firstFrame: 0, frames: 2500 },
        { firstFrame: 2500, frames: 100 },
      ],
      10,
      1024,
    );
    expect(g.chunks.map((c) => [c.record, c.first, c.frames, c.recordFrame, c.groups])).toEqual([
      [0, 0, 1024, 0, 1],
      [0, 1024, 1024, 1024, 1],
      [0, 2048, 452, 2048, 1],
      [1, 2500, 100, 0, 1],
    ]);
    expect(g.frames).toBe(2600);
    expect(g.basesWords).toBe(40);
    expect(g.widthsWords).toBe(160);
    expect(() => indexGeometry([{ firstFrame: 0, frames: 10 }], 4, 1000)).toThrow(/multiple of 1024/);
  });

  it('keeps every value exactly (widths 0 to 32, partial blocks and groups)', () => {
    const pixels = 13;
    const records = [
      { firstFrame: 0, frames: 2100 },
      { firstFrame: 2100, frames: 77 },
    ];
    const g = indexGeometry(records, pixels, 1024);
    const values = counts(2177, pixels, 5);
    const ix = buildPackedIndex(values, g);
    const widthsSeen = new Set<number>();
    g.chunks.forEach((c, i) => {
      for (let p = 0; p < pixels; p++) {
        for (let f = 0; f < c.frames; f++) {
          const { at, w } = blockAt(ix.widths, ix.bases, c, p, f >> 6);
          widthsSeen.add(w);
          expect(blockValue(ix.data[i], at, w, f & 63)).toBe(values[(c.first + f) * pixels + p]);
        }
      }
      // Exactly the words the widths say: 2 w per block.
      let words = 0;
      for (let p = 0; p < pixels; p++)
        for (let b = 0; b < c.groups * 16; b++) words += 2 * blockAt(ix.widths, ix.bases, c, p, b).w;
      expect(ix.totals[i]).toBe(words);
    });
    expect(widthsSeen.has(0)).toBe(true);
    expect(widthsSeen.has(32)).toBe(true);
    expect(widthsSeen.has(17)).toBe(true);
  });

  it('answers masks and deltas exactly', () => {
    const pixels = 20;
    const g = indexGeometry([{ firstFrame: 0, frames: 1500 }], pixels, 1024);
    const values = counts(1500, pixels, 9);
    const ix = buildPackedIndex(values, g);
    const mask = Uint8Array.from({ length: pixels }, (_, p) => (p % 3 === 0 ? 1 : 0));
    const flagged = new Uint8Array(pixels);
    flagged[6] = 1;
    const sums = (m: Uint8Array) =>
      Float64Array.from({ length: 1500 }, (_, f) => {
        let s = 0;
        for (let p = 0; p < pixels; p++) if (m[p] && !flagged[p]) s += values[f * pixels + p];
        return s;
      });
    const run = (list: Uint32Array) => {
      const a = new Float64Array(1500);
      const b = new Float64Array(1500);
      g.chunks.forEach((c, i) => {
        packedQuery(ix.data[i], 0, ix.widths, ix.bases, c, list, a, b, c.first);
      });
      return { a, b };
    };
    const full = chooseIndexList(mask, null, flagged, 'auto');
    expect(full.mode).toBe('full');
    expect([...full.list]).not.toContain(listEntry(6, 1));
    const first = run(full.list).a;
    expect(first).toEqual(sums(mask));
    // A nudge: one pixel added, one removed, by delta.
    const next = mask.slice();
    next[0] = 0;
    next[1] = 1;
    const delta = chooseIndexList(next, mask, flagged, 'auto');
    expect(delta.mode).toBe('delta');
    expect([...delta.list]).toEqual([listEntry(0, 2), listEntry(1, 1)]);
    const { a, b } = run(delta.list);
    expect(first.map((v, f) => v + a[f] - b[f])).toEqual(sums(next));
    expect(chooseIndexList(next, mask, flagged, 'full').mode).toBe('full');
  });
});
