import type { DetectorRegion } from '../products/detector-geometry';
import type { AcquisitionStore } from '../state/acquisition-store';
import type { ViewStore } from '../state/view-store';
import type { AcquisitionApi, AcquisitionSummary } from '../workers/acquisition-api';
import { stopWorker } from '../workers/remote';
import { probeWebGpu } from './GpuNotice';
import { viewStore } from './stores';

/**
 * `window.__stemflow`: read-only access for the e2e tests to the exact values behind the canvases. Arrays come
 * back as plain number arrays (they cross into Playwright as JSON).
 */
export interface StemflowTestHook {
  state(): {
    phase: string;
    error: string | null;
    activity: string | null;
    progress: { framesDone: number; frameCount: number } | null;
    picked: { row: number; col: number } | null;
    frameIndex: number | null;
    detectorMode: string;
    patternView: string;
    elapsedMs: number | null;
    geometry: unknown;
    /** The current detector's region, whether an update is in flight, and whether the image is current. */
    region: DetectorRegion | null;
    virtualBusy: boolean;
    virtualCurrent: boolean;
  };
  /** The current detector's layers (shapes and brush strokes after its region) and the selected one. */
  layers(): { layers: unknown[]; selected: number };
  /** The view preferences (colormap, contrast, percentiles, scales). */
  view(): {
    colormap: string;
    contrast: string;
    percentiles: number[];
    detectorScale: string;
    virtualScale: string;
    detectorTool: string;
    brushRadius: number;
    scanStepNm: number | null;
  };
  /** Resolves when the virtual image matches the current detector's mask. */
  virtualSettled(): Promise<void>;
  summary(): AcquisitionSummary | null;
  /** The virtual image of the current detector mode (row-major scan). */
  virtualImage(): number[] | null;
  /** The current virtual detector mask (1 = covered; the worker also leaves out flagged pixels). */
  detectorMask(): number[] | null;
  /** The mask the shown virtual image was computed from (the current one once settled). */
  imageMask(): number[] | null;
  pixelMask(): number[] | null;
  frameTotals(): number[] | null;
  /** The load audit: the largest unflagged count and how many unflagged values exceed 255. */
  audit(): { maxCount: number; countAbove255: number; loadMs: number } | null;
  sumDiffraction(): number[] | null;
  /** The frame shown in the detector panel. */
  shownFrame(): { index: number; values: number[] } | null;
  /** Where the counts live and why the CPU path was taken, if it was. */
  backend(): { backend: string; fallbackReason: string | null } | null;
  /** Fault injection and accounting (issue 8). */
  faults: {
    stopWorker(): void;
    inject(fault: 'gpu-out-of-memory' | 'gpu-device-lost' | 'read-failure' | 'none'): Promise<void>;
    gpuMemory(): Promise<{ buffers: number; bytes: number }>;
  };
  /** The picked scan region and its summed pattern, once read. */
  regionPattern(): { region: unknown; values: number[] } | null;
  /** Any frame, read through the worker. */
  frame(index: number): Promise<number[]>;
  gpu(): ReturnType<typeof probeWebGpu>;
}

declare global {
  interface Window {
    __stemflow?: StemflowTestHook;
  }
}

const list = (a: ArrayLike<number> | null | undefined) => (a ? Array.from(a) : null);

export function installTestHook(
  store: AcquisitionStore,
  api: () => AcquisitionApi,
  view: ViewStore = viewStore,
): void {
  window.__stemflow = {
    state() {
      const s = store.getState();
      return {
        phase: s.phase,
        error: s.error,
        activity: s.activity,
        progress: s.progress,
        picked: s.picked,
        frameIndex: s.frame?.index ?? null,
        detectorMode: s.detectorMode,
        patternView: s.patternView,
        elapsedMs: s.elapsedMs,
        geometry: s.data?.geometry ?? null,
        region: s.regions?.[s.detectorMode] ?? null,
        virtualBusy: s.virtualBusy,
        virtualCurrent:
          !!s.masks && s.imageMasks[s.detectorMode] === s.masks[s.detectorMode] && !s.virtualBusy,
      };
    },
    layers: () => {
      const s = store.getState();
      return { layers: JSON.parse(JSON.stringify(s.layers[s.detectorMode])), selected: s.selectedLayer };
    },
    view: () => {
      const v = view.getState();
      return {
        colormap: v.colormap,
        contrast: v.contrast,
        percentiles: [...v.percentiles],
        detectorScale: v.detectorScale,
        virtualScale: v.virtualScale,
        detectorTool: v.detectorTool,
        brushRadius: v.brushRadius,
        scanStepNm: v.scanStepNm,
      };
    },
    virtualSettled: () => store.getState().virtualSettled(),
    summary: () => store.getState().summary,
    virtualImage: () => {
      const s = store.getState();
      return list(s.virtualImages[s.detectorMode]);
    },
    detectorMask: () => {
      const s = store.getState();
      return list(s.masks?.[s.detectorMode]);
    },
    imageMask: () => {
      const s = store.getState();
      return list(s.imageMasks[s.detectorMode]);
    },
    pixelMask: () => list(store.getState().data?.pixelMask),
    frameTotals: () => list(store.getState().data?.frameTotals),
    audit: () => {
      const d = store.getState().data;
      return d ? { maxCount: d.maxCount, countAbove255: d.countAbove255, loadMs: d.loadMs } : null;
    },
    sumDiffraction: () => list(store.getState().data?.sumDiffraction),
    shownFrame: () => {
      const f = store.getState().frame;
      return f ? { index: f.index, values: Array.from(f.values) } : null;
    },
    backend: () => {
      const d = store.getState().data;
      return d ? { backend: d.backend, fallbackReason: d.fallbackReason } : null;
    },
    faults: {
      stopWorker: () => stopWorker('The acquisition worker stopped (test).'),
      inject: (fault) => api().injectFault(fault),
      gpuMemory: () => api().gpuMemory(),
    },
    regionPattern: () => {
      const r = store.getState().regionPattern;
      return r ? { region: r.region, values: Array.from(r.values) } : null;
    },
    frame: async (index) => Array.from(await api().frame(index)),
    gpu: probeWebGpu,
  };
}
