/**
 * A mask as the entries of an index query (src/series/packed-index.ts describes the index): the fewest tiles and
 * pixels whose signed sum is the mask, or the change from the previous mask.
 */
import { type IndexGeometry, listEntry } from './packed-index';

/**
 * The dynamic programme's arrays per geometry, made once and overwritten by every query (a query makes no garbage
 * but its lists: the garbage collector's pauses were the p95 of interactive queries).
 */
const scratch = new WeakMap<
  IndexGeometry,
  { cost: Int32Array[]; pick: Int8Array[]; now: Int8Array; change: Int8Array }
>();
function scratchOf(g: IndexGeometry) {
  let s = scratch.get(g);
  if (!s) {
    s = {
      cost: g.tiles.map((t) => new Int32Array(3 * t.rows * t.cols)),
      pick: g.tiles.map((t) => new Int8Array(3 * t.rows * t.cols)),
      now: new Int8Array(g.pixels),
      change: new Int8Array(g.pixels),
    };
    scratch.set(g, s);
  }
  return s;
}

/**
 * The fewest entries whose signed sum is `target` exactly: per pixel -1, 0 or 1 (flagged pixels 0), each entry a
 * tile or a pixel with +1 (accumulator A) or -1 (B). A dynamic programme over the tile tree (each tile level nests in
 * the one above, pixels at the bottom): a tile either adds nothing, or adds or subtracts its whole sum, and its
 * children then represent what is left. So a tile covered but for a few pixels (or a flagged one) costs the tile
 * and those pixels in B, where covering it from below would take many entries; an annulus reads about a third
 * fewer entries than with whole tiles alone. Returns the A entries, then the B entries.
 */
export function decomposeSigned(target: Int8Array, g: IndexGeometry): Uint32Array {
  const [rows, cols] = g.detector;
  const levels = g.tiles.length;
  const { cost, pick } = scratchOf(g);
  // Per level: the children's grid (the next level's tiles, or the pixels) and how many of them a tile spans.
  const grid = g.tiles.map((t, l) => {
    const below = g.tiles[l + 1];
    return below ? { f: t.side / below.side, rows: below.rows, cols: below.cols } : { f: t.side, rows, cols };
  });
  // cost[l][3 e + k + 1]: the entries tile e of level l needs when its ancestors' coefficients sum to k (-1, 0,
  // 1); pick[l][...]: the tile's own coefficient then. A pixel needs |target - k| entries.
  for (let l = levels - 1; l >= 0; l--) {
    const t = g.tiles[l];
    const { f, rows: cr, cols: cc } = grid[l];
    const sub = l + 1 < levels ? cost[l + 1] : null;
    const c = cost[l];
    const k = pick[l];
    for (let tr = 0; tr < t.rows; tr++) {
      const r1 = Math.min(cr, (tr + 1) * f);
      for (let tc = 0; tc < t.cols; tc++) {
        const q1 = Math.min(cc, (tc + 1) * f);
        // The children's entries when the coefficients above them sum to -1 (m), 0 (z) and 1 (p).
        let m = 0;
        let z = 0;
        let p = 0;
        for (let r = tr * f; r < r1; r++) {
          for (let q = tc * f, i = r * cc + q; q < q1; q++, i++) {
            if (sub) {
              m += sub[3 * i];
              z += sub[3 * i + 1];
              p += sub[3 * i + 2];
            } else {
              const v = target[i];
              m += v + 1 < 0 ? -(v + 1) : v + 1;
              z += v < 0 ? -v : v;
              p += v - 1 < 0 ? 1 - v : v - 1;
            }
          }
        }
        const e = 3 * (tr * t.cols + tc);
        // Ties take the tile: the larger one. Above sums to -1: nothing, or +1 (children at 0).
        c[e] = Math.min(m, 1 + z);
        k[e] = m < 1 + z ? 0 : 1;
        // Above sums to 0: nothing, +1 (children at 1) or -1 (children at -1).
        const own = z < 1 + p && z < 1 + m ? 0 : p <= m ? 1 : -1;
        c[e + 1] = own === 0 ? z : own > 0 ? 1 + p : 1 + m;
        k[e + 1] = own;
        // Above sums to 1: nothing, or -1 (children at 0).
        c[e + 2] = Math.min(p, 1 + z);
        k[e + 2] = p < 1 + z ? 0 : -1;
      }
    }
  }
  const a: number[] = [];
  const b: number[] = [];
  const pixel = (i: number, k: number) => {
    for (let d = target[i] - k; d !== 0; d -= Math.sign(d)) (d > 0 ? a : b).push(listEntry(i, d > 0 ? 1 : 2));
  };
  const emit = (l: number, e: number, k: number): void => {
    const s = 3 * e + k + 1;
    if (cost[l][s] === 0) return;
    const t = g.tiles[l];
    const own = pick[l][s];
    if (own) (own > 0 ? a : b).push(listEntry(t.base + e, own > 0 ? 1 : 2));
    const { f, rows: cr, cols: cc } = grid[l];
    const tr = Math.floor(e / t.cols);
    const tc = e % t.cols;
    const r1 = Math.min(cr, (tr + 1) * f);
    const q1 = Math.min(cc, (tc + 1) * f);
    for (let r = tr * f; r < r1; r++)
      for (let q = tc * f; q < q1; q++)
        if (l + 1 < levels) emit(l + 1, r * cc + q, k + own);
        else pixel(r * cc + q, k + own);
  };
  if (levels === 0) for (let i = 0; i < rows * cols; i++) pixel(i, 0);
  else for (let e = 0; e < g.tiles[0].rows * g.tiles[0].cols; e++) emit(0, e, 0);
  const list = new Uint32Array(a.length + b.length);
  list.set(a);
  list.set(b, a.length);
  return list;
}

/**
 * The entries a query reads (`decomposeSigned`): the full mask (the image is A - B), or the change from the
 * previous mask (the image before + A - B), whichever needs fewer entries (`mode` may force either); flagged pixels
 * are never included.
 */
export function chooseIndexList(
  mask: Uint8Array,
  previous: Uint8Array | null,
  flagged: Uint8Array,
  mode: 'auto' | 'full' | 'delta',
  g: IndexGeometry,
): { list: Uint32Array; mode: 'full' | 'delta' } {
  const n = mask.length;
  const { now, change } = scratchOf(g);
  for (let p = 0; p < n; p++) now[p] = mask[p] && !flagged[p] ? 1 : 0;
  const full = mode === 'delta' && previous ? null : decomposeSigned(now, g);
  if (full && (!previous || mode === 'full')) return { list: full, mode: 'full' };
  for (let p = 0; p < n; p++) change[p] = now[p] - ((previous as Uint8Array)[p] && !flagged[p] ? 1 : 0);
  const delta = decomposeSigned(change, g);
  return !full || delta.length < full.length ? { list: delta, mode: 'delta' } : { list: full, mode: 'full' };
}
