import { describe, expect, it } from 'vitest';
import { createViewStore } from './view-store';

describe('view store', () => {
  it('starts with viridis, percentile contrast, a log detector and a linear virtual image', () => {
    const s = createViewStore().getState();
    expect([s.colormap, s.contrast, s.detectorScale, s.virtualScale]).toEqual([
      'viridis',
      'percentile',
      'log',
      'linear',
    ]);
  });

  it('changes each preference on its own', () => {
    const store = createViewStore();
    store.getState().setColormap('gray');
    store.getState().setContrast('minmax');
    store.getState().setDetectorScale('linear');
    store.getState().setVirtualScale('log');
    const s = store.getState();
    expect([s.colormap, s.contrast, s.detectorScale, s.virtualScale]).toEqual([
      'gray',
      'minmax',
      'linear',
      'log',
    ]);
  });

  it('sets percentiles (valid ones only) and toggles the log scales', () => {
    const store = createViewStore();
    store.getState().setContrast('minmax');
    store.getState().setPercentiles([2, 98]);
    expect(store.getState().percentiles).toEqual([2, 98]);
    expect(store.getState().contrast).toBe('percentile');
    store.getState().setPercentiles([50, 10]);
    store.getState().setPercentiles([-1, 10]);
    expect(store.getState().percentiles).toEqual([2, 98]);
    store.getState().toggleVirtualScale();
    store.getState().toggleDetectorScale();
    expect([store.getState().virtualScale, store.getState().detectorScale]).toEqual(['log', 'linear']);
    store.getState().toggleVirtualScale();
    expect(store.getState().virtualScale).toBe('linear');
  });

  it('keeps the brush radius on the 1/256 grid and refuses nonsense', () => {
    const store = createViewStore();
    expect(store.getState().brushRadius).toBe(2);
    store.getState().setBrushRadius(3.3);
    expect(store.getState().brushRadius).toBe(3.30078125);
    store.getState().setBrushRadius(-1);
    store.getState().setBrushRadius(Number.NaN);
    expect(store.getState().brushRadius).toBe(3.30078125);
  });
});
