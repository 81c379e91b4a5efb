import { type ColormapName, colormapTable, FLAGGED_RGB } from './colormaps';

/**
 * Values to 8-bit colour for the canvases: an optional log scale, a contrast window from the min/max or
 * the 0.5/99.5 percentiles of the unflagged values, and a colormap. DOM-free.
 */
export type Scale = 'linear' | 'log';
export type Contrast = 'minmax' | 'percentile';

export interface DisplaySettings {
  colormap: ColormapName;
  scale: Scale;
  contrast: Contrast;
  /** Low and high percentiles of the 'percentile' contrast (default 0.5 and 99.5). */
  percentiles?: [number, number];
}

export const PERCENTILE_LOW = 0.5;
export const PERCENTILE_HIGH = 99.5;

/** log1p for counts (0 stays 0; negative values clamp to 0). */
export function scaled(v: number, scale: Scale): number {
  return scale === 'log' ? Math.log1p(Math.max(0, v)) : v;
}

/** Nearest-rank percentile of sorted values (p in 0..100). */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const i = Math.round((p / 100) * (sorted.length - 1));
  return sorted[Math.min(sorted.length - 1, Math.max(0, i))];
}

/** The contrast window [lo, hi] in scaled units over the finite values not excluded (flagged). */
export function contrastWindow(
  values: ArrayLike<number>,
  scale: Scale,
  contrast: Contrast,
  exclude?: ArrayLike<number>,
  percentiles: [number, number] = [PERCENTILE_LOW, PERCENTILE_HIGH],
): [number, number] {
  const kept = new Float64Array(values.length);
  let n = 0;
  for (let i = 0; i < values.length; i++) {
    if (exclude?.[i]) continue;
    const v = scaled(values[i], scale);
    if (Number.isFinite(v)) kept[n++] = v;
  }
  if (n === 0) return [0, 0];
  const used = kept.subarray(0, n);
  if (contrast === 'minmax') {
    let lo = used[0];
    let hi = used[0];
    for (const v of used) {
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
    return [lo, hi];
  }
  used.sort();
  return [percentile(used, percentiles[0]), percentile(used, percentiles[1])];
}

/** The 8-bit level of a scaled value in the window [lo, hi] (0 when the window is empty). */
export function level(v: number, lo: number, hi: number): number {
  if (!(hi > lo) || !Number.isFinite(v)) return 0;
  return Math.min(255, Math.max(0, Math.round(((v - lo) / (hi - lo)) * 255)));
}

/** RGBA pixels (row-major, like the values) and the window used, in scaled units. */
export function renderRgba(
  values: ArrayLike<number>,
  settings: DisplaySettings,
  exclude?: ArrayLike<number>,
  out = new Uint8ClampedArray(values.length * 4),
): { rgba: Uint8ClampedArray; window: [number, number] } {
  const [lo, hi] = contrastWindow(values, settings.scale, settings.contrast, exclude, settings.percentiles);
  const lut = colormapTable(settings.colormap);
  for (let i = 0; i < values.length; i++) {
    const o = i * 4;
    if (exclude?.[i]) {
      out[o] = FLAGGED_RGB[0];
      out[o + 1] = FLAGGED_RGB[1];
      out[o + 2] = FLAGGED_RGB[2];
    } else {
      const l = level(scaled(values[i], settings.scale), lo, hi) * 3;
      out[o] = lut[l];
      out[o + 1] = lut[l + 1];
      out[o + 2] = lut[l + 2];
    }
    out[o + 3] = 255;
  }
  return { rgba: out, window: [lo, hi] };
}

/** Window bounds back in data units, for the legend. */
export function unscaled(v: number, scale: Scale): number {
  return scale === 'log' ? Math.expm1(v) : v;
}

/**
 * Histogram of the finite, unflagged values in scaled units: `bins` equal bins over [min, max] of those
 * values (a constant image puts everything in bin 0).
 */
export function histogram(
  values: ArrayLike<number>,
  scale: Scale,
  bins: number,
  exclude?: ArrayLike<number>,
): { counts: Uint32Array; min: number; max: number } {
  const counts = new Uint32Array(bins);
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < values.length; i++) {
    if (exclude?.[i]) continue;
    const v = scaled(values[i], scale);
    if (!Number.isFinite(v)) continue;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  if (!(max >= min)) return { counts, min: 0, max: 0 };
  const width = max - min;
  for (let i = 0; i < values.length; i++) {
    if (exclude?.[i]) continue;
    const v = scaled(values[i], scale);
    if (!Number.isFinite(v)) continue;
    const b = width > 0 ? Math.min(bins - 1, Math.floor(((v - min) / width) * bins)) : 0;
    counts[b]++;
  }
  return { counts, min, max };
}
