import { createStore } from 'zustand/vanilla';

/** Display preferences (not data): colormap, contrast rule and scales. */
export type ColormapChoice = 'gray' | 'viridis';
export type ContrastChoice = 'minmax' | 'percentile';
export type ScaleChoice = 'linear' | 'log';

export interface ViewState {
  colormap: ColormapChoice;
  contrast: ContrastChoice;
  /** Scale of the detector panel (diffraction spans decades: log by default). */
  detectorScale: ScaleChoice;
  /** Scale of the virtual image panel. */
  virtualScale: ScaleChoice;
  setColormap(colormap: ColormapChoice): void;
  setContrast(contrast: ContrastChoice): void;
  setDetectorScale(scale: ScaleChoice): void;
  setVirtualScale(scale: ScaleChoice): void;
}

export function createViewStore() {
  return createStore<ViewState>()((set) => ({
    colormap: 'viridis',
    contrast: 'percentile',
    detectorScale: 'log',
    virtualScale: 'linear',
    setColormap: (colormap) => set({ colormap }),
    setContrast: (contrast) => set({ contrast }),
    setDetectorScale: (detectorScale) => set({ detectorScale }),
    setVirtualScale: (virtualScale) => set({ virtualScale }),
  }));
}

export type ViewStore = ReturnType<typeof createViewStore>;
