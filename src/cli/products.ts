import { createHash } from 'node:crypto';
import { defaultDetectors } from '../compute/gpu-products';
import { StemflowError } from '../errors';
import { nodeGpu } from '../gpu/node-gpu';
import { maskPixelList } from '../products/frame-stats';
import { createAcquisitionService } from '../workers/acquisition-service';
import { closeInputs, openInputs } from './inputs';

export interface ProductsReport {
  backend: 'webgpu' | 'cpu';
  frames: number;
  scan: [number, number];
  detector: [number, number];
  dtype: string;
  audit: { maxCount: number; countAbove255: number; flaggedPixels: number };
  /** SHA-256 of the per-frame totals over unflagged pixels, as little-endian uint64. */
  frameTotals: string;
  /** SHA-256 of the summed diffraction pattern (unflagged; the mean is sum / frames), little-endian uint64. */
  sumDiffraction: string;
  /** Default detectors: pixels covered and SHA-256 of the exact virtual image as little-endian uint64. */
  images: Record<'bf' | 'abf' | 'adf', { pixels: number; sum: number; sha256: string }>;
}

/** Audit, default virtual images and the summed pattern, computed on WebGPU or by the CPU twins. */
export async function computeProducts(
  paths: string[],
  backend: 'webgpu' | 'cpu',
  scan?: [number, number],
): Promise<ProductsReport> {
  if (paths.length === 0) throw new StemflowError('invalid', 'Give the files to compute products of.');
  const service = createAcquisitionService(backend === 'webgpu' ? { gpu: nodeGpu(), cpuBudgetBytes: 0 } : {});
  const inputs = await openInputs(paths);
  try {
    const summary = await service.openInputs(inputs, scan);
    const result = await service.load();
    if (result.backend !== backend) {
      throw new StemflowError(
        'unsupported',
        `The ${backend} backend could not take these files: ${result.fallbackReason ?? 'no reason given'}`,
      );
    }
    const flagged = await service.pixelMask();
    const detectors = defaultDetectors(result.sumDiffraction, summary.detector, flagged);
    const images = {} as ProductsReport['images'];
    for (const name of ['bf', 'abf', 'adf'] as const) {
      const mask = detectors.masks[name];
      const image = await service.virtualImage(mask);
      images[name] = {
        pixels: maskPixelList(mask, flagged).length,
        sum: image.reduce((a, b) => a + b, 0),
        sha256: hashU64(image),
      };
    }
    return {
      backend,
      frames: summary.frameCount,
      scan: summary.scan,
      detector: summary.detector,
      dtype: summary.dtype,
      audit: {
        maxCount: result.maxCount,
        countAbove255: result.countAbove255,
        flaggedPixels: summary.flaggedPixels,
      },
      frameTotals: hashU64(result.frameTotals),
      sumDiffraction: hashU64(result.sumDiffraction),
      images,
    };
  } finally {
    await service.close();
    await closeInputs(inputs);
  }
}

/** SHA-256 of exact integers (held in float64, < 2^53) written as little-endian uint64. */
function hashU64(values: Float64Array): string {
  const out = new BigUint64Array(values.length);
  for (let i = 0; i < values.length; i++) {
    if (!Number.isSafeInteger(values[i]) || values[i] < 0)
      throw new StemflowError('invalid', `Value ${values[i]} is not an exact count`);
    out[i] = BigInt(values[i]);
  }
  return createHash('sha256').update(new Uint8Array(out.buffer)).digest('hex');
}
