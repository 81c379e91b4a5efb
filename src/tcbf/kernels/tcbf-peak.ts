/**
 * CPU twin of src/shaders/tcbf-peak.wgsl: per correlation image (image j is the real part of complex slot
 * j >> 1 when j is even, its imaginary part when odd: packed pairs, docs/tcbf.md),
 * the maximum within a box of +-radius px (wrapped) around the expected peak (rounded), ties to the lowest
 * index; then a three-point parabola along each axis (wrapped neighbours). Output per image: (row, col)
 * sub-pixel peak position as a signed offset in (-rows/2, rows/2], the peak value, and 1 (found) or 0 (the
 * parabola was degenerate: the offset is then the integer maximum).
 */
export function tcbfPeak(
  corr: Float64Array,
  count: number,
  rows: number,
  cols: number,
  expected: Float32Array,
  radius: number,
): Float64Array {
  const hw = rows * cols;
  const out = new Float64Array(4 * count);
  const wrap = (v: number, n: number) => ((v % n) + n) % n;
  const signed = (v: number, n: number) => (v > n / 2 ? v - n : v);
  const rr = Math.min(radius, Math.floor((rows - 1) / 2));
  const rc = Math.min(radius, Math.floor((cols - 1) / 2));
  for (let j = 0; j < count; j++) {
    const base = (j >> 1) * hw;
    const part = j & 1;
    const er = Math.round(expected[2 * j]);
    const ec = Math.round(expected[2 * j + 1]);
    let best = Number.NEGATIVE_INFINITY;
    let bestIndex = hw;
    for (let dr = -rr; dr <= rr; dr++) {
      for (let dc = -rc; dc <= rc; dc++) {
        const idx = wrap(er + dr, rows) * cols + wrap(ec + dc, cols);
        const v = corr[2 * (base + idx) + part];
        if (v > best || (v === best && idx < bestIndex)) {
          best = v;
          bestIndex = idx;
        }
      }
    }
    const r = Math.floor(bestIndex / cols);
    const c = bestIndex % cols;
    const at = (y: number, x: number) => corr[2 * (base + wrap(y, rows) * cols + wrap(x, cols)) + part];
    const dr = parabola(at(r - 1, c), best, at(r + 1, c));
    const dc = parabola(at(r, c - 1), best, at(r, c + 1));
    out[4 * j] = signed(r, rows) + (dr ?? 0);
    out[4 * j + 1] = signed(c, cols) + (dc ?? 0);
    out[4 * j + 2] = best;
    out[4 * j + 3] = dr === undefined || dc === undefined ? 0 : 1;
  }
  return out;
}

/** Vertex offset of the parabola through (-1, a), (0, b), (1, c); undefined if not a maximum. */
function parabola(a: number, b: number, c: number): number | undefined {
  const d = a - 2 * b + c;
  if (!(d < 0)) return undefined;
  const x = (0.5 * (a - c)) / d;
  return Math.abs(x) <= 1 ? x : undefined;
}
