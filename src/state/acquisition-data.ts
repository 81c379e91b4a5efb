import type { DefaultGeometry } from '../products/detector-geometry';
import type { AcquisitionSummary } from '../workers/acquisition-api';

/** The loaded acquisition's data as the store keeps it, and small helpers on scan positions and file lists. */
export interface ScanPosition {
  row: number;
  col: number;
}

/** Everything computed once per loaded acquisition. */
export interface LoadedData {
  sumDiffraction: Float64Array;
  frameTotals: Float64Array;
  /** 1 where the detector flagged the pixel. */
  pixelMask: Uint8Array;
  maxCount: number;
  countAbove255: number;
  /** Worker wall time of the decode, in ms. */
  loadMs: number;
  /** Where the counts live, the memory plan (GPU path) and why the CPU path was taken, if it was. */
  backend: 'webgpu' | 'cpu';
  memory: string[];
  adapter: string | null;
  fallbackReason: string | null;
  /** GPU bytes the counts occupy, and the load's peak (GPU path). */
  residentBytes: number | null;
  peakBytes: number | null;
  /** The default geometry, from which the BF/ABF/ADF presets come. */
  geometry: DefaultGeometry;
}

export function scanIndex(summary: Pick<AcquisitionSummary, 'scan'>, p: ScanPosition): number {
  return p.row * summary.scan[1] + p.col;
}

export function scanCentre(summary: Pick<AcquisitionSummary, 'scan'>): ScanPosition {
  return { row: Math.floor(summary.scan[0] / 2), col: Math.floor(summary.scan[1] / 2) };
}

export function fileList(files: { name: string }[]): string {
  const names = files.map((f) => f.name);
  return names.length <= 3
    ? names.join(', ')
    : `${names.slice(0, 3).join(', ')} and ${names.length - 3} more`;
}
