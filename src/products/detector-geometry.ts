/**
 * Virtual detector geometry: disks and annuli on the detector, their exact pixel coverage, and the default
 * BF/ADF geometry derived from the summed diffraction pattern. DOM-free (runs in Node tests).
 *
 * Coordinates: pixel (row, col) has its centre at x = col, y = row (detector pixel units); the detector's
 * outer edges are at x = -0.5, x = cols - 0.5, y = -0.5, y = rows - 0.5.
 *
 * Coverage rule: a pixel is inside a circle when the distance from its centre to the circle's centre is
 * <= the radius. A disk covers the pixels inside its circle; an annulus covers the pixels inside its outer
 * circle and not inside its inner circle (inner < d <= outer).
 *
 * Exactness: every centre and radius is quantized to 1/256 pixel, so dx, dy and r are multiples of 2^-8
 * below 2^16 in magnitude, and dx*dx + dy*dy and r*r are computed exactly in float64: the coverage of a
 * pixel on the boundary never depends on rounding.
 */

export const GEOMETRY_STEPS_PER_PIXEL = 256;

/** Rounds a coordinate or radius to the 1/256-pixel grid used by every region. */
export function quantize(v: number): number {
  return Math.round(v * GEOMETRY_STEPS_PER_PIXEL) / GEOMETRY_STEPS_PER_PIXEL;
}

export interface Disk {
  kind: 'disk';
  cx: number;
  cy: number;
  r: number;
}

export interface Annulus {
  kind: 'annulus';
  cx: number;
  cy: number;
  inner: number;
  outer: number;
}

/** An axis-aligned rectangle: centre (cx, cy), full width w and height h in detector pixels. */
export interface Rect {
  kind: 'rect';
  cx: number;
  cy: number;
  w: number;
  h: number;
}

export type DetectorRegion = Disk | Annulus | Rect;

export function disk(cx: number, cy: number, r: number): Disk {
  return { kind: 'disk', cx: quantize(cx), cy: quantize(cy), r: quantize(Math.max(0, r)) };
}

export function annulus(cx: number, cy: number, inner: number, outer: number): Annulus {
  return {
    kind: 'annulus',
    cx: quantize(cx),
    cy: quantize(cy),
    inner: quantize(Math.max(0, inner)),
    outer: quantize(Math.max(0, outer)),
  };
}

export function rect(cx: number, cy: number, w: number, h: number): Rect {
  return {
    kind: 'rect',
    cx: quantize(cx),
    cy: quantize(cy),
    w: quantize(Math.max(0, w)),
    h: quantize(Math.max(0, h)),
  };
}

/** True when pixel (row, col)'s centre lies in the rectangle (edges included); exact for quantized values. */
export function insideRect(row: number, col: number, r: Rect): boolean {
  return 2 * Math.abs(col - r.cx) <= r.w && 2 * Math.abs(row - r.cy) <= r.h;
}

/** Squared distance from pixel (row, col)'s centre to (cx, cy); exact for quantized centres. */
function distance2(row: number, col: number, cx: number, cy: number): number {
  const dx = col - cx;
  const dy = row - cy;
  return dx * dx + dy * dy;
}

/** True when pixel (row, col)'s centre lies within distance r of (cx, cy). */
export function insideCircle(row: number, col: number, cx: number, cy: number, r: number): boolean {
  return distance2(row, col, cx, cy) <= r * r;
}

export function regionContains(region: DetectorRegion, row: number, col: number): boolean {
  if (region.kind === 'disk') return insideCircle(row, col, region.cx, region.cy, region.r);
  if (region.kind === 'rect') return insideRect(row, col, region);
  return (
    insideCircle(row, col, region.cx, region.cy, region.outer) &&
    !insideCircle(row, col, region.cx, region.cy, region.inner)
  );
}

/** The binary mask (1 = covered) of a region, row-major over a rows x cols detector. */
export function regionMask(region: DetectorRegion, rows: number, cols: number): Uint8Array {
  const mask = new Uint8Array(rows * cols);
  for (let row = 0; row < rows; row++) {
    for (let col = 0; col < cols; col++) {
      if (regionContains(region, row, col)) mask[row * cols + col] = 1;
    }
  }
  return mask;
}

/** floor(sqrt(d2)) computed exactly for d2 >= 0. */
export function floorSqrt(d2: number): number {
  let k = Math.floor(Math.sqrt(d2));
  while ((k + 1) * (k + 1) <= d2) k++;
  while (k > 0 && k * k > d2) k--;
  return k;
}

function unflaggedValue(sum: ArrayLike<number>, flagged: ArrayLike<number> | undefined, i: number): number {
  if (flagged?.[i]) return 0;
  const v = sum[i];
  return Number.isFinite(v) && v > 0 ? v : 0;
}

