/**
 * The memory plan of a GPU load (src/gpu/load-plan.ts) from a source's metadata, the device's limits and the
 * load's options, before anything is allocated (gpu-load.ts shows it to the caller, then allocates it).
 */
import type { GpuContext } from '../gpu/device.ts';
import { type LoadPlan, planGpuLoad } from '../gpu/load-plan.ts';
import { DEFAULT_TRANSPOSE_LOADS } from '../gpu/passes/detector-transpose.ts';
import type { ElemSize } from '../gpu/resident-layout.ts';
import { type AcquisitionSource, DTYPE_BYTES } from '../source/acquisition-source.ts';
import type { GpuLoadOptions } from './gpu-load-types.ts';

/** `chunkSizes`: source.storedSizes(), which the caller also sums. */
export function planLoad(
  ctx: GpuContext,
  source: AcquisitionSource,
  chunkSizes: Uint32Array,
  options: GpuLoadOptions,
): LoadPlan {
  const { summary } = source;
  return planGpuLoad({
    frames: source.frameCount,
    detector: summary.detector,
    elemSize: DTYPE_BYTES[summary.dtype] as ElemSize,
    chunkSizes,
    limits: {
      maxBufferSize: ctx.limits.maxBufferSize,
      maxStorageBufferBindingSize: ctx.limits.maxStorageBufferBindingSize,
      maxStorageBuffersPerShaderStage: ctx.limits.maxStorageBuffersPerShaderStage,
    },
    subgroups: ctx.features.has('subgroups'),
    budgetBytes: options.budgetBytes,
    batchFrames: options.batchFrames,
    slots: options.slots,
    pixelsPerBufferLimit: options.pixelsPerBufferLimit,
    segmentFrames: options.segmentFrames,
    highPlane: options.highPlane,
    poolShare: options.poolShare,
    decodeVariant: options.decodeVariant,
    parseAhead: options.parseAhead,
    copyAhead: options.copyAhead,
    // Byte planes (the default) only where the transpose reads 16 bytes at a time and the decode counts the
    // histogram.
    decodedPlanes:
      (options.decoded ?? 'planes') === 'planes' &&
      options.histogramIn !== 'transpose' &&
      (options.transposeLoads ?? DEFAULT_TRANSPOSE_LOADS) === 'vec4',
    rowTiles: options.rowTiles,
  });
}
