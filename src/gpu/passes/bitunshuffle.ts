/**
 * GPU pass: bit-shuffled bytes (the LZ4-decoded blocks of each frame, back to back) to one u32 per element.
 * Shader: src/shaders/bitunshuffle.wgsl. CPU twin: src/kernels/bitunshuffle.ts.
 */
import { StemflowError } from '../../errors.ts';
import { type BitshuffleShape, checkShape, type ElemSize } from '../../kernels/bitunshuffle.ts';
import { checkBindable, type DispatchChunk, encodeChunks } from '../chunked-dispatch.ts';
import { shaderSource } from '../shader-source.ts';
import { structLayout } from '../uniform-layout.ts';

export interface BitunshuffleJob extends Omit<BitshuffleShape, 'elemSize'> {
  /** The bit-shuffled bytes, STORAGE usage, size rounded up to 4 bytes. */
  shuffled: GPUBuffer;
  /** frameCount * frameElems u32 values, STORAGE usage. */
  values: GPUBuffer;
  /** Groups of 8 elements per dispatch (default 2^18, i.e. 2 Mi elements). */
  maxGroupsPerDispatch?: number;
}

export interface BitunshufflePass {
  readonly elemSize: ElemSize;
  /** Records the pass; destroy the returned parameter buffer after submitting. */
  encode(encoder: GPUCommandEncoder, job: BitunshuffleJob): GPUBuffer;
  /** Encodes and submits the pass on its own. */
  run(job: BitunshuffleJob): void;
}

const layout = structLayout(shaderSource.bitunshuffle, 'Params');

export function createBitunshufflePass(
  device: GPUDevice,
  { elemSize, workgroupSize = 64 }: { elemSize: ElemSize; workgroupSize?: number },
): BitunshufflePass {
  const pipeline = device.createComputePipeline({
    label: `bitunshuffle x${elemSize}`,
    layout: 'auto',
    compute: {
      module: device.createShaderModule({ label: 'bitunshuffle.wgsl', code: shaderSource.bitunshuffle }),
      entryPoint: 'main',
      constants: { ELEM_SIZE: elemSize, WORKGROUP_SIZE: workgroupSize },
    },
  });
  const encode = (encoder: GPUCommandEncoder, job: BitunshuffleJob): GPUBuffer => {
    const { frameElems: n, frameCount, blockElems } = job;
    checkShape({ ...job, elemSize });
    const elements = n * frameCount;
    const inBytes = Math.ceil((elements * elemSize) / 4) * 4;
    if (job.shuffled.size < inBytes || job.values.size < elements * 4) {
      throw new StemflowError('invalid', `Buffers too small for ${frameCount} frames of ${n} elements.`);
    }
    checkBindable(device, job.shuffled, 'bit-shuffled input');
    checkBindable(device, job.values, 'decoded values');
    const totalGroups = frameCount * Math.ceil(n / 8);
    const perDispatch = dispatchSize(device, workgroupSize, job.maxGroupsPerDispatch ?? 2 ** 18);
    const chunks: DispatchChunk[] = [];
    for (let first = 0; first < totalGroups; first += perDispatch) {
      chunks.push({
        params: { frame_elems: n, block_elems: blockElems, group_offset: first, group_end: totalGroups },
        workgroups: Math.ceil(Math.min(perDispatch, totalGroups - first) / workgroupSize),
      });
    }
    return encodeChunks(
      encoder,
      {
        device,
        pipeline,
        layout,
        label: 'bitunshuffle',
        bindings: [
          { binding: 1, resource: { buffer: job.shuffled } },
          { binding: 2, resource: { buffer: job.values } },
        ],
      },
      chunks,
    );
  };
  return {
    elemSize,
    encode,
    run(job) {
      const encoder = device.createCommandEncoder({ label: 'bitunshuffle' });
      const params = encode(encoder, job);
      device.queue.submit([encoder.finish()]);
      params.destroy();
    },
  };
}

/** Threads per dispatch: a multiple of the workgroup size within maxComputeWorkgroupsPerDimension. */
function dispatchSize(device: GPUDevice, workgroupSize: number, wanted: number): number {
  const groups = Math.max(
    1,
    Math.min(Math.ceil(wanted / workgroupSize), device.limits.maxComputeWorkgroupsPerDimension),
  );
  return groups * workgroupSize;
}
