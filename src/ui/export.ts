import { encodeNpy } from '../io/npy';
import { encodeTiff } from '../io/tiff';
import type { DefaultGeometry } from '../products/detector-geometry';
import { countCovered, type DetectorRegion } from '../products/detector-geometry';
import type { MaskLayer } from '../products/detector-layers';
import { type DetectorMode, mradPerPixel, presetRegion } from '../state/mask-edit';
import type { AcquisitionSummary } from '../workers/acquisition-api';
import type { DisplaySettings } from './image-mapping';

/**
 * Exports of the virtual image (DOM-free except `download`): NPY (float64, exact below 2^53), TIFF float32
 * or uint32, and a JSON record of the detector and calibration that reproduces the image.
 */
export const EXPORT_VERSION = 1;

export function exportName(
  summary: Pick<AcquisitionSummary, 'name'>,
  mode: DetectorMode,
  ext: string,
): string {
  const stem = summary.name.replace(/[^\w.-]+/g, '_') || 'stemflow';
  return `${stem}_${mode}.${ext}`;
}

/** The image as .npy, float64 with shape (scan rows, scan cols): every integer sum below 2^53 is exact. */
export function virtualImageNpy(image: Float64Array, scan: [number, number]): Uint8Array {
  return encodeNpy(image, scan);
}

/**
 * The image as a uint32 TIFF, or a reason why not (a value that is negative, fractional or >= 2^32). Uint32
 * holds every sum of 16-bit counts over up to 65537 pixels.
 */
export function virtualImageTiffU32(
  image: Float64Array,
  scan: [number, number],
  description: string,
): { bytes: Uint8Array } | { error: string } {
  const out = new Uint32Array(image.length);
  for (let i = 0; i < image.length; i++) {
    const v = image[i];
    if (!Number.isInteger(v) || v < 0 || v > 0xffffffff)
      return { error: `Value ${v} at scan index ${i} does not fit uint32: export float32 or NPY instead.` };
    out[i] = v;
  }
  return { bytes: encodeTiff(out, scan[0], scan[1], description) };
}

/** The image as a float32 TIFF; `exact` is false when a value needs more than float32's 24-bit mantissa. */
export function virtualImageTiffF32(
  image: Float64Array,
  scan: [number, number],
  description: string,
): { bytes: Uint8Array; exact: boolean } {
  const out = Float32Array.from(image);
  let exact = true;
  for (let i = 0; i < image.length; i++) if (out[i] !== image[i]) exact = false;
  return { bytes: encodeTiff(out, scan[0], scan[1], description), exact };
}

const COVERAGE: Record<DetectorRegion['kind'], string> = {
  disk: 'a pixel is covered when the distance from its centre to (cx, cy) is <= r',
  annulus: 'a pixel is covered when the distance from its centre to (cx, cy) is > inner and <= outer',
  rect: 'a pixel is covered when its centre satisfies 2 |x - cx| <= w and 2 |y - cy| <= h',
};

export interface DetectorRecordInput {
  summary: AcquisitionSummary;
  mode: DetectorMode;
  region: DetectorRegion;
  /** Layers after the primary region (shapes added or subtracted, brush strokes), in order. */
  layers?: MaskLayer[];
  mask: Uint8Array;
  pixelMask: Uint8Array;
  geometry: DefaultGeometry;
  image: Float64Array | null;
  display: DisplaySettings;
  backend: string;
}

/** A JSON-ready record of the detector, the acquisition and its calibration that reproduces the image. */
export function detectorRecord(input: DetectorRecordInput, createdAt = new Date()) {
  const { summary, mode, region, mask, pixelMask, geometry, image } = input;
  let coveredUnflagged = 0;
  for (let i = 0; i < mask.length; i++) if (mask[i] && !pixelMask[i]) coveredUnflagged++;
  const mrad = mradPerPixel(summary.calibration);
  const radii: Record<string, number> =
    region.kind === 'disk'
      ? { r: region.r }
      : region.kind === 'annulus'
        ? { inner: region.inner, outer: region.outer }
        : {};
  let stats: { sum: number; min: number; max: number } | null = null;
  if (image && image.length > 0) {
    let sum = 0;
    let min = image[0];
    let max = image[0];
    for (const v of image) {
      sum += v;
      if (v < min) min = v;
      if (v > max) max = v;
    }
    stats = { sum, min, max };
  }
  return {
    format: 'stemflow-virtual-detector',
    version: EXPORT_VERSION,
    createdAt: createdAt.toISOString(),
    acquisition: {
      name: summary.name,
      kind: summary.kind,
      files: summary.files,
      scan: summary.scan,
      scanFromMetadata: summary.scanFromMetadata,
      detector: summary.detector,
      dtype: summary.dtype,
      frameCount: summary.frameCount,
    },
    calibration: summary.calibration,
    detector: {
      mode,
      region,
      units: 'detector pixels; pixel (row, col) has its centre at x = col, y = row',
      coverage: COVERAGE[region.kind],
      layers: input.layers ?? [],
      layerRule:
        'layers apply in order after the region: "add" covers, "subtract" uncovers; a shape layer covers the ' +
        'pixels of its region, a brush stroke those whose centre lies within radius of one of its points',
      grid: 'centre and radii are multiples of 1/256 pixel',
      flaggedPolicy: 'pixels flagged in the detector pixel mask are left out of every sum',
      coveredPixels: countCovered(mask),
      coveredUnflaggedPixels: coveredUnflagged,
      flaggedPixels: summary.flaggedPixels,
      mradPerPixel: mrad,
      radiiMrad: mrad ? Object.fromEntries(Object.entries(radii).map(([k, v]) => [k, v * mrad])) : null,
      preset: presetRegion(mode, geometry),
      defaultGeometry: { centre: geometry.centre, bfRadius: geometry.bfRadius },
    },
    image: stats
      ? {
          shape: summary.scan,
          values: 'exact integer sums of the counts under the detector, per scan position (row-major)',
          ...stats,
        }
      : null,
    display: input.display,
    backend: input.backend,
  };
}

/** Saves bytes as a file through a temporary link. */
export function download(data: Blob | Uint8Array | string, name: string, type = 'application/octet-stream') {
  const blob =
    data instanceof Blob
      ? data
      : new Blob([data as BlobPart], { type: typeof data === 'string' ? 'application/json' : type });
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.style.display = 'none';
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
