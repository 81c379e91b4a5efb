/**
 * The contract between the UI and the acquisition worker (comlink). The worker exposes an object of this
 * type; tests call the same functions directly. Typed arrays come back transferred.
 */
import type { TcbfRequest, TcbfResponse } from '../tcbf/acquisition-tcbf';
import type { TcbfStage } from '../tcbf/pipeline';

export type { TcbfRequest, TcbfResponse, TcbfStage };
export type SourceDtype = 'uint8' | 'uint16' | 'uint32';

export interface Calibration {
  /** Detector pixel size in metres (x, y), from the master file, when present. */
  detectorPixelSize?: [number, number];
  /** Camera length in metres. */
  detectorDistance?: number;
  /** Beam centre in detector pixels (x, y). */
  beamCenter?: [number, number];
  /** Exposure per frame in seconds. */
  countTime?: number;
  /** Electron wavelength in metres (from the beam's incident_wavelength and its units). */
  wavelength?: number;
  /** Accelerating voltage in volts (stored, or derived relativistically from the wavelength). */
  voltage?: number;
}

export interface AcquisitionSummary {
  /** A short name for display, e.g. the master file's stem. */
  name: string;
  /** 'arina-master' (master + shards), 'arina-shards' (shards without master) or 'single' (one HDF5 file). */
  kind: 'arina-master' | 'arina-shards' | 'single';
  /** The files used, in frame order, and the dataset path in each. */
  files: { name: string; size: number; dataset: string; frames: number }[];
  /** Scan shape [rows, cols]; `scanFromMetadata` says whether it was stored or guessed. */
  scan: [number, number];
  scanFromMetadata: boolean;
  /** Detector shape [rows, cols]. */
  detector: [number, number];
  dtype: SourceDtype;
  frameCount: number;
  /** Filter description, e.g. 'bitshuffle/LZ4', 'gzip', 'none'. */
  compression: string;
  /** Chunk index kind of the first data file, e.g. 'btree-v1', 'fixed-array'. */
  chunkIndex: string;
  /** Compressed bytes of all frame chunks. */
  compressedBytes: number;
  /** Number of flagged pixels in the pixel mask (0 when no mask exists). */
  flaggedPixels: number;
  calibration: Calibration;
  /**
   * The 3D/4D integer datasets of a single HDF5 file (largest first), when it holds more than one: the user
   * may open another of them (`open(files, scan, dataset)`).
   */
  datasets?: { path: string; shape: number[]; dtype: string }[];
}

export interface LoadProgress {
  framesDone: number;
  frameCount: number;
  /** What the load is doing: 'plan', 'decode' (read, upload, decode, transpose overlap), 'finish'. */
  stage?: string;
  /** Compressed bytes read so far and in all. */
  bytesDone?: number;
  bytesTotal?: number;
}

export interface LoadResult {
  /** Exact sum over all frames per detector pixel (row-major detector), as float64 (exact below 2^53). */
  sumDiffraction: Float64Array;
  /** Per-frame totals over unflagged pixels. */
  frameTotals: Float64Array;
  /** Largest unflagged count, and how many unflagged values exceed 255. */
  maxCount: number;
  countAbove255: number;
  /** Wall time of the load in milliseconds. */
  elapsedMs: number;
  /** Where the counts live: on the GPU (detector-major, exact) or in worker memory (CPU path). */
  backend: 'webgpu' | 'cpu';
  /** Why the CPU path was taken, when WebGPU exists but could not be used. */
  fallbackReason?: string;
  /** The memory plan in words, and its resident and peak bytes (GPU path). */
  memory?: string[];
  residentBytes?: number;
  peakBytes?: number;
  /** GPU path: resident buffers reused from the previous load instead of created. */
  residentReused?: number;
  /** The GPU adapter, e.g. 'nvidia ...' or 'google swiftshader'. */
  adapter?: string;
}

export interface AcquisitionApi {
  /**
   * Indexes dropped files (ARINA master + shards, shards alone, or one HDF5 file); `dataset` picks one of a
   * single file's candidate datasets (default: the largest).
   */
  open(files: File[], scan?: [number, number], dataset?: string): Promise<AcquisitionSummary>;
  /** Decodes every frame once (exact), keeps the counts, returns the audit and the summed pattern. */
  load(onProgress?: (p: LoadProgress) => void): Promise<LoadResult>;
  /** The pixel mask: 1 where the detector flagged the pixel. Length detector rows x cols. */
  pixelMask(): Promise<Uint8Array>;
  /** The diffraction frame at scan index `index` (row-major scan), in the source dtype. */
  frame(index: number): Promise<Uint8Array | Uint16Array | Uint32Array>;
  /**
   * The virtual image of a binary detector mask (1 = include; flagged pixels are always excluded), as exact
   * integer sums stored in float64, length scan rows x cols.
   */
  virtualImage(mask: Uint8Array): Promise<Float64Array>;
  /**
   * 'auto' (default): load through WebGPU when the worker has it and the chunks suit the GPU decoder;
   * 'cpu': always decode on the CPU (the page has no WebGPU, or the user asked for it).
   */
  setBackend(preference: 'auto' | 'cpu'): Promise<void>;
  /** Stops a running load within one batch and frees what it allocated; the load rejects with 'aborted'. */
  cancel(): Promise<void>;
  /**
   * Centre-of-mass (DPC) images inside a mask: per scan position the CoM of the unflagged counts minus the
   * reference centre (cx, cy), in detector pixels; NaN where the mask saw no counts. The underlying sums are
   * exact integers on both paths.
   */
  com(mask: Uint8Array, centre: [number, number]): Promise<{ comX: Float64Array; comY: Float64Array }>;
  /**
   * The diffraction pattern summed over the scan rectangle rows row0..row1, columns col0..col1 (inclusive):
   * exact integer sums per detector pixel (flagged pixels included, like a frame) as float64.
   */
  regionSum(region: { row0: number; row1: number; col0: number; col1: number }): Promise<Float64Array>;
  /**
   * The memory the next load may use (bytes; GPU and CPU paths), null for the defaults. A load that does not
   * fit is refused before allocation with a 'budget' error giving the numbers.
   */
  setMemoryBudget(bytes: number | null): Promise<void>;
  /**
   * Test hooks of issue 8: arm a fault ('gpu-out-of-memory': the next GPU load's allocation reports out of
   * memory; 'gpu-device-lost': the worker's GPU device is destroyed in the middle of the next GPU load;
   * 'read-failure': files opened from now on fail their reads after the metadata; 'none').
   */
  injectFault(fault: 'gpu-out-of-memory' | 'gpu-device-lost' | 'read-failure' | 'none'): Promise<void>;
  /** GPU buffers the worker holds now and their bytes (to check that a failure released everything). */
  gpuMemory(): Promise<{ buffers: number; bytes: number }>;
  /** Releases the loaded acquisition. */
  close(): Promise<void>;
  /**
   * Tilt-corrected bright field with aberration fitting on the loaded counts (docs/tcbf.md): BF selection,
   * shifts, the fit to fifth order, the tcBF and phase-flip images. `onProgress` reports each finished stage.
   * Optional so that test doubles of the API need not implement it; the worker does.
   */
  tcbf?(request: TcbfRequest, onProgress?: (stage: TcbfStage) => void): Promise<TcbfResponse>;
  /** Stops a running tcBF; it rejects with 'aborted'. */
  cancelTcbf?(): Promise<void>;
}
