import { describe, expect, it } from 'vitest';
import { clampView, FIT_VIEW, layoutView, maxZoom, zoomAt } from './view-transform';

const box = { width: 400, height: 300 };

describe('view transform', () => {
  it('fits and centres at zoom 1', () => {
    expect(layoutView(box, 48, 48, FIT_VIEW)).toEqual({
      scale: 6.25,
      left: 50,
      top: 0,
      width: 300,
      height: 300,
    });
  });

  it('zooms about the cursor: the image point under it stays put', () => {
    const v = zoomAt(box, 48, 48, FIT_VIEW, 4, 140, 90);
    expect(v.zoom).toBe(4);
    const before = layoutView(box, 48, 48, FIT_VIEW);
    const after = layoutView(box, 48, 48, v);
    const u0 = (140 - before.left) / before.scale;
    const u1 = (140 - after.left) / after.scale;
    expect(u1).toBeCloseTo(u0, 9);
    expect((90 - after.top) / after.scale).toBeCloseTo((90 - before.top) / before.scale, 9);
  });

  it('clamps zoom and keeps a zoomed image covering the panel', () => {
    expect(clampView(box, 48, 48, { zoom: 0.2, panX: 30, panY: 30 })).toEqual(FIT_VIEW);
    expect(clampView(box, 48, 48, { zoom: 1e6, panX: 0, panY: 0 }).zoom).toBe(maxZoom(box, 48, 48));
    const v = clampView(box, 48, 48, { zoom: 2, panX: 1e4, panY: -1e4 });
    const l = layoutView(box, 48, 48, v);
    expect(l.left).toBe(0);
    expect(l.top + l.height).toBe(300);
  });
});
