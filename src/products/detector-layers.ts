import { type DetectorRegion, quantize, regionContains, regionMask } from './detector-geometry';

/**
 * Combined virtual detectors: a primary region followed by layers, each adding pixels to the mask or
 * taking them away, in order (a later layer wins over an earlier one). DOM-free.
 *
 * Layers:
 * - a shape (disk, annulus or rectangle) covers the pixels of its region (coverage rules of
 *   detector-geometry);
 * - a brush stroke covers the pixels whose centre lies within `radius` of at least one of its points
 *   (a union of disks, the circle rule). Points and radius are quantized to 1/256 pixel, so coverage is exact.
 *
 * The mask is fully determined by the primary region and the layer list (both JSON): an export of them
 * reproduces it pixel for pixel.
 */
export type LayerOp = 'add' | 'subtract';

export interface ShapeLayer {
  kind: 'shape';
  op: LayerOp;
  region: DetectorRegion;
}

export interface StrokeLayer {
  kind: 'stroke';
  op: LayerOp;
  radius: number;
  /** [x, y] in detector pixels (pixel (row, col) has its centre at x = col, y = row). */
  points: [number, number][];
}

export type MaskLayer = ShapeLayer | StrokeLayer;

export function shapeLayer(region: DetectorRegion, op: LayerOp = 'add'): ShapeLayer {
  return { kind: 'shape', op, region };
}

export function strokeLayer(op: LayerOp, radius: number, points: [number, number][] = []): StrokeLayer {
  return {
    kind: 'stroke',
    op,
    radius: quantize(Math.max(0, radius)),
    points: points.map(([x, y]) => [quantize(x), quantize(y)]),
  };
}

/**
 * The stroke with the segment from its last point to (x, y) added, as points no further apart than half
 * the radius (at least 1/4 pixel), so the stroke has no gaps wherever the pointer jumped between events.
 */
export function extendStroke(stroke: StrokeLayer, x: number, y: number): StrokeLayer {
  const last = stroke.points[stroke.points.length - 1];
  if (!last) return { ...stroke, points: [[quantize(x), quantize(y)]] };
  const length = Math.hypot(x - last[0], y - last[1]);
  const spacing = Math.max(0.25, stroke.radius / 2);
  const steps = Math.ceil(length / spacing);
  const points = stroke.points.slice();
  for (let i = 1; i <= steps; i++) {
    const t = i / steps;
    const p: [number, number] = [
      quantize(last[0] + t * (x - last[0])),
      quantize(last[1] + t * (y - last[1])),
    ];
    const prev = points[points.length - 1];
    if (p[0] !== prev[0] || p[1] !== prev[1]) points.push(p);
  }
  return { ...stroke, points };
}

/** Sets `value` on every pixel whose centre lies within `radius` of (x, y) (visiting its bounding box only). */
function stampDisk(
  mask: Uint8Array,
  rows: number,
  cols: number,
  x: number,
  y: number,
  r: number,
  value: number,
) {
  const r2 = r * r;
  const row0 = Math.max(0, Math.ceil(y - r));
  const row1 = Math.min(rows - 1, Math.floor(y + r));
  const col0 = Math.max(0, Math.ceil(x - r));
  const col1 = Math.min(cols - 1, Math.floor(x + r));
  for (let row = row0; row <= row1; row++) {
    const dy = row - y;
    for (let col = col0; col <= col1; col++) {
      const dx = col - x;
      if (dx * dx + dy * dy <= r2) mask[row * cols + col] = value;
    }
  }
}

/** Applies one layer to a mask in place. */
export function applyLayer(mask: Uint8Array, layer: MaskLayer, rows: number, cols: number): void {
  const value = layer.op === 'add' ? 1 : 0;
  if (layer.kind === 'stroke') {
    for (const [x, y] of layer.points) stampDisk(mask, rows, cols, x, y, layer.radius, value);
    return;
  }
  for (let row = 0; row < rows; row++) {
    for (let col = 0; col < cols; col++) {
      if (regionContains(layer.region, row, col)) mask[row * cols + col] = value;
    }
  }
}

/** The mask (1 = covered) of a primary region followed by its layers, row-major over rows x cols. */
export function composeMask(
  primary: DetectorRegion,
  layers: readonly MaskLayer[],
  rows: number,
  cols: number,
): Uint8Array {
  const mask = regionMask(primary, rows, cols);
  for (const layer of layers) applyLayer(mask, layer, rows, cols);
  return mask;
}

export function describeLayer(layer: MaskLayer): string {
  const sign = layer.op === 'add' ? '+' : '−';
  if (layer.kind === 'stroke') return `${sign} brush r ${layer.radius} (${layer.points.length} points)`;
  return `${sign} ${layer.region.kind}`;
}
