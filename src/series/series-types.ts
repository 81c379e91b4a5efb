/**
 * The types of a series (src/series/series.ts loads one): its images, its index state and its calls.
 */
import type { ArchiveAcquisition } from '../archive/reader';
import type { Values } from '../archive/tans-stats';
import type { GpuTimer } from '../gpu/gpu-timer';
import type { IndexLaunch } from './packed-index-gpu';
import type { SeriesPlan } from './series-plan';

/**
 * An exact virtual image, one value per scan position (row-major): a Uint32Array when every value fits 32 bits
 * (the index's readback, no conversion), else a Float64Array (every value below 2^53 is exact).
 */
export type ExactImage = Float64Array | Uint32Array;

export interface SeriesImages {
  /** Acquisition indices (into the archive), in the order asked for. */
  order: number[];
  /** Exact sums per scan position (row-major), one image per acquisition in `order`. */
  images: ExactImage[];
  /** How each acquisition was computed. */
  modes: ('full' | 'delta')[];
  /** Pixels decoded per frame (summed over lanes), per acquisition: the work of the query. */
  decodedPixels: number[];
  ms: number;
  /**
   * Where the host's time went (ms): lists or mask bits and submissions; waiting for the GPU (until the readback
   * is mapped; with the index, summed over its parts); copying the images out (or the lanes' exact combine).
   */
  stages: { prepareMs: number; gpuAndReadbackMs: number; combineMs: number };
}

/** The exact index of a series: built (queries read it), or why not. */
export interface SeriesIndexState {
  built: boolean;
  lines: string[];
  /** GPU bytes the built index keeps: packed counts, block tables and group offsets, query scratch. */
  bytes?: number;
  dataBytes?: number;
  metadataBytes?: number;
  buildMs?: number;
}

export interface Series {
  readonly plan: SeriesPlan;
  /** The exact index, when one was asked for. */
  readonly index: SeriesIndexState | null;
  readonly acquisitions: readonly ArchiveAcquisition[];
  /** Virtual images of a binary mask (1 = include) of detector pixels. */
  virtualImages(
    mask: Uint8Array,
    options?: {
      order?: number[];
      mode?: 'auto' | 'full' | 'delta';
      /** GPU timestamps: marks 'query' (before the passes), 'copy' (before the readback copies) and 'end'. */
      timer?: GpuTimer;
      /** With the index: the query's launch shape (a tuning knob; same images). */
      indexLaunch?: IndexLaunch;
      /**
       * With the index: the caller's arrays to fill, one per acquisition of the order (its frames long, all
       * distinct), returned as its image when every value fits 32 bits. An interactive caller passes back the
       * images of a query it no longer shows: no fresh memory per query (its page faults and garbage collection
       * are most of a query's host time at 20 acquisitions).
       */
      into?: Uint32Array[];
    },
  ): Promise<SeriesImages>;
  /** Recomputes the last mask's images from scratch (must equal what the deltas gave). */
  rebase(): Promise<SeriesImages>;
  /** The diffraction frame at (row, col) of each acquisition in `order` (CPU decode of one frame each). */
  frames(row: number, col: number, order?: number[]): Promise<Values[]>;
  /** The summed diffraction pattern of each acquisition (exact, from the archive's stored sums). */
  sumPatterns(order?: number[]): Float64Array[];
  /**
   * Later calls fail at once; the call in flight (if any) finishes, then every buffer is destroyed. The
   * promise settles once they are.
   */
  release(): Promise<void>;
}
