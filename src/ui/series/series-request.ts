import { createStore } from 'zustand/vanilla';

/**
 * Archives to open in the series panel from elsewhere in the page (a dropped archive folder, or one picked
 * with "Open folder…"): the panel opens itself and loads the newest request.
 */
export interface SeriesOpenRequest {
  files: File[];
  /** Each file's path, 'folder/sub/name' (the archive's paths are these minus the folder). */
  paths: string[];
  id: number;
}

export const seriesRequests = createStore<{ request: SeriesOpenRequest | null }>(() => ({ request: null }));

export function requestSeriesOpen(files: File[], paths: string[]): void {
  seriesRequests.setState((s) => ({ request: { files, paths, id: (s.request?.id ?? 0) + 1 } }));
}