export interface Centre {
  cx: number;
  cy: number;
}

/**
 * Intensity centroid of the brightest region of a pattern (flagged pixels count as 0): the pixels at or
 * above half of the maximum form 4-connected regions; the region with the largest total intensity wins,
 * and its intensity-weighted centroid is the centre (quantized). An empty pattern gives the detector centre.
 */
export function brightestRegionCentroid(
  sum: ArrayLike<number>,
  rows: number,
  cols: number,
  flagged?: ArrayLike<number>,
): Centre {
  const n = rows * cols;
  let max = 0;
  for (let i = 0; i < n; i++) max = Math.max(max, unflaggedValue(sum, flagged, i));
  if (max <= 0) return { cx: quantize((cols - 1) / 2), cy: quantize((rows - 1) / 2) };
  const threshold = max / 2;
  const label = new Int32Array(n).fill(-1);
  const stack: number[] = [];
  let best = { total: -1, sx: 0, sy: 0 };
  for (let seed = 0; seed < n; seed++) {
    if (label[seed] !== -1 || unflaggedValue(sum, flagged, seed) < threshold) continue;
    let total = 0;
    let sx = 0;
    let sy = 0;
    label[seed] = seed;
    stack.push(seed);
    while (stack.length > 0) {
      const i = stack.pop()!;
      const row = Math.floor(i / cols);
      const col = i - row * cols;
      const v = unflaggedValue(sum, flagged, i);
      total += v;
      sx += v * col;
      sy += v * row;
      const neighbours = [
        row > 0 ? i - cols : -1,
        row < rows - 1 ? i + cols : -1,
        col > 0 ? i - 1 : -1,
        col < cols - 1 ? i + 1 : -1,
      ];
      for (const j of neighbours) {
        if (j < 0 || label[j] !== -1 || unflaggedValue(sum, flagged, j) < threshold) continue;
        label[j] = seed;
        stack.push(j);
      }
    }
    if (total > best.total) best = { total, sx, sy };
  }
  return { cx: quantize(best.sx / best.total), cy: quantize(best.sy / best.total) };
}

