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
});
