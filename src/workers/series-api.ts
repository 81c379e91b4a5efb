/** The series worker's API (src/workers/series-worker.ts): archives queried encoded on the GPU (issue #6). */

export interface SeriesSummary {
  acquisitions: {
    index: number;
    name: string;
    scan: [number, number];
    detector: [number, number];
    dtype: string;
  }[];
  /** Every acquisition of the archive (loaded or not), in archive order. */
  available: { index: number; name: string }[];
  /** The memory plan, in words. */
  plan: string[];
  /** Acquisitions asked for (all of the archive's unless a subset was chosen); more than loaded when they did not fit. */
  asked: number;
  gpuBytes: number;
  /** The exact index (asked for with `index`): built, or why not; its GPU bytes are in gpuBytes. */
  index: { built: boolean; line: string } | null;
  /** Threads that checked the files' SHA-256 (0: the series worker itself). */
  hashThreads: number;
  /** Milliseconds to check every file and to load the encoded data onto the GPU. */
  openMs: number;
  loadMs: number;
}

export interface SeriesQuery {
  /** Exact images: Uint32Array when every value fits 32 bits, else Float64Array. */
  images: (Float64Array | Uint32Array)[];
  order: number[];
  modes: string[];
  ms: number;
  /** Images filled into arrays handed back to the worker (the rest are fresh memory). */
  recycled: number;
}

export interface SeriesApi {
  /**
   * Opens an archive (a picked folder, or the files of a chosen folder), checks every file, and loads the chosen
   * acquisitions encoded onto the GPU within `budgetBytes`: a chosen subset whole or refused with the numbers; by
   * default as many of the archive's acquisitions as fit, in order (all when they fit).
   */
  open(
    folder: FileSystemDirectoryHandle | File[],
    options: {
      budgetBytes: number;
      acquisitions?: number[];
      /** Build the exact index in what the series leaves of the budget (queries then read only the mask's pixels). */
      index?: boolean;
      /** With files: each file's path, 'folder/sub/name' (else its webkitRelativePath, else its name). */
      paths?: string[];
    },
    onProgress?: (p: { stage: string; done: number; total: number }) => void,
  ): Promise<SeriesSummary>;
  /**
   * Loads other acquisitions of the open archive (no file is checked again): `acquisitions` whole, in that order,
   * or `refused` with the numbers (or why) while the loaded ones stay; without it, as many as fit.
   */
  reload(
    options: { budgetBytes: number; acquisitions?: number[]; index?: boolean },
    onProgress?: (p: { stage: string; done: number; total: number }) => void,
  ): Promise<SeriesSummary | { refused: string }>;
  /**
   * Exact virtual images of a binary detector mask for every loaded acquisition (or `order`). `spare`: image
   * arrays of earlier queries the caller no longer shows nor reads, transferred (detached on its side); with the
   * exact index the worker fills them again when it holds one of the right length for every acquisition.
   */
  images(mask: Uint8Array, order?: number[], spare?: Uint32Array[]): Promise<SeriesQuery>;
  /** Recomputes the last mask from scratch. */
  rebase(): Promise<SeriesQuery>;
  /** The frame at (row, col) of every loaded acquisition (or `order`). */
  frames(row: number, col: number, order?: number[]): Promise<(Uint8Array | Uint16Array | Uint32Array)[]>;
  /** Summed diffraction patterns (exact, stored in the archive). */
  sumPatterns(order?: number[]): Promise<Float64Array[]>;
  release(): Promise<void>;
}
