import { describe, expect, it } from 'vitest';
import { annulus, defaultGeometry, disk, quantize, rect } from '../products/detector-geometry';
import {
  calibratedPresets,
  dragRegion,
  fieldValue,
  grab,
  mradPerPixel,
  presetRegion,
  regionFields,
  regionHandles,
  sameRegion,
  withCentre,
  withField,
} from './mask-edit';

describe('mask editing', () => {
  it('makes BF/ABF/ADF presets from the default geometry', () => {
    const rows = 32;
    const cols = 32;
    const sum = new Float64Array(rows * cols).fill(1);
    for (let r = 0; r < rows; r++)
      for (let c = 0; c < cols; c++) if ((r - 15) ** 2 + (c - 16) ** 2 <= 16) sum[r * cols + c] = 100;
    const g = defaultGeometry(sum, rows, cols);
    expect(presetRegion('bf', g)).toEqual(g.bf);
    expect(presetRegion('adf', g)).toEqual(g.adf);
    const abf = presetRegion('abf', g);
    expect(abf).toEqual(annulus(g.centre.cx, g.centre.cy, g.bfRadius / 2, g.bfRadius));
    expect(abf.kind === 'annulus' && abf.outer).toBe(g.bf.r);
  });

  it('sets fields quantized and clamped, keeping inner <= outer', () => {
    const d = disk(10, 10, 4);
    expect(withField(d, 'r', 5.3, 32, 32)).toEqual(disk(10, 10, quantize(5.3)));
    expect(withField(d, 'r', -2, 32, 32)).toEqual(disk(10, 10, 0));
    expect(withField(d, 'r', 1e9, 32, 32)).toEqual(disk(10, 10, Math.ceil(Math.hypot(32, 32))));
    expect(withField(d, 'cx', 99, 32, 40)).toEqual(disk(39.5, 10, 4));
    expect(withField(d, 'cy', -7, 32, 40)).toEqual(disk(10, -0.5, 4));
    expect(withField(d, 'r', Number.NaN, 32, 32)).toBe(d);
    const a = annulus(10, 10, 3, 6);
    expect(withField(a, 'inner', 8, 32, 32)).toEqual(annulus(10, 10, 8, 8));
    expect(withField(a, 'outer', 2, 32, 32)).toEqual(annulus(10, 10, 2, 2));
    expect(withField(a, 'outer', 7.001, 32, 32)).toEqual(annulus(10, 10, 3, quantize(7.001)));
    expect(withCentre(a, 3.3, 4.4, 32, 32)).toEqual(annulus(3.3, 4.4, 3, 6));
    expect(regionFields(a)).toEqual(['cx', 'cy', 'inner', 'outer']);
    expect(regionFields(d)).toEqual(['cx', 'cy', 'r']);
    expect(fieldValue(a, 'outer')).toBe(6);
    expect(sameRegion(a, annulus(10, 10, 3, 6))).toBe(true);
    expect(sameRegion(a, annulus(10, 10, 3, 6.5))).toBe(false);
    expect(sameRegion(a, d)).toBe(false);
  });

  it('grabs handles, then circles, then the inside', () => {
    const d = disk(10, 10, 4);
    expect(regionHandles(d).map((h) => [h.field, h.x, h.y])).toEqual([
      ['r', 14, 10],
      ['centre', 10, 10],
    ]);
    expect(grab(d, 14.3, 10.2, 1)).toBe('r');
    expect(grab(d, 10.2, 9.9, 1)).toBe('centre');
    expect(grab(d, 10, 14.4, 1)).toBe('r'); // on the circle, away from the handle
    expect(grab(d, 12, 11, 1)).toBe('centre'); // inside
    expect(grab(d, 20, 20, 1)).toBeNull();
    const a = annulus(10, 10, 4, 8);
    expect(grab(a, 18, 10, 1)).toBe('outer');
    expect(grab(a, 10 + 4 * Math.SQRT1_2, 10 + 4 * Math.SQRT1_2, 1)).toBe('inner');
    expect(grab(a, 10, 6.2, 1)).toBe('inner');
    expect(grab(a, 10, 16, 1)).toBe('centre');
  });

  it('drags the centre by the pointer motion and radii to the pointer distance, on a 1/8 grid', () => {
    const d = disk(10, 10, 4);
    expect(dragRegion(d, 'centre', { x: 10, y: 10 }, { x: 12.06, y: 7.9 }, 32, 32)).toEqual(
      disk(12, 7.875, 4),
    );
    expect(dragRegion(d, 'r', { x: 14, y: 10 }, { x: 10, y: 16.01 }, 32, 32)).toEqual(disk(10, 10, 6));
    const a = annulus(10, 10, 4, 8);
    expect(dragRegion(a, 'inner', { x: 0, y: 0 }, { x: 19, y: 10 }, 32, 32)).toEqual(annulus(10, 10, 9, 9));
  });

  it('converts pixels to mrad when calibration exists', () => {
    expect(mradPerPixel({})).toBeNull();
    expect(mradPerPixel({ detectorPixelSize: [75e-6, 75e-6], detectorDistance: 0.15 })).toBeCloseTo(0.5, 12);
  });

  it('edits rectangles: fields, corner handle, drag and grab', () => {
    const r = rect(10, 8, 4, 6);
    expect(regionFields(r)).toEqual(['cx', 'cy', 'w', 'h']);
    expect(fieldValue(r, 'w')).toBe(4);
    expect(fieldValue(r, 'h')).toBe(6);
    expect(withField(r, 'w', 7.3, 32, 32)).toEqual(rect(10, 8, quantize(7.3), 6));
    expect(withField(r, 'h', -3, 32, 32)).toEqual(rect(10, 8, 4, 0));
    expect(regionHandles(r)).toEqual([
      { field: 'corner', x: 12, y: 11 },
      { field: 'centre', x: 10, y: 8 },
    ]);
    expect(grab(r, 12.2, 11.1, 1)).toBe('corner');
    expect(grab(r, 9, 6, 0.5)).toBe('centre');
    expect(grab(r, 13, 8, 0.5)).toBeNull();
    // Dragging the corner sets the size symmetric about the centre (1/8-pixel snap).
    expect(dragRegion(r, 'corner', { x: 12, y: 11 }, { x: 15.06, y: 9 }, 32, 32)).toEqual(
      rect(10, 8, 10.125, 2),
    );
    expect(dragRegion(r, 'centre', { x: 10, y: 8 }, { x: 11, y: 7 }, 32, 32)).toEqual(rect(11, 7, 4, 6));
    expect(sameRegion(r, rect(10, 8, 4, 6))).toBe(true);
    expect(sameRegion(r, rect(10, 8, 4, 5))).toBe(false);
  });

  it('makes BF/ABF/ADF presets from the convergence semi-angle in mrad', () => {
    // 0.5 mrad per pixel, alpha 10 mrad: BF r = 20 px, ABF 10..20 px, ADF 30..60 px.
    const p = calibratedPresets(10, 0.5, { cx: 95.5, cy: 96 });
    expect(p).toEqual({
      bf: disk(95.5, 96, 20),
      abf: annulus(95.5, 96, 10, 20),
      adf: annulus(95.5, 96, 30, 60),
    });
    expect(calibratedPresets(0, 0.5, { cx: 0, cy: 0 })).toBeNull();
    expect(calibratedPresets(10, Number.NaN, { cx: 0, cy: 0 })).toBeNull();
  });
});
