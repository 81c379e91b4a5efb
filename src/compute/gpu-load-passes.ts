/**
 * The GPU load's pipelines (gpu-load.ts), compiled once per device: the load takes its transpose from here, and
 * the app's worker warms both passes before the first drop (workers/acquisition-service.ts).
 */

import { type Bslz4DecodePass, createBslz4DecodePass } from '../gpu/passes/bslz4-decode.ts';
import {
  createDetectorTransposePass,
  DEFAULT_TRANSPOSE_LOADS,
  type DetectorTransposePass,
  type TransposeLoads,
} from '../gpu/passes/detector-transpose.ts';
import type { ElemSize } from '../gpu/resident-layout.ts';

const passCache = new WeakMap<
  GPUDevice,
  Map<string, { decode: Bslz4DecodePass; transpose: DetectorTransposePass }>
>();

/**
 * The load's pipelines, compiled once per device and element size. Each load makes its own decode pass (the
 * pipeline comes from the pass's cache) so that it owns and frees that pass's scratch; the one here only warms it.
 */
export function loadPasses(
  device: GPUDevice,
  elemSize: ElemSize,
  loads: TransposeLoads = DEFAULT_TRANSPOSE_LOADS,
  histogram = false,
  planes = false,
) {
  let byKey = passCache.get(device);
  if (!byKey) {
    byKey = new Map();
    passCache.set(device, byKey);
  }
  const key = `${elemSize} ${loads} ${histogram} ${planes}`;
  let passes = byKey.get(key);
  if (!passes) {
    passes = {
      decode: createBslz4DecodePass(device, { elemSize, auditBins: !histogram, planes }),
      transpose: createDetectorTransposePass(device, { elemSize, loads, histogram, planes }),
    };
    byKey.set(key, passes);
  }
  return passes;
}
