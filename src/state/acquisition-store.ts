import { createStore } from 'zustand/vanilla';
import { type DetectorRegion, defaultGeometry } from '../products/detector-geometry';
import { composeMask, type MaskLayer } from '../products/detector-layers';
import type { ScanRegion } from '../products/region-sum';
import type { AcquisitionApi, AcquisitionSummary, LoadProgress } from '../workers/acquisition-api';
import { fileList, type LoadedData, type ScanPosition, scanCentre, scanIndex } from './acquisition-data';
import { createDetectorEdit, type DetectorEditActions, NO_LAYERS } from './detector-edit';
import { describeError } from './error-message';
import { type DetectorMode, presetRegions } from './mask-edit';
import { type PreferenceStorage, recentScan, rememberScan } from './scan-shape';

export type { DetectorMode } from './mask-edit';

/**
 * The loaded acquisition as the UI sees it: summary, load progress, derived images, the picked scan position
 * and the virtual detector. The worker is injected (`api`), so the store runs in Node tests with a fake.
 */
export type LoadPhase = 'idle' | 'fetching' | 'opening' | 'loading' | 'ready' | 'error';
export type PatternView = 'frame' | 'region' | 'sum' | 'mean';
export type FrameValues = Uint8Array | Uint16Array | Uint32Array;

export { fileList, type LoadedData, type ScanPosition, scanCentre, scanIndex } from './acquisition-data';

export interface AcquisitionState extends DetectorEditActions {
  phase: LoadPhase;
  /** What is being fetched or opened, for the status line. */
  activity: string | null;
  summary: AcquisitionSummary | null;
  progress: LoadProgress | null;
  /** Clock time when the current open started, and the time from there to the first image. */
  startedAt: number | null;
  elapsedMs: number | null;
  /** A readable message for the last failure; the previous acquisition stays usable. */
  error: string | null;
  data: LoadedData | null;
  detectorMode: DetectorMode;
  /** Each detector's region (edited by the user or a preset) and its mask (1 = covered; the worker also
   * leaves out flagged pixels). Null until a load finishes. */
  regions: Record<DetectorMode, DetectorRegion> | null;
  masks: Record<DetectorMode, Uint8Array> | null;
  /** Each detector's layers after its primary region (shapes added or subtracted, brush strokes). */
  layers: Record<DetectorMode, MaskLayer[]>;
  /** The shape the handles edit: -1 the primary region, else an index into the current layers. */
  selectedLayer: number;
  /** The latest virtual image of each detector and the mask it was computed from (exact integer sums). */
  virtualImages: Partial<Record<DetectorMode, Float64Array>>;
  imageMasks: Partial<Record<DetectorMode, Uint8Array>>;
  /** True while a virtual image request is in flight (one at a time; the newest mask always follows). */
  virtualBusy: boolean;
  picked: ScanPosition | null;
  frame: { index: number; values: FrameValues } | null;
  /** A rectangle of scan positions picked on the virtual image, and its summed pattern (exact) once read. */
  scanRegion: ScanRegion | null;
  regionPattern: { region: ScanRegion; values: Float64Array } | null;
  patternView: PatternView;

  /** Fetches files (e.g. the demo) and opens them. */
  openFrom(label: string, fetchFiles: () => Promise<File[]>): Promise<void>;
  /**
   * Opens and loads files, then shows the BF image and the frame at the scan centre. `dataset` picks one of
   * a single file's candidate datasets.
   */
  openFiles(files: File[], scan?: [number, number], dataset?: string): Promise<void>;
  /** Opens another candidate dataset of the open single file. */
  chooseDataset(path: string): Promise<void>;
  /** Picks a scan position and fetches its frame. */
  pick(position: ScanPosition): Promise<void>;
  /** Picks a rectangle of scan positions and shows the pattern summed over it. */
  pickRegion(region: ScanRegion): Promise<void>;
  setDetectorMode(mode: DetectorMode): Promise<void>;
  /** Moves the picked position by whole scan pixels (clamped). */
  movePick(dRow: number, dCol: number): Promise<void>;
  /** Resolves when the virtual image of the current detector matches its mask. */
  virtualSettled(): Promise<void>;
  setPatternView(view: PatternView): void;
  /** Sets the scan shape (rows x cols must be the frame count) and remembers it for this frame count. */
  setScan(scan: [number, number]): void;
  /** Stops the running load (within one batch); the previous acquisition is not restored. */
  cancelLoad(): Promise<void>;
  clearError(): void;
  /** The worker died (it restarts empty): forget the acquisition and say so; the app stays usable. */
  workerLost(message: string): void;
}

export type AcquisitionStore = ReturnType<typeof createAcquisitionStore>;

