/**
 * tcBF on a loaded acquisition, for the acquisition worker: on the GPU from the load's resident detector-major
 * buffers and exact DP sums (no copy, no decode), or on the CPU from the decoded frames (a detector-major copy of
 * them is made: the CPU path only holds acquisitions within its memory budget).
 */
import { StemflowError } from '../errors.ts';
import { type ElemSize, planResidentLayout, type ResidentLayout } from '../gpu/resident-layout.ts';
import { residentFromScan } from '../kernels/detector-transpose.ts';
import type { TcbfBackend } from './backend.ts';
import { type BrightFieldPixels, selectBrightField } from './bright-field.ts';
import { createCpuBackend } from './cpu-backend.ts';
import { createGpuBackend } from './gpu/gpu-backend.ts';
import { tcbfGrid } from './grid.ts';
import { wavelength } from './optics.ts';
import { runTcbf, type TcbfResult, type TcbfStage } from './pipeline.ts';

/** What the user sets in the panel (calibration from metadata when present, editable). */
export interface TcbfRequest {
  /** Accelerating voltage, V. */
  voltage: number;
  /** Convergence semi-angle, rad. */
  alpha0: number;
  /** Scan step, Å. */
  step: number;
  /** Detector sampling, rad per px (default alpha0 / measured disk radius). */
  dTheta?: number;
  /** Bright-field pixels kept inside the disk edge, px (default 0). */
  margin?: number;
  /** Fraction of the mean pattern's maximum that belongs to the disk (default 0.5). */
  threshold?: number;
  /** Edge taper of the BF images, scan px (default 8). */
  taper?: number;
  factor?: number;
  maxOrder?: number;
  lowpass?: number;
  /** Given rotation (rad) and transpose; searched when absent. */
  rotation?: number;
  transpose?: boolean;
}

export interface TcbfResponse extends TcbfResult {
  /** The selection: detector pixels, their angles (rad, detector frame), disk centre and radius (px). */
  bf: BrightFieldPixels;
  backend: 'webgpu' | 'cpu';
}

interface Shape {
  scan: [number, number];
  detector: [number, number];
}

async function run(
  backend: TcbfBackend,
  bf: BrightFieldPixels,
  shape: Shape,
  request: TcbfRequest,
  signal: AbortSignal | undefined,
  onProgress: ((stage: TcbfStage) => void) | undefined,
): Promise<TcbfResult> {
  try {
    return await runTcbf(
      backend,
      bf,
      { rows: shape.scan[0], cols: shape.scan[1] },
      {
        step: request.step,
        lambda: wavelength(request.voltage),
        alpha0: request.alpha0,
        factor: request.factor,
        maxOrder: request.maxOrder,
        lowpass: request.lowpass,
        rotation: request.rotation,
        transpose: request.transpose,
        signal,
        onProgress: onProgress && ((stage) => onProgress(stage)),
      },
    );
  } finally {
    backend.dispose();
  }
}

function select(sums: ArrayLike<number | bigint>, shape: Shape, flagged: Uint8Array | null, r: TcbfRequest) {
  if (!(r.voltage > 0))
    throw new StemflowError('invalid', `tcBF needs the accelerating voltage, not ${r.voltage}.`);
  return selectBrightField(sums, shape.detector[0], shape.detector[1], shape.scan[0] * shape.scan[1], {
    alpha0: r.alpha0,
    dTheta: r.dTheta,
    margin: r.margin,
    threshold: r.threshold,
    flagged,
  });
}

/** On the GPU: `resident` and `layout` of the load, `dpSums` its exact summed pattern. */
export async function tcbfOnGpu(
  device: GPUDevice,
  layout: ResidentLayout,
  resident: readonly GPUBuffer[],
  dpSums: BigUint64Array,
  shape: Shape,
  flagged: Uint8Array | null,
  request: TcbfRequest,
  signal?: AbortSignal,
  onProgress?: (stage: TcbfStage) => void,
): Promise<TcbfResponse> {
  const bf = select(dpSums, shape, flagged, request);
  const backend = createGpuBackend({
    device,
    layout,
    resident,
    pixels: bf.pixels,
    invMean: bf.invMean,
    grid: tcbfGrid(shape.scan[0], shape.scan[1], request.taper ?? 8),
    factor: request.factor,
  });
  return { ...(await run(backend, bf, shape, request, signal, onProgress)), bf, backend: 'webgpu' };
}

/** On the CPU: scan-major decoded frames. */
export async function tcbfOnFrames(
  frames: Uint8Array | Uint16Array | Uint32Array,
  shape: Shape,
  flagged: Uint8Array | null,
  request: TcbfRequest,
  signal?: AbortSignal,
  onProgress?: (stage: TcbfStage) => void,
): Promise<TcbfResponse> {
  const count = shape.scan[0] * shape.scan[1];
  const pixels = shape.detector[0] * shape.detector[1];
  const sums = new Float64Array(pixels);
  for (let f = 0; f < count; f++) for (let p = 0; p < pixels; p++) sums[p] += frames[f * pixels + p];
  const bf = select(sums, shape, flagged, request);
  const layout = planResidentLayout({
    frames: count,
    pixels,
    elemSize: frames.BYTES_PER_ELEMENT as ElemSize,
    maxBindingBytes: 2 ** 31,
  });
  const backend = createCpuBackend({
    layout,
    resident: residentFromScan(layout, frames),
    pixels: bf.pixels,
    invMean: bf.invMean,
    grid: tcbfGrid(shape.scan[0], shape.scan[1], request.taper ?? 8),
  });
  return { ...(await run(backend, bf, shape, request, signal, onProgress)), bf, backend: 'cpu' };
}
