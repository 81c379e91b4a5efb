import type { OverlayTransform } from './ImageCanvas';

/**
 * Scale bars: the longest "nice" length (1, 2 or 5 x 10^k units) that fits a given share of the view, drawn
 * at the lower left of an overlay. DOM-free apart from `drawScaleBar`.
 */
export interface ScaleBar {
  /** Length in the calibrated unit. */
  length: number;
  /** Length on screen (the same pixels as `screenPerImagePixel`). */
  pixels: number;
  label: string;
}

/** Length units and their larger relatives, for labels (nm -> µm -> mm; mrad stays mrad). */
const LARGER: Record<string, [string, number]> = { nm: ['µm', 1000], µm: ['mm', 1000], pm: ['nm', 1000] };

export function formatLength(length: number, unit: string): string {
  const larger = LARGER[unit];
  if (larger && length >= larger[1]) return formatLength(length / larger[1], larger[0]);
  return `${Number(length.toPrecision(6))} ${unit}`;
}

/**
 * The longest 1/2/5 x 10^k length whose bar is at most `maxPixels` long, given the calibration (units per
 * image pixel) and the zoom (screen pixels per image pixel). Null without a usable calibration.
 */
export function scaleBar(
  unitsPerImagePixel: number,
  screenPerImagePixel: number,
  maxPixels: number,
  unit: string,
): ScaleBar | null {
  if (!(unitsPerImagePixel > 0) || !(screenPerImagePixel > 0) || !(maxPixels > 0)) return null;
  if (!Number.isFinite(unitsPerImagePixel) || !Number.isFinite(screenPerImagePixel)) return null;
  const maxLength = (maxPixels / screenPerImagePixel) * unitsPerImagePixel;
  const decade = 10 ** Math.floor(Math.log10(maxLength));
  let length = decade;
  for (const m of [2, 5, 10]) if (m * decade <= maxLength * (1 + 1e-12)) length = m * decade;
  return {
    length,
    pixels: (length / unitsPerImagePixel) * screenPerImagePixel,
    label: formatLength(length, unit),
  };
}

/** Draws a scale bar (at most a quarter of the overlay wide) at its lower left. */
export function drawScaleBar(
  ctx: CanvasRenderingContext2D,
  t: OverlayTransform,
  unitsPerImagePixel: number,
  unit: string,
): void {
  const bar = scaleBar(unitsPerImagePixel, t.scale, ctx.canvas.width / 4, unit);
  if (!bar) return;
  const x = 12 * t.dpr;
  const y = ctx.canvas.height - 12 * t.dpr;
  ctx.fillStyle = 'rgba(11, 13, 16, 0.6)';
  ctx.fillRect(x - 4 * t.dpr, y - 20 * t.dpr, bar.pixels + 8 * t.dpr, 26 * t.dpr);
  ctx.fillStyle = '#ffffff';
  ctx.fillRect(x, y - 3 * t.dpr, bar.pixels, 3 * t.dpr);
  ctx.font = `${11 * t.dpr}px system-ui, sans-serif`;
  ctx.fillText(bar.label, x, y - 7 * t.dpr);
}
