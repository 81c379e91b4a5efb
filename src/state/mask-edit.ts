import {
  type Annulus,
  annulus,
  type DefaultGeometry,
  type DetectorRegion,
  type Disk,
  disk,
  quantize,
  type Rect,
  rect,
} from '../products/detector-geometry';

/**
 * Editing virtual detectors (DOM-free): the BF/ABF/ADF presets from the default geometry, the handles a
 * region offers, and the rules for moving them or typing numbers. Every result goes through `disk` /
 * `annulus`, so centres and radii stay on the exact 1/256-pixel grid of detector-geometry.
 */
export type DetectorMode = 'bf' | 'abf' | 'adf';
export const DETECTOR_MODES: DetectorMode[] = ['bf', 'abf', 'adf'];

/** Which number of a region a handle or an input changes. */
export type RegionField = 'cx' | 'cy' | 'r' | 'inner' | 'outer' | 'w' | 'h';

/** BF: the default disk. ABF: half to full BF radius. ADF: the default annulus (1.5x to 3x BF, clamped). */
export function presetRegion(mode: DetectorMode, g: DefaultGeometry): DetectorRegion {
  if (mode === 'bf') return g.bf;
  if (mode === 'abf') return annulus(g.centre.cx, g.centre.cy, g.bfRadius / 2, g.bfRadius);
  return g.adf;
}

export function presetRegions(g: DefaultGeometry): Record<DetectorMode, DetectorRegion> {
  return { bf: presetRegion('bf', g), abf: presetRegion('abf', g), adf: presetRegion('adf', g) };
}

/** The fields a region has, in the order they are shown. */
export function regionFields(region: DetectorRegion): RegionField[] {
  if (region.kind === 'rect') return ['cx', 'cy', 'w', 'h'];
  return region.kind === 'disk' ? ['cx', 'cy', 'r'] : ['cx', 'cy', 'inner', 'outer'];
}

export function fieldValue(region: DetectorRegion, field: RegionField): number {
  if (field === 'cx' || field === 'cy') return region[field];
  if (region.kind === 'rect') return field === 'h' ? region.h : region.w;
  if (region.kind === 'disk') return region.r;
  return field === 'inner' ? region.inner : region.outer;
}

/** Largest radius worth having: the detector's diagonal (a larger circle covers no more pixels). */
export function radiusLimit(rows: number, cols: number): number {
  return Math.ceil(Math.hypot(rows, cols));
}

/**
 * The region with one field set (quantized, clamped): the centre stays on the detector (-0.5 .. size - 0.5),
 * radii lie in 0 .. radiusLimit, and an annulus keeps inner <= outer (the field being set wins: moving the
 * inner radius past the outer one pushes the outer one along, and the other way round).
 * NaN leaves the region unchanged.
 */
export function withField(
  region: DetectorRegion,
  field: RegionField,
  value: number,
  rows: number,
  cols: number,
): DetectorRegion {
  if (!Number.isFinite(value)) return region;
  const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));
  const limit = radiusLimit(rows, cols);
  let { cx, cy } = region;
  if (field === 'cx') cx = clamp(value, -0.5, cols - 0.5);
  if (field === 'cy') cy = clamp(value, -0.5, rows - 0.5);
  if (region.kind === 'rect') {
    const w = field === 'w' ? clamp(value, 0, 2 * limit) : region.w;
    const h = field === 'h' ? clamp(value, 0, 2 * limit) : region.h;
    return rect(cx, cy, w, h);
  }
  if (region.kind === 'disk') {
    const r = field === 'r' ? clamp(value, 0, limit) : region.r;
    return disk(cx, cy, r);
  }
  let { inner, outer } = region;
  if (field === 'inner') {
    inner = quantize(clamp(value, 0, limit));
    outer = Math.max(outer, inner);
  } else if (field === 'outer') {
    outer = quantize(clamp(value, 0, limit));
    inner = Math.min(inner, outer);
  }
  return annulus(cx, cy, inner, outer);
}

/** Moves a region's centre to (cx, cy) (clamped to the detector, quantized). */
export function withCentre(region: DetectorRegion, cx: number, cy: number, rows: number, cols: number) {
  return withField(withField(region, 'cx', cx, rows, cols), 'cy', cy, rows, cols);
}

/**
 * A draggable handle: the centre, a radius (drawn east of the centre, on its circle) or a rectangle's
 * lower right corner (dragging it sets the size, symmetric about the centre).
 */
export interface Handle {
  field: 'centre' | 'r' | 'inner' | 'outer' | 'corner';
  x: number;
  y: number;
}

export function regionHandles(region: DetectorRegion): Handle[] {
  const { cx, cy } = region;
  const centre: Handle = { field: 'centre', x: cx, y: cy };
  if (region.kind === 'rect')
    return [{ field: 'corner', x: cx + region.w / 2, y: cy + region.h / 2 }, centre];
  if (region.kind === 'disk') return [{ field: 'r', x: cx + region.r, y: cy }, centre];
  // The inner handle sits on the inner circle at 45 degrees below east, so the two radius handles never
  // overlap even when the radii are close.
  const d = Math.SQRT1_2 * region.inner;
  return [{ field: 'outer', x: cx + region.outer, y: cy }, { field: 'inner', x: cx + d, y: cy + d }, centre];
}

/**
 * What a press at detector point (x, y) grabs: the nearest handle within `reach` (detector pixels), else a
 * circle of the region within `reach` of the point (its radius), else the region's inside (the centre, to
 * move it), else nothing.
 */