function median(values: number[]): number {
  if (values.length === 0) return Number.NaN;
  values.sort((x, y) => x - y);
  const mid = values.length >> 1;
  return values.length % 2 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

/**
 * Median of the unflagged pixels in each ring k <= d < k + 1 around (cx, cy); NaN where a ring holds no
 * unflagged pixel. The median (not the mean) keeps a few unflagged hot pixels from lifting a ring.
 * Length: one more than the largest ring index on the detector.
 */
export function radialProfile(
  sum: ArrayLike<number>,
  rows: number,
  cols: number,
  centre: Centre,
  flagged?: ArrayLike<number>,
): Float64Array {
  const rings: number[][] = [];
  for (let row = 0; row < rows; row++) {
    for (let col = 0; col < cols; col++) {
      const k = floorSqrt(distance2(row, col, centre.cx, centre.cy));
      while (rings.length <= k) rings.push([]);
      const i = row * cols + col;
      if (!flagged?.[i]) rings[k].push(sum[i]);
    }
  }
  return Float64Array.from(rings, median);
}

/** Median of the unflagged pixels closer than `within` to the centre: the central value of the profile. */
export function centralValue(
  sum: ArrayLike<number>,
  rows: number,
  cols: number,
  centre: Centre,
  flagged?: ArrayLike<number>,
  within = 2,
): number {
  const inside: number[] = [];
  for (let row = 0; row < rows; row++) {
    for (let col = 0; col < cols; col++) {
      const i = row * cols + col;
      if (!flagged?.[i] && distance2(row, col, centre.cx, centre.cy) < within * within) inside.push(sum[i]);
    }
  }
  return median(inside);
}

/**
 * The radius where a radial profile first drops below half of the central value (by default its first
 * non-empty ring), interpolated linearly between the mean radii of the two rings (k - 1 + 0.5 and k + 0.5)
 * that straddle the half level. At least 1 pixel; the profile's extent when it never drops.
 */
export function halfCentralRadius(profile: Float64Array, central?: number): number {
  let first = 0;
  while (first < profile.length && Number.isNaN(profile[first])) first++;
  if (first >= profile.length) return 1;
  const centre = central === undefined || Number.isNaN(central) ? profile[first] : central;
  const half = centre / 2;
  let prevRing = first;
  for (let k = first + 1; k < profile.length; k++) {
    const v = profile[k];
    if (Number.isNaN(v)) continue;
    if (v < half) {
      const before = Math.max(profile[prevRing], half);
      const t = before > v ? (before - half) / (before - v) : 0;
      const r = prevRing + 0.5 + t * (k - prevRing);
      return Math.max(1, r);
    }
    prevRing = k;
  }
  return Math.max(1, profile.length);
}

/** Distance from (cx, cy) to the nearest outer edge of the detector: the largest circle that fits. */
export function inscribedRadius(rows: number, cols: number, centre: Centre): number {
  return Math.max(
    0,
    Math.min(centre.cx + 0.5, centre.cy + 0.5, cols - 0.5 - centre.cx, rows - 0.5 - centre.cy),
  );
}

export interface DefaultGeometry {
  centre: Centre;
  /** Radius of the bright-field disk (where the radial profile falls below half of its centre). */
  bfRadius: number;
  bf: Disk;
  /** 1.5x to 3x the BF radius; the outer radius clamped to the largest circle inside the detector. */
  adf: Annulus;
}

/**
 * The 3x3 median of each pixel's unflagged neighbourhood (itself included), and which pixels had no
 * unflagged neighbour at all. Removes isolated hot pixels the detector did not flag, so one count of
 * 65535 cannot outshine the bright-field disk of a summed pattern.
 */
export function median3x3(
  values: ArrayLike<number>,
  rows: number,
  cols: number,
  flagged?: ArrayLike<number>,
): { values: Float64Array; empty: Uint8Array } {
  const out = new Float64Array(rows * cols);
  const empty = new Uint8Array(rows * cols);
  const window: number[] = [];
  for (let row = 0; row < rows; row++) {
    for (let col = 0; col < cols; col++) {
      window.length = 0;
      for (let r = Math.max(0, row - 1); r <= Math.min(rows - 1, row + 1); r++) {
        for (let c = Math.max(0, col - 1); c <= Math.min(cols - 1, col + 1); c++) {
          const i = r * cols + c;
          if (!flagged?.[i]) window.push(values[i]);
        }
      }
      const i = row * cols + col;
      if (window.length === 0) {
        empty[i] = 1;
        continue;
      }
      window.sort((a, b) => a - b);
      const mid = window.length >> 1;
      out[i] = window.length % 2 ? window[mid] : (window[mid - 1] + window[mid]) / 2;
    }
  }
  return { values: out, empty };
}

/**
 * The default BF disk and ADF annulus of a summed diffraction pattern. The centre is the brightest region's
 * centroid in its 3x3 median, the radius comes from ring medians: unflagged hot pixels move neither.
 */
export function defaultGeometry(
  sum: ArrayLike<number>,
  rows: number,
  cols: number,
  flagged?: ArrayLike<number>,
): DefaultGeometry {
  const smooth = median3x3(sum, rows, cols, flagged);
  const centre = brightestRegionCentroid(smooth.values, rows, cols, smooth.empty);
  const limit = inscribedRadius(rows, cols, centre);
  const profile = radialProfile(sum, rows, cols, centre, flagged);
  const central = centralValue(sum, rows, cols, centre, flagged);
  const bfRadius = quantize(Math.min(halfCentralRadius(profile, central), limit));
  const outer = Math.min(3 * bfRadius, limit);
  // When the detector clamps the outer radius, the inner one shrinks with it so the annulus stays open.
  const inner = Math.min(1.5 * bfRadius, outer / 2);
  return {
    centre,
    bfRadius,
    bf: disk(centre.cx, centre.cy, bfRadius),
    adf: annulus(centre.cx, centre.cy, inner, outer),
  };
}

/**
 * The outline of a binary mask as unit segments along pixel edges, in detector coordinates
 * ([x0, y0, x1, y1] with pixel (row, col) spanning col - 0.5..col + 0.5): every edge between a covered
 * pixel and an uncovered pixel (or the detector's border).
 */
export function maskOutline(mask: ArrayLike<number>, rows: number, cols: number): Float32Array {
  const segments: number[] = [];
  const on = (row: number, col: number) =>
    row >= 0 && row < rows && col >= 0 && col < cols && mask[row * cols + col] !== 0;
  for (let row = 0; row < rows; row++) {
    for (let col = 0; col < cols; col++) {
      if (!on(row, col)) continue;
      const x0 = col - 0.5;
      const y0 = row - 0.5;
      if (!on(row - 1, col)) segments.push(x0, y0, x0 + 1, y0);
      if (!on(row + 1, col)) segments.push(x0, y0 + 1, x0 + 1, y0 + 1);
      if (!on(row, col - 1)) segments.push(x0, y0, x0, y0 + 1);
      if (!on(row, col + 1)) segments.push(x0 + 1, y0, x0 + 1, y0 + 1);
    }
  }
  return Float32Array.from(segments);
}

export function countCovered(mask: ArrayLike<number>): number {
  let n = 0;
  for (let i = 0; i < mask.length; i++) if (mask[i]) n++;
  return n;
}
