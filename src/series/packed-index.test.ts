import { describe, expect, it } from 'vitest';
import { prng } from '../bench/synthetic';
import { chooseIndexList } from './index-lists';
import {
  blockAt,
  blockValue,
  buildPackedIndex,
  chunkFramesFor,
  type IndexGeometry,
  indexGeometry,
  LIST_PIXEL,
  listEntry,
  packedQuery,
} from './packed-index';

/** Counts like a detector's: mostly 0 and small, some pixels never counting, rare large values up to `max`. */
function counts(frames: number, pixels: number, seed: number, max = 0xffffffff): Uint32Array {
  const rand = prng(seed);
  const out = new Uint32Array(frames * pixels);
  for (let f = 0; f < frames; f++) {
    for (let p = 0; p < pixels; p++) {
      if (p % 7 === 3) continue; // width 0 everywhere
      const r = rand();
      out[f * pixels + p] =
        r < 0.6 ? 0 : r < 0.95 ? Math.floor(rand() * 12) : r < 0.999 ? Math.floor(rand() * 60000) : max - p;
    }
  }
  return out;
}

/** The pixels an entry covers. */
function pixelsOf(entry: number, g: IndexGeometry): number[] {
  const v = entry & LIST_PIXEL;
  if (v < g.pixels) return [v];
  const [rows, cols] = g.detector;
  const t = [...g.tiles].reverse().find((l) => v >= l.base) as IndexGeometry['tiles'][number];
  const i = v - t.base;
  const out: number[] = [];
  const r0 = Math.floor(i / t.cols) * t.side;
  const c0 = (i % t.cols) * t.side;
  for (let r = r0; r < Math.min(rows, r0 + t.side); r++)
    for (let c = c0; c < Math.min(cols, c0 + t.side); c++) out.push(r * cols + c);
  return out;
}