export function grab(region: DetectorRegion, x: number, y: number, reach: number): Handle['field'] | null {
  let best: Handle['field'] | null = null;
  let bestD = reach;
  for (const h of regionHandles(region)) {
    const d = Math.hypot(h.x - x, h.y - y);
    if (d <= bestD) {
      bestD = d;
      best = h.field;
    }
  }
  if (best) return best;
  if (region.kind === 'rect') return rectContainsPoint(region, x, y) ? 'centre' : null;
  const d = Math.hypot(x - region.cx, y - region.cy);
  const circles: [Handle['field'], number][] =
    region.kind === 'disk'
      ? [['r', region.r]]
      : [
          ['outer', region.outer],
          ['inner', region.inner],
        ];
  for (const [field, r] of circles) {
    const off = Math.abs(d - r);
    if (off <= bestD) {
      bestD = off;
      best = field;
    }
  }
  if (best) return best;
  const inside = region.kind === 'disk' ? d <= region.r : d <= region.outer;
  return inside ? 'centre' : null;
}

function rectContainsPoint(r: Rect, x: number, y: number): boolean {
  return 2 * Math.abs(x - r.cx) <= r.w && 2 * Math.abs(y - r.cy) <= r.h;
}

/** Drag values snap to 1/8 pixel: a readable grid that lies on the exact 1/256 grid. */
export function snapDrag(v: number): number {
  return Math.round(v * 8) / 8;
}

/**
 * The region after dragging `field`: for the centre, by (dx, dy) from where the drag started (the region
 * `start`); for a radius, to the distance from the centre to the pointer.
 */
export function dragRegion(
  start: DetectorRegion,
  field: Handle['field'],
  from: { x: number; y: number },
  to: { x: number; y: number },
  rows: number,
  cols: number,
): DetectorRegion {
  if (field === 'centre') {
    const cx = snapDrag(start.cx + to.x - from.x);
    const cy = snapDrag(start.cy + to.y - from.y);
    return withCentre(start, cx, cy, rows, cols);
  }
  if (start.kind === 'rect') {
    const w = snapDrag(2 * Math.abs(to.x - start.cx));
    const h = snapDrag(2 * Math.abs(to.y - start.cy));
    return withField(withField(start, 'w', w, rows, cols), 'h', h, rows, cols);
  }
  if (field === 'corner') return start;
  const r = snapDrag(Math.hypot(to.x - start.cx, to.y - start.cy));
  return withField(start, field, r, rows, cols);
}

export function describeRegion(region: DetectorRegion): string {
  const at = `centre (x ${region.cx.toFixed(2)}, y ${region.cy.toFixed(2)})`;
  if (region.kind === 'rect') return `rectangle ${region.w.toFixed(2)} × ${region.h.toFixed(2)} px, ${at}`;
  return region.kind === 'disk'
    ? `disk r ≤ ${region.r.toFixed(2)} px, ${at}`
    : `annulus ${region.inner.toFixed(2)} < r ≤ ${region.outer.toFixed(2)} px, ${at}`;
}

export function sameRegion(a: DetectorRegion, b: DetectorRegion): boolean {
  if (a.kind !== b.kind || a.cx !== b.cx || a.cy !== b.cy) return false;
  if (a.kind === 'disk') return a.r === (b as Disk).r;
  if (a.kind === 'rect') return a.w === (b as Rect).w && a.h === (b as Rect).h;
  return a.inner === (b as Annulus).inner && a.outer === (b as Annulus).outer;
}

/**
 * The detector's angular calibration, when the file has pixel size and camera length: mrad per pixel
 * (small-angle: pixel size / camera length).
 */
export function mradPerPixel(calibration: {
  detectorPixelSize?: [number, number];
  detectorDistance?: number;
}): number | null {
  const size = calibration.detectorPixelSize?.[0];
  const distance = calibration.detectorDistance;
  if (!size || !distance || !(size > 0) || !(distance > 0)) return null;
  return (size / distance) * 1000;
}

/** The semi-angle ratios of the calibrated presets, in units of the convergence semi-angle alpha. */
export const MRAD_PRESET_RATIOS: Record<DetectorMode, [number, number]> = {
  bf: [0, 1],
  abf: [0.5, 1],
  adf: [1.5, 3],
};

/**
 * BF/ABF/ADF from the convergence semi-angle `alphaMrad` and the detector's angular sampling: BF collects
 * 0..alpha, ABF alpha/2..alpha, ADF 1.5 alpha..3 alpha (the ratios of the default geometry), each centred on
 * `centre` (the measured beam centre). Radii in pixels are semi-angle / mrad per pixel, quantized.
 */
export function calibratedPresets(
  alphaMrad: number,
  mradPerPx: number,
  centre: { cx: number; cy: number },
): Record<DetectorMode, DetectorRegion> | null {
  if (!(alphaMrad > 0) || !(mradPerPx > 0) || !Number.isFinite(alphaMrad)) return null;
  const px = (ratio: number) => (ratio * alphaMrad) / mradPerPx;
  const ring = (mode: DetectorMode) =>
    annulus(centre.cx, centre.cy, px(MRAD_PRESET_RATIOS[mode][0]), px(MRAD_PRESET_RATIOS[mode][1]));
  return { bf: disk(centre.cx, centre.cy, px(1)), abf: ring('abf'), adf: ring('adf') };
}
