/**
 * tANS (table-based asymmetric numeral systems) tables of the archive codec, built on the host from token
 * counts. One table per context (pixel class) and record; the frequencies are what the archive stores, and
 * both the encoder's and the decoder's tables are derived from them deterministically.
 *
 * Conventions (docs/archive-format.md, "tANS"): L = 2^R states; encoder state x in [L, 2L); decoder state
 * s = x - L in [0, L). Symbols are spread over the L cells with FSE's step L/2 + L/8 + 3 (mod L), in
 * increasing symbol order. The k-th cell (in increasing cell order) of symbol t with frequency f decodes to
 * "next" = f + k, reads nb = R - floor(log2(f + k)) bits and moves to s' = ((f + k) << nb) - L + bits.
 */
import { StemflowError } from '../errors';

export const MIN_TABLE_LOG = 5;
export const MAX_TABLE_LOG = 12;

/** Step of the symbol spread (odd, so it visits every cell of a power-of-two table). */
export function spreadStep(L: number): number {
  return (L >>> 1) + (L >>> 3) + 3;
}

/**
 * Quantises token counts to frequencies that sum to exactly L, with every counted token >= 1 and every
 * absent token 0. Deterministic: proportional rounding, then the surplus or deficit taken from or given to
 * the tokens whose rounding cost least, ties by token index.
 */
export function normaliseCounts(counts: ArrayLike<number>, tableLog: number): Uint16Array {
  const L = 1 << tableLog;
  const n = counts.length;
  let total = 0;
  let present = 0;
  for (let t = 0; t < n; t++) {
    total += counts[t];
    if (counts[t] > 0) present++;
  }
  const freq = new Uint16Array(n);
  if (total === 0) throw new StemflowError('invalid', 'A context with no values has no tANS table.');
  if (present > L) {
    throw new StemflowError('invalid', `${present} distinct tokens do not fit a table of ${L} states.`);
  }
  let sum = 0;
  for (let t = 0; t < n; t++) {
    if (counts[t] === 0) continue;
    const f = Math.max(1, Math.round((counts[t] * L) / total));
    freq[t] = f;
    sum += f;
  }
  // Adjust one step at a time where the change costs the fewest bits: cost of moving f -> f +- 1 for a
  // token counted c times is c * log2(f / (f +- 1)). Each token's cost is kept and recomputed only when its
  // frequency changes (the direction never changes: sum moves towards L); a token that may not move costs
  // +infinity, which the strict comparison never picks, exactly as skipping it.
  if (sum === L) return freq;
  const up = sum < L;
  const cost = new Float64Array(n);
  const costOf = (t: number) => {
    const f = freq[t];
    if (f === 0 || (!up && f === 1)) return Number.POSITIVE_INFINITY;
    return counts[t] * Math.log2(up ? f / (f + 1) : f / (f - 1));
  };
  for (let t = 0; t < n; t++) cost[t] = costOf(t);
  while (sum !== L) {
    let best = -1;
    let bestCost = Number.POSITIVE_INFINITY;
    for (let t = 0; t < n; t++) {
      if (cost[t] < bestCost) {
        bestCost = cost[t];
        best = t;
      }
    }
    freq[best] += up ? 1 : -1;
    sum += up ? 1 : -1;
    cost[best] = costOf(best);
  }
  return freq;
}

/** Checks frequencies read from an archive: they sum to L and fit the alphabet. */
export function checkFrequencies(freq: ArrayLike<number>, tableLog: number, what: string): void {
  if (!Number.isInteger(tableLog) || tableLog < MIN_TABLE_LOG || tableLog > MAX_TABLE_LOG) {
    throw new StemflowError(
      'corrupt',
      `${what}: table log ${tableLog} is outside ${MIN_TABLE_LOG}..${MAX_TABLE_LOG}.`,
    );
  }
  let sum = 0;
  for (let t = 0; t < freq.length; t++) sum += freq[t];
  if (sum !== 1 << tableLog) {
    throw new StemflowError('corrupt', `${what}: frequencies sum to ${sum}, not ${1 << tableLog}.`);
  }
}

