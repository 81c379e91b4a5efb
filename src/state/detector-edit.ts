import type { DetectorRegion } from '../products/detector-geometry';
import { composeMask, type MaskLayer } from '../products/detector-layers';
import type { AcquisitionState } from './acquisition-store';
import { DETECTOR_MODES, type DetectorMode, presetRegion, sameRegion } from './mask-edit';

/**
 * The detector-editing actions of the acquisition store: each detector is a primary region (a preset, moved
 * and resized by the user) followed by layers (shapes added or subtracted, brush strokes), composed into its
 * mask by `composeMask`. Every change recomputes the mask and asks for the virtual image (`refresh`).
 */
export interface DetectorEditActions {
  /** Sets a detector's primary region; its virtual image follows (throttled, always ending with the last). */
  setRegion(mode: DetectorMode, region: DetectorRegion): Promise<void>;
  /** Restores a detector's preset from the default geometry (its layers removed) and selects it. */
  applyPreset(mode: DetectorMode): Promise<void>;
  /** Sets the primary regions of several detectors at once (their layers kept), e.g. calibrated presets. */
  setRegions(regions: Partial<Record<DetectorMode, DetectorRegion>>): Promise<void>;
  /** Appends a layer to the current detector; a shape becomes the selected one. Returns its index. */
  addLayer(layer: MaskLayer): number;
  /** Replaces layer `index` of the current detector (the brush extends its stroke this way). */
  setLayer(index: number, layer: MaskLayer): Promise<void>;
  removeLayer(index: number): Promise<void>;
  /** Which shape the handles and numeric fields edit: -1 the primary region, else a shape layer. */
  selectLayer(index: number): void;
  /** Sets the selected shape's region (the primary region or a shape layer). */
  setSelectedRegion(region: DetectorRegion): Promise<void>;
}

export const NO_LAYERS: Record<DetectorMode, MaskLayer[]> = { bf: [], abf: [], adf: [] };

type Set = (patch: Partial<AcquisitionState>) => void;
type Get = () => AcquisitionState;

/** The region the handles edit: the primary one, or the selected shape layer's. */
export function selectedRegion(
  s: Pick<AcquisitionState, 'regions' | 'layers' | 'selectedLayer' | 'detectorMode'>,
) {
  const layer = s.layers[s.detectorMode][s.selectedLayer];
  if (layer?.kind === 'shape') return layer.region;
  return s.regions?.[s.detectorMode] ?? null;
}

export function createDetectorEdit(set: Set, get: Get, refresh: () => Promise<void>): DetectorEditActions {
  /** Stores new regions/layers of some detectors with their masks recomputed, then refreshes the image. */
  function update(
    changes: Partial<Record<DetectorMode, { region?: DetectorRegion; layers?: MaskLayer[] }>>,
  ): Promise<void> {
    const { summary, regions, masks, layers } = get();
    if (!summary || !regions || !masks) return Promise.resolve();
    const [rows, cols] = summary.detector;
    const nextRegions = { ...regions };
    const nextLayers = { ...layers };
    const nextMasks = { ...masks };
    for (const mode of DETECTOR_MODES) {
      const change = changes[mode];
      if (!change) continue;
      nextRegions[mode] = change.region ?? regions[mode];
      nextLayers[mode] = change.layers ?? layers[mode];
      nextMasks[mode] = composeMask(nextRegions[mode], nextLayers[mode], rows, cols);
    }
    set({ regions: nextRegions, layers: nextLayers, masks: nextMasks });
    return refresh();
  }

  const current = () => get().detectorMode;

  async function setRegion(mode: DetectorMode, region: DetectorRegion) {
    const { regions } = get();
    if (!regions || !DETECTOR_MODES.includes(mode)) return;
    if (sameRegion(regions[mode], region)) return refresh();
    await update({ [mode]: { region } });
  }

  async function setLayer(index: number, layer: MaskLayer) {
    const mode = current();
    const layers = get().layers[mode].slice();
    if (index < 0 || index >= layers.length) return;
    layers[index] = layer;
    await update({ [mode]: { layers } });
  }

  return {
    setRegion,
    setLayer,

    async applyPreset(mode) {
      const { data } = get();
      set({ detectorMode: mode, selectedLayer: -1 });
      if (data) await update({ [mode]: { region: presetRegion(mode, data.geometry), layers: [] } });
    },

    async setRegions(regions) {
      const changes: Partial<Record<DetectorMode, { region: DetectorRegion }>> = {};
      for (const mode of DETECTOR_MODES) {
        const region = regions[mode];
        if (region) changes[mode] = { region };
      }
      await update(changes);
    },

    addLayer(layer) {
      const mode = current();
      const layers = [...get().layers[mode], layer];
      if (layer.kind === 'shape') set({ selectedLayer: layers.length - 1 });
      void update({ [mode]: { layers } });
      return layers.length - 1;
    },

    async removeLayer(index) {
      const mode = current();
      const layers = get().layers[mode].filter((_, i) => i !== index);
      const selected = get().selectedLayer;
      set({ selectedLayer: selected === index ? -1 : selected > index ? selected - 1 : selected });
      await update({ [mode]: { layers } });
    },

    selectLayer(index) {
      const layer = get().layers[current()][index];
      set({ selectedLayer: layer?.kind === 'shape' ? index : -1 });
    },

    async setSelectedRegion(region) {
      const s = get();
      const layer = s.layers[s.detectorMode][s.selectedLayer];
      if (layer?.kind === 'shape') await setLayer(s.selectedLayer, { ...layer, region });
      else await setRegion(s.detectorMode, region);
    },
  };
}
