/**
 * GPU pass: exact 64-bit masked sums per frame. Shader: src/shaders/virtual-detector.wgsl. CPU twin:
 * src/kernels/virtual-detector.ts. Input arrives in windows (one uploaded slot each); a window may start or
 * end inside a frame, and each window adds its part into `sums`, so a frame split across windows, slots or
 * dispatches sums exactly.
 */
import { StemflowError } from '../../errors.ts';
import { checkBindable, type DispatchChunk, encodeChunks } from '../chunked-dispatch.ts';
import { shaderSource } from '../shader-source.ts';
import { structLayout } from '../uniform-layout.ts';

export type ElemBytes = 1 | 2 | 4;

export interface VirtualDetectorWindow {
  /** Values packed little-endian, elemBytes each (4 = one u32 per value, as bitunshuffle writes). */
  data: GPUBuffer;
  /** Index (in values) in `data` of the window's first value. Default 0. */
  elemOffset?: number;
  elemCount: number;
  /** Index in `sums` of the frame that holds the window's first value. */
  firstFrame: number;
  /** Pixel of that frame where the window starts. Default 0. */
  firstPixel?: number;
}

export interface VirtualDetectorJob {
  /** One u32 per detector pixel; nonzero = included. */
  mask: GPUBuffer;
  pixels: number;
  /** Two u32 per frame (lo, hi): read back as BigUint64Array. */
  sums: GPUBuffer;
  windows: readonly VirtualDetectorWindow[];
  /** Zero `sums` first (default true); false adds to earlier results. */
  clear?: boolean;
  /** Frames (workgroups) per dispatch, default 4096. */
  maxFramesPerDispatch?: number;
}

export interface VirtualDetectorPass {
  readonly elemBytes: ElemBytes;
  /** Records the pass; destroy the returned parameter buffers after submitting. */
  encode(encoder: GPUCommandEncoder, job: VirtualDetectorJob): GPUBuffer[];
  run(job: VirtualDetectorJob): void;
}

const layout = structLayout(shaderSource['virtual-detector'], 'Params');

export function createVirtualDetectorPass(
  device: GPUDevice,
  { elemBytes, workgroupSize = 64 }: { elemBytes: ElemBytes; workgroupSize?: number },
): VirtualDetectorPass {
  if (
    workgroupSize & (workgroupSize - 1) ||
    workgroupSize > device.limits.maxComputeInvocationsPerWorkgroup
  ) {
    throw new StemflowError(
      'invalid',
      `Workgroup size ${workgroupSize} is not a power of two within the GPU limit.`,
    );
  }
  const pipeline = device.createComputePipeline({
    label: `virtual-detector x${elemBytes}`,
    layout: 'auto',
    compute: {
      module: device.createShaderModule({
        label: 'virtual-detector.wgsl',
        code: shaderSource['virtual-detector'],
      }),
      entryPoint: 'main',
      constants: { ELEM_BYTES: elemBytes, WORKGROUP_SIZE: workgroupSize },
    },
  });
  const encode = (encoder: GPUCommandEncoder, job: VirtualDetectorJob): GPUBuffer[] => {
    const { pixels, sums, mask } = job;
    if (!Number.isInteger(pixels) || pixels <= 0 || mask.size < pixels * 4) {
      throw new StemflowError('invalid', `The mask buffer does not hold ${pixels} pixels.`);
    }
    checkBindable(device, sums, 'sums');
    if (job.clear ?? true) encoder.clearBuffer(sums);
    const perDispatch = Math.min(
      job.maxFramesPerDispatch ?? 4096,
      device.limits.maxComputeWorkgroupsPerDimension,
    );
    return job.windows.map((w) => {
      const { elemOffset = 0, elemCount, firstFrame, firstPixel = 0 } = w;
      const frames = Math.ceil((firstPixel + elemCount) / pixels);
      if (firstPixel >= pixels || (firstFrame + frames) * 8 > sums.size) {
        throw new StemflowError(
          'invalid',
          `A window reaches past the ${sums.size / 8} frames of the sums buffer.`,
        );
      }
      if (Math.ceil(((elemOffset + elemCount) * elemBytes) / 4) * 4 > w.data.size) {
        throw new StemflowError('invalid', `A window of ${elemCount} values reaches past its data buffer.`);
      }
      checkBindable(device, w.data, 'detector data');
      const chunks: DispatchChunk[] = [];
      for (let f = 0; f < frames; f += perDispatch) {
        chunks.push({
          params: {
            pixels,
            first_pixel: firstPixel,
            elem_count: elemCount,
            elem_offset: elemOffset,
            frame_offset: f,
            out_frame: firstFrame,
          },
          workgroups: Math.min(perDispatch, frames - f),
        });
      }
      return encodeChunks(
        encoder,
        {
          device,
          pipeline,
          layout,
          label: 'virtual-detector',
          bindings: [
            { binding: 1, resource: { buffer: w.data } },
            { binding: 2, resource: { buffer: mask } },
            { binding: 3, resource: { buffer: sums } },
          ],
        },
        chunks,
      );
    });
  };
  return {
    elemBytes,
    encode,
    run(job) {
      const encoder = device.createCommandEncoder({ label: 'virtual-detector' });
      const params = encode(encoder, job);
      device.queue.submit([encoder.finish()]);
      for (const p of params) p.destroy();
    },
  };
}