/** Cell -> symbol of the spread table. */
export function spreadSymbols(freq: ArrayLike<number>, tableLog: number): Uint8Array {
  const L = 1 << tableLog;
  const step = spreadStep(L);
  const cells = new Uint8Array(L);
  let pos = 0;
  for (let t = 0; t < freq.length; t++) {
    for (let i = 0; i < freq[t]; i++) {
      cells[pos] = t;
      pos = (pos + step) & (L - 1);
    }
  }
  return cells;
}

/**
 * Decoder cells of one context, packed u32: newState (bits 0-11) | nbBits << 12 (bits 12-15) |
 * symbol << 16 (bits 16-23). Written into `out` at `at`.
 */
export function buildDecodeCells(
  freq: ArrayLike<number>,
  tableLog: number,
  out: Uint32Array = new Uint32Array(1 << tableLog),
  at = 0,
): Uint32Array {
  const L = 1 << tableLog;
  const cells = spreadSymbols(freq, tableLog);
  const next = Array.from(freq, Number);
  for (let u = 0; u < L; u++) {
    const t = cells[u];
    const x = next[t]++;
    const nb = tableLog - (31 - Math.clz32(x));
    out[at + u] = ((x << nb) - L) | (nb << 12) | (t << 16);
  }
  return out;
}

/**
 * Encoder tables of one context: per symbol `freq | start << 16` (start = the symbol's first index in the
 * position list), and the position list: for each symbol in order, the cells it occupies in increasing order.
 */
export function buildEncodeTables(
  freq: ArrayLike<number>,
  tableLog: number,
  symbols: Uint32Array = new Uint32Array(freq.length),
  positions: Uint16Array = new Uint16Array(1 << tableLog),
  symbolsAt = 0,
  positionsAt = 0,
): { symbols: Uint32Array; positions: Uint16Array } {
  const L = 1 << tableLog;
  const cells = spreadSymbols(freq, tableLog);
  const start = new Array<number>(freq.length);
  let cum = 0;
  for (let t = 0; t < freq.length; t++) {
    start[t] = cum;
    symbols[symbolsAt + t] = freq[t] | (cum << 16);
    cum += freq[t];
  }
  const fill = start.slice();
  for (let u = 0; u < L; u++) positions[positionsAt + fill[cells[u]]++] = u;
  return { symbols, positions };
}

/**
 * Encoder tables of every context at once, as the GPU encoder uploads them: the same values as
 * `buildEncodeTables` per context (positions widened to u32), built with typed arrays and no allocation per
 * context, and without the decoder's cells (the encoder does not need them). `freqs` holds `contexts` x
 * `tokens` frequencies, each context summing to 2^tableLog (checked).
 */
export function buildEncodeTablesAll(
  freqs: Uint16Array,
  contexts: number,
  tokens: number,
  tableLog: number,
  what = 'record',
): { symbols: Uint32Array; positions: Uint32Array } {
  const L = 1 << tableLog;
  const mask = L - 1;
  const step = spreadStep(L);
  const symbols = new Uint32Array(contexts * tokens);
  const positions = new Uint32Array(contexts * L);
  const cells = new Uint8Array(L);
  const fill = new Int32Array(tokens);
  for (let c = 0; c < contexts; c++) {
    const f0 = c * tokens;
    let cum = 0;
    let pos = 0;
    for (let t = 0; t < tokens; t++) {
      const f = freqs[f0 + t];
      fill[t] = cum;
      symbols[f0 + t] = f | (cum << 16);
      cum += f;
      if (cum > L) break;
      for (let i = 0; i < f; i++) {
        cells[pos] = t;
        pos = (pos + step) & mask;
      }
    }
    if (cum !== L) checkFrequencies(freqs.subarray(f0, f0 + tokens), tableLog, `${what} context ${c}`);
    const p0 = c * L;
    for (let u = 0; u < L; u++) positions[p0 + fill[cells[u]]++] = u;
  }
  return { symbols, positions };
}
