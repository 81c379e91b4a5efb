import { useEffect } from 'react';
import type { SeriesQuery, SeriesSummary } from '../../workers/series-api';
import type { MaskSource } from './SeriesPanel';
import type { SeriesDetector } from './series-mask';

/** `window.__stemflowSeries`: the series panel's state and exact values, for the e2e tests. */
export interface SeriesHook {
  state(): {
    phase: string;
    error: string | null;
    acquisitions: number;
    /** Acquisitions asked for (more than loaded when the budget holds fewer). */
    asked: number;
    gpuBytes: number;
    /** Threads that checked the archive's SHA-256 (0: the series worker itself). */
    hashThreads: number;
    lastMs: number | null;
    modes: string[];
    /** Images of the last query filled into arrays handed back to the worker. */
    recycled: number;
    busy: boolean;
  };
  images(): number[][];
  setPreset(preset: SeriesDetector['preset']): void;
  /** Where the mask comes from: the series' own controls, or the detector panel's current detector. */
  setSource(source: MaskSource): void;
  /** The mask of the last query (1 = counted). */
  queriedMask(): number[] | null;
  /** The archive indices of the last query's images, in order. */
  order(): number[];
  /** Chooses the acquisitions shown, in order (as the chooser's checkboxes and arrows do). */
  choose(chosen: number[]): void;
}

declare global {
  interface Window {
    __stemflowSeries?: SeriesHook;
  }
}

/** Publishes the panel's state as `window.__stemflowSeries` after every render. */
export function useSeriesHook(o: {
  phase: string;
  error: string | null;
  summary: SeriesSummary | null;
  query: SeriesQuery | null;
  busy: () => boolean;
  queried: Uint8Array | null;
  setSource(source: MaskSource): void;
  setChosen(chosen: number[]): void;
  setPreset(preset: SeriesDetector['preset']): void;
}) {
  useEffect(() => {
    const { summary, query, queried } = o;
    window.__stemflowSeries = {
      state: () => ({
        phase: o.phase,
        error: o.error,
        acquisitions: summary?.acquisitions.length ?? 0,
        asked: summary?.asked ?? 0,
        gpuBytes: summary?.gpuBytes ?? 0,
        hashThreads: summary?.hashThreads ?? 0,
        lastMs: query?.ms ?? null,
        modes: query?.modes ?? [],
        recycled: query?.recycled ?? 0,
        busy: o.busy(),
      }),
      images: () => (query ? query.images.map((im) => Array.from(im)) : []),
      setSource: o.setSource,
      queriedMask: () => (queried ? Array.from(queried) : null),
      order: () => query?.order ?? [],
      choose: o.setChosen,
      setPreset: o.setPreset,
    };
  });
}