describe('packed index (CPU twin)', () => {
  it('cuts chunks inside records, in multiples of 1024 frames; tile levels only where their sums fit 32 bits', () => {
    expect(chunkFramesFor(36864, 1 << 30)).toBe(7168);
    expect(chunkFramesFor(1 << 20, 1 << 20)).toBe(1024);
    const g = indexGeometry(
      [
        { firstFrame: 0, frames: 2500 },
        { firstFrame: 2500, frames: 100 },
      ],
      [2, 5],
      1024,
      32,
    );
    expect(g.tiles).toEqual([]);
    expect(g.chunks.map((c) => [c.record, c.first, c.frames, c.recordFrame, c.groups])).toEqual([
      [0, 0, 1024, 0, 1],
      [0, 1024, 1024, 1024, 1],
      [0, 2048, 452, 2048, 1],
      [1, 2500, 100, 0, 1],
    ]);
    expect(g.frames).toBe(2600);
    expect(g.basesWords).toBe(40);
    expect(g.blocksWords).toBe(320);
    // 16-bit counts on 13 x 10 pixels: 8 x 8, 4 x 4 and 2 x 2 tiles (edge tiles partial; 16 x 16 is larger than
    // the detector).
    const t = indexGeometry([{ firstFrame: 0, frames: 64 }], [13, 10], 1024, 16);
    expect(t.tiles).toEqual([
      { side: 8, rows: 2, cols: 2, base: 130 },
      { side: 4, rows: 4, cols: 3, base: 134 },
      { side: 2, rows: 7, cols: 5, base: 146 },
    ]);
    expect(t.virtualPixels).toBe(181);
    // 192 x 192: every level, 64 x 64 to 2 x 2.
    expect(indexGeometry([], [192, 192], 1024, 16).virtualPixels).toBe(
      36864 + 9 + 36 + 144 + 576 + 2304 + 9216,
    );
    expect(() => indexGeometry([{ firstFrame: 0, frames: 10 }], [2, 2], 1000, 16)).toThrow(
      /multiple of 1024/,
    );
  });

  it('keeps every value exactly (widths 0 to 32, partial blocks and groups)', () => {
    const pixels = 13;
    const records = [
      { firstFrame: 0, frames: 2100 },
      { firstFrame: 2100, frames: 77 },
    ];
    const g = indexGeometry(records, [1, 13], 1024, 32);
    const values = counts(2177, pixels, 5);
    const ix = buildPackedIndex(values, g);
    const widthsSeen = new Set<number>();
    g.chunks.forEach((c, i) => {
      for (let p = 0; p < pixels; p++) {
        for (let f = 0; f < c.frames; f++) {
          const { at, w } = blockAt(ix.blocks, ix.bases, c, p, f >> 6);
          widthsSeen.add(w);
          expect(blockValue(ix.data[i], at, w, f & 63)).toBe(values[(c.first + f) * pixels + p]);
        }
      }
      // Exactly the words the widths say: 2 w per block.
      let words = 0;
      for (let p = 0; p < pixels; p++)
        for (let b = 0; b < c.groups * 16; b++) words += 2 * blockAt(ix.blocks, ix.bases, c, p, b).w;
      expect(ix.totals[i]).toBe(words);
    });
    expect(widthsSeen.has(0)).toBe(true);
    expect(widthsSeen.has(32)).toBe(true);
    expect(widthsSeen.has(16)).toBe(true);
  });

  it('stores each tile as the exact sum of its pixels', () => {
    const [rows, cols] = [13, 10];
    const g = indexGeometry([{ firstFrame: 0, frames: 100 }], [rows, cols], 1024, 16);
    const values = counts(100, rows * cols, 3, 65535);
    const ix = buildPackedIndex(values, g);
    const c = g.chunks[0];
    for (let v = g.pixels; v < g.virtualPixels; v++) {
      const covered = pixelsOf(v, g);
      for (let f = 0; f < 100; f++) {
        const { at, w } = blockAt(ix.blocks, ix.bases, c, v, f >> 6);
        const sum = covered.reduce((s, p) => s + values[f * rows * cols + p], 0);
        expect(blockValue(ix.data[0], at, w, f & 63)).toBe(sum);
      }
    }
  });

  it('answers masks and deltas exactly with the fewest signed tiles and pixels', () => {
    const [rows, cols] = [20, 18];
    const pixels = rows * cols;
    const frames = 1500;
    const g = indexGeometry([{ firstFrame: 0, frames }], [rows, cols], 1024, 16);
    const values = counts(frames, pixels, 9, 65535);
    const ix = buildPackedIndex(values, g);
    const flagged = new Uint8Array(pixels);
    flagged[3 * cols + 3] = 1; // inside the first tile of every level
    const sums = (m: Uint8Array) =>
      Float64Array.from({ length: frames }, (_, f) => {
        let s = 0;
        for (let p = 0; p < pixels; p++) if (m[p] && !flagged[p]) s += values[f * pixels + p];
        return s;
      });
    const run = (list: Uint32Array) => {
      const a = new Float64Array(frames);
      const b = new Float64Array(frames);
      g.chunks.forEach((c, i) => {
        packedQuery(ix.data[i], 0, ix.blocks, ix.bases, c, list, a, b, c.first);
      });
      return { a, b };
    };
    // Each pixel's coefficient in a list's signed sum (A entries +1, B entries -1), and that A comes first.
    const coefficients = (list: Uint32Array) => {
      const k = new Int32Array(pixels);
      const bits = [...list].map((e) => e >>> 30);
      expect(bits).toEqual([...bits].sort());
      for (const e of list) for (const p of pixelsOf(e & LIST_PIXEL, g)) k[p] += e >>> 30 === 1 ? 1 : -1;
      return [...k];
    };
    const image = (list: Uint32Array, before?: Float64Array) => {
      const { a, b } = run(list);
      return a.map((v, f) => (before?.[f] ?? 0) + v - b[f]);
    };
    // A disk: tiles added whole and pixels at its edge, the flagged pixel's coefficient 0.
    const disk = Uint8Array.from({ length: pixels }, (_, p) =>
      (Math.floor(p / cols) - 9.5) ** 2 + ((p % cols) - 8.5) ** 2 < 60 ? 1 : 0,
    );
    const full = chooseIndexList(disk, null, flagged, 'auto', g);
    expect(full.mode).toBe('full');
    expect(coefficients(full.list)).toEqual([...disk].map((m, p) => (m && !flagged[p] ? 1 : 0)));
    expect(full.list.length).toBeLessThan(disk.reduce((n, m) => n + m, 0) / 4);
    expect(image(full.list)).toEqual(sums(disk));
    // Everything: the four 16 x 16 tiles (at the edge they hold the pixels that exist) less the flagged pixel.
    const all = new Uint8Array(pixels).fill(1);
    const everything = chooseIndexList(all, null, flagged, 'full', g);
    const t16 = g.tiles[0];
    expect(t16.side).toBe(16);
    expect([...everything.list]).toEqual([
      ...[0, 1, 2, 3].map((t) => listEntry(t16.base + t, 1)),
      listEntry(3 * cols + 3, 2),
    ]);
    expect(image(everything.list)).toEqual(sums(all));
    // An 8 x 8 tile but one pixel: the tile less that pixel (2 entries, where whole tiles alone need 15).
    const notch = Uint8Array.from({ length: pixels }, (_, p) => {
      const [r, c] = [Math.floor(p / cols), p % cols];
      return r >= 8 && r < 16 && c < 8 && !(r === 12 && c === 5) ? 1 : 0;
    });
    const t8 = g.tiles[1];
    expect([...chooseIndexList(notch, null, flagged, 'full', g).list]).toEqual([
      listEntry(t8.base + t8.cols, 1),
      listEntry(12 * cols + 5, 2),
    ]);
    // A nudge by delta: the change's signed entries added to the image before.
    const moved = Uint8Array.from({ length: pixels }, (_, p) =>
      (Math.floor(p / cols) - 9.5) ** 2 + ((p % cols) - 9.5) ** 2 < 60 ? 1 : 0,
    );
    const delta = chooseIndexList(moved, disk, flagged, 'delta', g);
    expect(delta.mode).toBe('delta');
    expect(coefficients(delta.list)).toEqual([...moved].map((m, p) => (flagged[p] ? 0 : m - disk[p])));
    expect(image(delta.list, image(full.list))).toEqual(sums(moved));
    // 'auto' takes the shorter list; one pixel more is a delta of one entry.
    const movedFull = chooseIndexList(moved, disk, flagged, 'full', g);
    expect(movedFull.mode).toBe('full');
    expect(chooseIndexList(moved, disk, flagged, 'auto', g).list.length).toBe(
      Math.min(movedFull.list.length, delta.list.length),
    );
    const grown = disk.slice();
    grown[19 * cols + 17] = 1;
    expect(chooseIndexList(grown, disk, flagged, 'auto', g)).toEqual({
      list: Uint32Array.of(listEntry(19 * cols + 17, 1)),
      mode: 'delta',
    });
  });
});
