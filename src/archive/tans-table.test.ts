import { describe, expect, it } from 'vitest';
import { isStemflowError } from '../errors';
import { mulberry32 } from '../util/prng';
import { buildEncodeTables, buildEncodeTablesAll, normaliseCounts } from './tans-table';

/** The quantisation as first written (a full scan with every cost recomputed each step): the reference. */
function normaliseReference(counts: number[], tableLog: number): number[] {
  const L = 1 << tableLog;
  const total = counts.reduce((a, b) => a + b, 0);
  const freq = counts.map((c) => (c === 0 ? 0 : Math.max(1, Math.round((c * L) / total))));
  let sum = freq.reduce((a, b) => a + b, 0);
  while (sum !== L) {
    const up = sum < L;
    let best = -1;
    let bestCost = Number.POSITIVE_INFINITY;
    for (let t = 0; t < counts.length; t++) {
      const f = freq[t];
      if (f === 0 || (!up && f === 1)) continue;
      const cost = counts[t] * Math.log2(up ? f / (f + 1) : f / (f - 1));
      if (cost < bestCost) {
        bestCost = cost;
        best = t;
      }
    }
    freq[best] += up ? 1 : -1;
    sum += up ? 1 : -1;
  }
  return freq;
}

/** Count vectors with many rare tokens (rounded up to 1: a deficit to take) or equal counts (ties). */
function countCases(): number[][] {
  const next = mulberry32(17);
  const out: number[][] = [];
  for (let k = 0; k < 300; k++) {
    const n = [32, 64, 128][k % 3];
    const shape = k % 4;
    out.push(
      Array.from({ length: n }, (_, t) => {
        const u = next() / 2 ** 32;
        if (shape === 0) return u < 0.5 ? 0 : 1 + (next() % 3); // many rare tokens
        if (shape === 1) return Math.floor(1e6 * Math.exp(-t / 3)); // geometric, a long tail of zeros
        if (shape === 2) return 5; // all equal: every step a tie
        return u < 0.2 ? 0 : next() % 100000;
      }),
    );
    if (out[k].every((c) => c === 0)) out[k][0] = 1;
  }
  return out;
}

describe('normaliseCounts', () => {
  it('equals the full-scan reference on 300 count vectors at table logs 5, 9, 11, 12', () => {
    for (const counts of countCases()) {
      for (const log of [5, 9, 11, 12]) {
        if (counts.filter((c) => c > 0).length > 1 << log) continue;
        expect(Array.from(normaliseCounts(counts, log))).toEqual(normaliseReference(counts, log));
      }
    }
  });
});

describe('buildEncodeTablesAll', () => {
  it('equals buildEncodeTables context by context', () => {
    for (const [tableLog, tokens] of [
      [11, 64],
      [9, 32],
      [12, 128],
      [5, 32],
    ]) {
      const cases = countCases().filter((c) => c.length === tokens && c.filter((n) => n > 0).length <= 32);
      const contexts = cases.length;
      const L = 1 << tableLog;
      const freqs = new Uint16Array(contexts * tokens);
      for (const [i, c] of cases.entries()) freqs.set(normaliseCounts(c, tableLog), i * tokens);
      const all = buildEncodeTablesAll(freqs, contexts, tokens, tableLog);
      for (let c = 0; c < contexts; c++) {
        const one = buildEncodeTables(freqs.subarray(c * tokens, (c + 1) * tokens), tableLog);
        expect(all.symbols.subarray(c * tokens, (c + 1) * tokens)).toEqual(one.symbols);
        expect(Array.from(all.positions.subarray(c * L, (c + 1) * L))).toEqual(Array.from(one.positions));
      }
    }
  });

  it('refuses frequencies that do not sum to L', () => {
    for (const bad of [
      [1024, 1024, 1],
      [1000, 0, 0],
    ]) {
      const freqs = new Uint16Array(64);
      freqs.set([2048], 0);
      freqs.set(bad, 32);
      const error = (() => {
        try {
          buildEncodeTablesAll(freqs, 2, 32, 11);
        } catch (e) {
          return e;
        }
      })();
      expect(isStemflowError(error)).toBe(true);
      expect(String(error)).toMatch(/record context 1: frequencies sum to/);
    }
  });
});