const idle = {
  phase: 'idle' as LoadPhase,
  activity: null,
  summary: null,
  progress: null,
  startedAt: null,
  elapsedMs: null,
  error: null,
  data: null,
  detectorMode: 'bf' as DetectorMode,
  regions: null,
  masks: null,
  layers: NO_LAYERS,
  selectedLayer: -1,
  virtualImages: {},
  imageMasks: {},
  virtualBusy: false,
  picked: null,
  frame: null,
  scanRegion: null,
  regionPattern: null,
  patternView: 'frame' as PatternView,
};

export function createAcquisitionStore(
  api: () => AcquisitionApi,
  clock: () => number = () => performance.now(),
  preferences: PreferenceStorage | null = null,
) {
  /** Increases with every open request; the newest one wins. */
  let requested = 0;
  /** The request whose acquisition the worker now holds (set when its open succeeds). */
  let active = 0;
  let frameRequest = 0;
  /** Opens run one after another in the worker, so the last request is the acquisition it ends up with. */
  let openQueue: Promise<unknown> = Promise.resolve();
  /** Phase and start time of the acquisition the worker holds, restored when a later open fails. */
  let activePhase: LoadPhase = 'idle';
  let activeStartedAt: number | null = null;
  /** The files of the acquisition the worker holds (opened again to pick another dataset). */
  let activeFiles: File[] = [];

  return createStore<AcquisitionState>()((set, get) => {
    /** After a failed open, fall back to what was shown before (the worker keeps it). */
    function failOpen(token: number, message: string) {
      if (token !== requested) return;
      set({
        phase: activePhase === 'idle' ? 'error' : activePhase,
        activity: activePhase === 'loading' ? (get().summary?.name ?? null) : null,
        error: message,
        startedAt: activeStartedAt,
      });
    }

    function settle(token: number, phase: LoadPhase, patch: Partial<AcquisitionState> = {}) {
      if (token !== active) return;
      activePhase = phase;
      if (requested === active) {
        set({ phase, ...patch });
      } else {
        // A newer open is in flight: leave its phase and activity on screen.
        const { activity: _, ...rest } = patch;
        set(rest);
      }
    }

    async function showFrame(index: number, token: number) {
      const request = ++frameRequest;
      const values = await api().frame(index);
      if (request === frameRequest && token === active) set({ frame: { index, values } });
    }

    /** The running request loop, if any: one virtual image request in flight at a time. */
    let pump: Promise<void> | null = null;

    /**
     * Brings the current detector's image up to date with its mask. Masks that change while a request is
     * in flight are not queued: when it returns, the loop asks for the newest mask, so a drag sends at most
     * one request at a time and always ends with the final mask.
     */
    function refreshVirtualImage(): Promise<void> {
      if (pump) return pump;
      set({ virtualBusy: true });
      const run = async () => {
        for (;;) {
          const s = get();
          const mode = s.detectorMode;
          const mask = s.masks?.[mode];
          if (!s.data || !mask || s.imageMasks[mode] === mask) return;
          const data = s.data;
          const image = await api().virtualImage(mask);
          if (get().data !== data) continue;
          set({
            virtualImages: { ...get().virtualImages, [mode]: image },
            imageMasks: { ...get().imageMasks, [mode]: mask },
          });
        }
      };
      // `finally` runs after this assignment even when the loop has nothing to do.
      pump = run().finally(() => {
        pump = null;
        set({ virtualBusy: false });
      });
      return pump;
    }

    async function refreshReporting() {
      try {
        await refreshVirtualImage();
      } catch (e) {
        set({ error: describeError(e, 'Could not compute the virtual image') });
      }
    }

    return {
      ...idle,
      ...createDetectorEdit(set, get, refreshReporting),

      async openFrom(label, fetchFiles) {
        const token = ++requested;
        set({ phase: 'fetching', activity: label, error: null, startedAt: clock() });
        let files: File[];
        try {
          files = await fetchFiles();
        } catch (e) {
          failOpen(token, describeError(e, `Could not fetch ${label}`));
          return;
        }
        if (token === requested) await get().openFiles(files);
      },

      async chooseDataset(path) {
        const { summary } = get();
        if (!summary?.datasets?.some((d) => d.path === path) || summary.files[0]?.dataset === path) return;
        await get().openFiles(activeFiles, undefined, path);
      },

      async openFiles(files, scan, dataset) {
        const token = ++requested;
        if (files.length === 0) {
          failOpen(token, 'No files were given.');
          return;
        }
        set({ phase: 'opening', activity: fileList(files), error: null, startedAt: clock() });
        let summary: AcquisitionSummary;
        const opened = openQueue.then(() =>
          token === requested ? api().open(files, scan, dataset) : Promise.reject(new Error('superseded')),
        );
        openQueue = opened.catch(() => {});
        try {
          summary = await opened;
        } catch (e) {
          failOpen(token, describeError(e, `Could not open ${fileList(files)}`));
          return;
        }
        if (token !== requested) return;
        active = token;
        activeFiles = files;
        activeStartedAt = get().startedAt;
        // The files do not say the scan shape: use the user's last choice for this frame count, if any.
        const remembered = summary.scanFromMetadata ? null : recentScan(preferences, summary.frameCount);
        if (remembered) summary = { ...summary, scan: remembered, scanFromMetadata: true };
        const centre = scanCentre(summary);
        settle(token, 'loading', {
          activity: summary.name,
          summary,
          progress: { framesDone: 0, frameCount: summary.frameCount },
          elapsedMs: null,
          data: null,
          virtualImages: {},
          picked: centre,
          frame: null,
          scanRegion: null,
          regionPattern: null,
          regions: null,
          masks: null,
          layers: NO_LAYERS,
          selectedLayer: -1,
          imageMasks: {},
        });
        try {
          const result = await api().load((progress) => {
            if (token === active) set({ progress });
          });
          if (token !== active) return;
          const pixelMask = await api().pixelMask();
          if (token !== active) return;
          const [rows, cols] = summary.detector;
          const geometry = defaultGeometry(result.sumDiffraction, rows, cols, pixelMask);
          const regions = presetRegions(geometry);
          set({
            data: {
              sumDiffraction: result.sumDiffraction,
              frameTotals: result.frameTotals,
              pixelMask,
              maxCount: result.maxCount,
              countAbove255: result.countAbove255,
              loadMs: result.elapsedMs,
              backend: result.backend,
              memory: result.memory ?? [],
              adapter: result.adapter ?? null,
              fallbackReason: result.fallbackReason ?? null,
              residentBytes: result.residentBytes ?? null,
              peakBytes: result.peakBytes ?? null,
              geometry,
            },
            regions,
            masks: {
              bf: composeMask(regions.bf, [], rows, cols),
              abf: composeMask(regions.abf, [], rows, cols),
              adf: composeMask(regions.adf, [], rows, cols),
            },
            progress: { framesDone: summary.frameCount, frameCount: summary.frameCount },
          });
          await Promise.all([refreshVirtualImage(), showFrame(scanIndex(summary, centre), token)]);
          settle(token, 'ready', {
            activity: null,
            elapsedMs: activeStartedAt === null ? null : clock() - activeStartedAt,
          });
        } catch (e) {
          settle(token, 'error', {
            activity: null,
            error: describeError(e, `Could not load ${summary.name}`),
          });
        }
      },

      setScan(scan) {
        const { summary, picked } = get();
        if (!summary || scan[0] * scan[1] !== summary.frameCount || scan[0] < 1 || scan[1] < 1) return;
        rememberScan(preferences, summary.frameCount, scan);
        // The same frames in scan order: only their arrangement changes; keep the picked frame picked.
        const index = picked ? scanIndex(summary, picked) : 0;
        set({
          summary: { ...summary, scan, scanFromMetadata: true },
          picked: { row: Math.floor(index / scan[1]), col: index % scan[1] },
        });
      },

      async cancelLoad() {
        if (get().phase === 'loading') await api().cancel();
      },

      async pick(position) {
        const { summary } = get();
        if (!summary) return;
        const row = Math.min(Math.max(0, Math.floor(position.row)), summary.scan[0] - 1);
        const col = Math.min(Math.max(0, Math.floor(position.col)), summary.scan[1] - 1);
        set({
          picked: { row, col },
          patternView: get().patternView === 'region' ? 'frame' : get().patternView,
        });
        try {
          await showFrame(scanIndex(summary, { row, col }), active);
        } catch (e) {
          set({ error: describeError(e, `Could not read the frame at row ${row}, column ${col}`) });
        }
      },

      async pickRegion(region) {
        const token = active;
        const request = ++frameRequest;
        set({ scanRegion: region, patternView: 'region' });
        try {
          const values = await api().regionSum(region);
          if (request === frameRequest && token === active) set({ regionPattern: { region, values } });
        } catch (e) {
          set({ error: describeError(e, 'Could not sum the frames of the scan region') });
        }
      },

      async setDetectorMode(mode) {
        set({ detectorMode: mode, selectedLayer: -1 });
        await refreshReporting();
      },

      async movePick(dRow, dCol) {
        const { picked, summary } = get();
        if (!picked || !summary) return;
        await get().pick({ row: picked.row + dRow, col: picked.col + dCol });
      },

      async virtualSettled() {
        while (pump) await pump.catch(() => {});
      },

      setPatternView(view) {
        set({ patternView: view });
      },

      clearError() {
        set({ error: null });
      },

      workerLost(message) {
        // Whatever was in flight belonged to the dead worker: make every pending answer stale.
        requested++;
        active = requested;
        activePhase = 'idle';
        activeStartedAt = null;
        activeFiles = [];
        set({ ...idle, phase: 'error', error: `${message} A new worker was started; open the files again.` });
      },
    };
  });
}
