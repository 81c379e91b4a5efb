import { createStore } from 'zustand/vanilla';
import { quantize } from '../products/detector-geometry';

/** Display preferences (not data): colormap, contrast rule and scales. */
export type ColormapChoice = 'gray' | 'viridis' | 'inferno' | 'magma';
export type ContrastChoice = 'minmax' | 'percentile';
export type ScaleChoice = 'linear' | 'log';
/** What a drag on the detector does: move/resize shapes, or paint/erase mask pixels with a round brush. */
export type DetectorTool = 'edit' | 'paint' | 'erase';

export interface ViewState {
  colormap: ColormapChoice;
  contrast: ContrastChoice;
  /** Low and high percentiles of the percentile contrast. */
  percentiles: [number, number];
  /** Scale of the detector panel (diffraction spans decades: log by default). */
  detectorScale: ScaleChoice;
  /** Scale of the virtual image panel. */
  virtualScale: ScaleChoice;
  detectorTool: DetectorTool;
  /** Brush radius in detector pixels (pixels whose centre lies within it are painted). */
  brushRadius: number;
  /** Memory a load may use (bytes; GPU and CPU paths), null for the defaults (the device's limits). */
  memoryBudget: number | null;
  setMemoryBudget(bytes: number | null): void;
  /** Real-space distance between scan positions in nm, typed by the user (the files do not give it). */
  scanStepNm: number | null;
  setScanStep(nm: number | null): void;
  setDetectorTool(tool: DetectorTool): void;
  setBrushRadius(radius: number): void;
  setColormap(colormap: ColormapChoice): void;
  setContrast(contrast: ContrastChoice): void;
  setPercentiles(percentiles: [number, number]): void;
  setDetectorScale(scale: ScaleChoice): void;
  setVirtualScale(scale: ScaleChoice): void;
  toggleVirtualScale(): void;
  toggleDetectorScale(): void;
}

/** The percentile windows offered (low, high). */
export const PERCENTILE_CHOICES: [number, number][] = [
  [0.1, 99.9],
  [0.5, 99.5],
  [1, 99],
  [2, 98],
  [5, 95],
];

const flip = (s: ScaleChoice): ScaleChoice => (s === 'log' ? 'linear' : 'log');

export function createViewStore() {
  return createStore<ViewState>()((set, get) => ({
    colormap: 'viridis',
    contrast: 'percentile',
    percentiles: [0.5, 99.5],
    detectorScale: 'log',
    virtualScale: 'linear',
    detectorTool: 'edit',
    brushRadius: 2,
    memoryBudget: null,
    setMemoryBudget: (bytes) =>
      set({ memoryBudget: bytes !== null && Number.isFinite(bytes) && bytes > 0 ? bytes : null }),
    scanStepNm: null,
    setScanStep: (nm) => set({ scanStepNm: nm !== null && Number.isFinite(nm) && nm > 0 ? nm : null }),
    setDetectorTool: (detectorTool) => set({ detectorTool }),
    setBrushRadius: (radius) => {
      if (Number.isFinite(radius) && radius >= 0 && radius <= 1024) set({ brushRadius: quantize(radius) });
    },
    setColormap: (colormap) => set({ colormap }),
    setContrast: (contrast) => set({ contrast }),
    setDetectorScale: (detectorScale) => set({ detectorScale }),
    setVirtualScale: (virtualScale) => set({ virtualScale }),
    setPercentiles: (percentiles) => {
      const [lo, hi] = percentiles;
      if (Number.isFinite(lo) && Number.isFinite(hi) && lo >= 0 && hi <= 100 && lo < hi)
        set({ percentiles: [lo, hi], contrast: 'percentile' });
    },
    toggleVirtualScale: () => set({ virtualScale: flip(get().virtualScale) }),
    toggleDetectorScale: () => set({ detectorScale: flip(get().detectorScale) }),
  }));
}

export type ViewStore = ReturnType<typeof createViewStore>;
