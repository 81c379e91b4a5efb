import { describe, expect, it } from 'vitest';
import { prng } from '../bench/synthetic';
import { decomposeSigned } from './index-lists';
import { indexGeometry, LIST_PIXEL } from './packed-index';

describe('signed decomposition (index-lists)', () => {
  // A 4 x 4 detector with tiles of 4 and 2 (one 4 x 4, four 2 x 2): every assignment of -1, 0 or 1 to the tiles
  // tried (3^5; each tile is added, subtracted or left, as the dynamic programme decides), each pixel then needing
  // |target - its tiles' sum| entries. The programme must reach the least total for every target tried, and its
  // list must sum to the target. (A tile twice can save an entry on a change, e.g. -2 on a 2 x 2 of -1s under
  // the whole tile added; the programme does not list a tile twice.)
  const g = indexGeometry([], [4, 4], 1024, 16, [4, 2]);
  const [t4, t2] = g.tiles;
  const covers = (p: number) => [t4.base, t2.base + Math.floor(p / 8) * 2 + Math.floor((p % 4) / 2)];
  const fewest = (target: Int8Array) => {
    let best = Number.POSITIVE_INFINITY;
    const c = new Int8Array(5);
    for (let code = 0; code < 3 ** 5; code++) {
      let n = 0;
      for (let i = 0, x = code; i < 5; i++, x = Math.floor(x / 3)) {
        c[i] = (x % 3) - 1;
        n += Math.abs(c[i]);
      }
      for (let p = 0; p < 16 && n < best; p++) {
        const [a, b] = covers(p);
        n += Math.abs(target[p] - c[a - t4.base] - c[1 + b - t2.base]);
      }
      best = Math.min(best, n);
    }
    return best;
  };
  const check = (target: Int8Array) => {
    const list = decomposeSigned(target, g);
    const sum = new Int32Array(16);
    for (const e of list) {
      const v = e & LIST_PIXEL;
      const sign = e >>> 30 === 1 ? 1 : -1;
      if (v < 16) sum[v] += sign;
      else for (let p = 0; p < 16; p++) if (covers(p).includes(v)) sum[p] += sign;
    }
    expect([...sum]).toEqual([...target]);
    expect(list.length).toBe(fewest(target));
  };

  it('reaches the fewest entries of any tile assignment, for masks and for changes', () => {
    expect(g.tiles.map((t) => t.side)).toEqual([4, 2]);
    const rand = prng(17);
    // Masks (0 or 1 a pixel), including the whole detector, a tile but one pixel, and random ones.
    check(new Int8Array(16).fill(1));
    check(Int8Array.from({ length: 16 }, (_, p) => (p === 5 ? 0 : 1)));
    check(Int8Array.from({ length: 16 }, (_, p) => (p % 4 < 2 && p < 8 && p !== 1 ? 1 : 0)));
    for (let k = 0; k < 120; k++) check(Int8Array.from({ length: 16 }, () => (rand() < 0.6 ? 1 : 0)));
    // Changes (-1, 0 or 1 a pixel).
    for (let k = 0; k < 120; k++) check(Int8Array.from({ length: 16 }, () => Math.floor(rand() * 3) - 1));
  });
});
