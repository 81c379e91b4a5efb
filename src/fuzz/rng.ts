/**
 * Deterministic pseudo-random numbers for the fuzzer: every case is reproducible from (seed, target, case
 * index) alone, on any machine (mulberry32 over a 32-bit mix of the three).
 */
export class Rng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** The generator of case `index` of `target` in the run seeded `seed`. */
  static forCase(seed: number, target: string, index: number): Rng {
    let h = 0x811c9dc5 ^ (seed >>> 0);
    for (let i = 0; i < target.length; i++) h = Math.imul(h ^ target.charCodeAt(i), 0x01000193);
    h = Math.imul(h ^ (index >>> 0), 0x9e3779b1);
    h = Math.imul(h ^ Math.floor(index / 0x100000000), 0x85ebca6b);
    return new Rng(h ^ (h >>> 15));
  }

  /** A uniform 32-bit unsigned integer. */
  u32(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }

  /** A uniform integer in [0, n) (n >= 1). */
  int(n: number): number {
    if (n <= 1) return 0;
    if (n <= 0x100000000) return Math.floor((this.u32() / 0x100000000) * n);
    return Math.floor(((this.u32() * 0x100000000 + this.u32()) / 2 ** 64) * n);
  }

  /** A uniform integer in [lo, hi]. */
  range(lo: number, hi: number): number {
    return lo + this.int(hi - lo + 1);
  }

  chance(p: number): boolean {
    return this.u32() / 0x100000000 < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)];
  }

  /** One of `items` with probability proportional to its weight. */
  weighted<T>(items: readonly (readonly [T, number])[]): T {
    const total = items.reduce((s, [, w]) => s + w, 0);
    let r = (this.u32() / 0x100000000) * total;
    for (const [item, w] of items) {
      if (r < w) return item;
      r -= w;
    }
    return items[items.length - 1][0];
  }

  bytes(n: number): Uint8Array {
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i++) out[i] = this.u32() & 0xff;
    return out;
  }
}
