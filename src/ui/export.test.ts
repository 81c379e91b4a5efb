import { describe, expect, it } from 'vitest';
import { decodeNpy } from '../io/npy';
import { annulus, defaultGeometry, disk, rect, regionMask } from '../products/detector-geometry';
import { composeMask, extendStroke, shapeLayer, strokeLayer } from '../products/detector-layers';
import type { AcquisitionSummary } from '../workers/acquisition-api';
import {
  detectorRecord,
  exportName,
  virtualImageNpy,
  virtualImageTiffF32,
  virtualImageTiffU32,
} from './export';

const summary: AcquisitionSummary = {
  name: 'scan 1',
  kind: 'arina-master',
  files: [{ name: 'scan 1_master.h5', size: 10, dataset: '/entry/data/data', frames: 6 }],
  scan: [2, 3],
  scanFromMetadata: true,
  detector: [8, 8],
  dtype: 'uint16',
  frameCount: 6,
  compression: 'bitshuffle/LZ4',
  chunkIndex: 'btree-v1',
  compressedBytes: 100,
  flaggedPixels: 1,
  calibration: { detectorPixelSize: [75e-6, 75e-6], detectorDistance: 0.15 },
};

describe('exports', () => {
  const image = Float64Array.from([0, 1, 2 ** 24 + 1, 5, 2 ** 32 - 1, 7]);

  it('writes NPY of the exact values', () => {
    const { data, shape } = decodeNpy(virtualImageNpy(image, [2, 3]));
    expect(shape).toEqual([2, 3]);
    expect(Array.from(data)).toEqual(Array.from(image));
    expect(exportName(summary, 'adf', 'npy')).toBe('scan_1_adf.npy');
  });

  it('writes uint32 TIFF when every value fits, and says when float32 rounds', () => {
    const u = virtualImageTiffU32(image, [2, 3], 'x');
    expect('bytes' in u).toBe(true);
    const bad = virtualImageTiffU32(Float64Array.from([1, 2 ** 32, 0, 0, 0, 0]), [2, 3], 'x');
    expect('error' in bad && bad.error).toMatch(/does not fit uint32/);
    expect(virtualImageTiffF32(image, [2, 3], 'x').exact).toBe(false);
    expect(virtualImageTiffF32(Float64Array.from([0, 1, 2, 3, 4, 2 ** 24]), [2, 3], 'x').exact).toBe(true);
  });

  it('records the detector, calibration and image statistics', () => {
    const sum = new Float64Array(64).fill(1);
    sum[3 * 8 + 4] = 100;
    const geometry = defaultGeometry(sum, 8, 8);
    const region = annulus(4, 3, 1, 2.5);
    const mask = regionMask(region, 8, 8);
    const pixelMask = new Uint8Array(64);
    pixelMask[3 * 8 + 6] = 1;
    const r = detectorRecord(
      {
        summary,
        mode: 'abf',
        region,
        mask,
        pixelMask,
        geometry,
        image,
        display: { colormap: 'gray', scale: 'linear', contrast: 'minmax' },
        backend: 'cpu',
      },
      new Date(0),
    );
    const parsed = JSON.parse(JSON.stringify(r));
    expect(parsed.detector.region).toEqual({ kind: 'annulus', cx: 4, cy: 3, inner: 1, outer: 2.5 });
    expect(parsed.detector.coveredPixels).toBe(mask.reduce((a, b) => a + b, 0));
    expect(parsed.detector.coveredUnflaggedPixels).toBe(parsed.detector.coveredPixels - 1);
    expect(parsed.detector.mradPerPixel).toBeCloseTo(0.5, 12);
    expect(parsed.detector.radiiMrad.outer).toBeCloseTo(1.25, 12);
    expect(parsed.image).toMatchObject({ shape: [2, 3], min: 0, max: 2 ** 32 - 1 });
    expect(parsed.createdAt).toBe('1970-01-01T00:00:00.000Z');
    expect(parsed.calibration.detectorDistance).toBe(0.15);
  });

  it('records the layers so that composeMask reproduces the mask from the JSON alone', () => {
    const sum = new Float64Array(64).fill(1);
    const geometry = defaultGeometry(sum, 8, 8);
    const region = disk(4, 4, 3);
    const layers = [
      shapeLayer(rect(4, 4, 2, 2), 'subtract'),
      extendStroke(strokeLayer('add', 0.75, [[0, 7]]), 3, 7),
    ];
    const mask = composeMask(region, layers, 8, 8);
    const record = detectorRecord({
      summary,
      mode: 'bf',
      region,
      layers,
      mask,
      pixelMask: new Uint8Array(64),
      geometry,
      image,
      display: { colormap: 'gray', scale: 'linear', contrast: 'minmax' },
      backend: 'cpu',
    });
    const parsed = JSON.parse(JSON.stringify(record));
    expect(composeMask(parsed.detector.region, parsed.detector.layers, 8, 8)).toEqual(mask);
    expect(parsed.detector.coveredPixels).toBe(29 - 9 + 4);
  });
});
