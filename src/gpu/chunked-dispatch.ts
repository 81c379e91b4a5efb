/**
 * Encodes a compute pass as several small dispatches, each with its own uniform parameters. The parameters of
 * all chunks live in one uniform buffer, one aligned slot per chunk, bound at @group(0) @binding(0); the
 * other bindings are shared. Keeping each dispatch small keeps the GPU responsive (no watchdog resets) and
 * within maxComputeWorkgroupsPerDimension.
 */
import { StemflowError } from '../errors.ts';
import { packStruct, type StructLayout } from './uniform-layout.ts';

export interface DispatchChunk {
  params: Readonly<Record<string, number>>;
  workgroups: number;
}

export interface ChunkedPass {
  device: GPUDevice;
  pipeline: GPUComputePipeline;
  layout: StructLayout;
  /** Bindings 1.. of group 0. */
  bindings: readonly GPUBindGroupEntry[];
  label: string;
  /**
   * A pipeline dispatched before each chunk's, with the same parameters at binding 0 (a pass whose output the
   * chunk's dispatch reads: each dispatch sees the writes of those before it).
   */
  before?: {
    pipeline: GPUComputePipeline;
    bindings: readonly GPUBindGroupEntry[];
    workgroups(chunk: DispatchChunk): number;
  };
  /** A pipeline dispatched once before all chunks, with the first chunk's parameters at binding 0. */
  first?: {
    pipeline: GPUComputePipeline;
    bindings: readonly GPUBindGroupEntry[];
    workgroups: number;
  };
}

/**
 * Records the dispatches into `encoder` and returns the parameter buffer; destroy it after `queue.submit`
 * (WebGPU keeps it alive until the submitted work is done).
 */
export function encodeChunks(
  encoder: GPUCommandEncoder,
  pass: ChunkedPass,
  chunks: readonly DispatchChunk[],
): GPUBuffer {
  const { device, layout, label } = pass;
  const maxGroups = device.limits.maxComputeWorkgroupsPerDimension;
  const stride = Math.max(layout.byteSize, device.limits.minUniformBufferOffsetAlignment);
  const bytes = new ArrayBuffer(Math.max(1, chunks.length) * stride);
  chunks.forEach((c, i) => {
    if (!Number.isInteger(c.workgroups) || c.workgroups < 0 || c.workgroups > maxGroups) {
      throw new StemflowError(
        'invalid',
        `A ${label} dispatch of ${c.workgroups} workgroups exceeds ${maxGroups}.`,
      );
    }
    packStruct(layout, c.params, bytes, i * stride);
  });
  const params = device.createBuffer({
    label: `${label} params`,
    size: bytes.byteLength,
    usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST,
  });
  device.queue.writeBuffer(params, 0, bytes);
  const compute = encoder.beginComputePass({ label });
  const { first } = pass;
  if (first && chunks.length > 0 && first.workgroups > 0) {
    if (!Number.isInteger(first.workgroups) || first.workgroups > maxGroups) {
      throw new StemflowError(
        'invalid',
        `A ${label} dispatch of ${first.workgroups} workgroups exceeds ${maxGroups}.`,
      );
    }
    compute.setPipeline(first.pipeline);
    compute.setBindGroup(
      0,
      device.createBindGroup({
        label: `${label} (first)`,
        layout: first.pipeline.getBindGroupLayout(0),
        entries: [
          { binding: 0, resource: { buffer: params, offset: 0, size: layout.byteSize } },
          ...first.bindings,
        ],
      }),
    );
    compute.dispatchWorkgroups(first.workgroups);
  }
  compute.setPipeline(pass.pipeline);
  const groupLayout = pass.pipeline.getBindGroupLayout(0);
  const { before } = pass;
  const beforeLayout = before?.pipeline.getBindGroupLayout(0);
  chunks.forEach((c, i) => {
    if (c.workgroups === 0) return;
    const paramsEntry = {
      binding: 0,
      resource: { buffer: params, offset: i * stride, size: layout.byteSize },
    };
    if (before && beforeLayout) {
      const workgroups = before.workgroups(c);
      if (!Number.isInteger(workgroups) || workgroups < 0 || workgroups > maxGroups) {
        throw new StemflowError(
          'invalid',
          `A ${label} dispatch of ${workgroups} workgroups exceeds ${maxGroups}.`,
        );
      }
      compute.setPipeline(before.pipeline);
      compute.setBindGroup(
        0,
        device.createBindGroup({
          label: `${label} chunk ${i} (before)`,
          layout: beforeLayout,
          entries: [paramsEntry, ...before.bindings],
        }),
      );
      compute.dispatchWorkgroups(workgroups);
      compute.setPipeline(pass.pipeline);
    }
    const group = device.createBindGroup({
      label: `${label} chunk ${i}`,
      layout: groupLayout,
      entries: [paramsEntry, ...pass.bindings],
    });
    compute.setBindGroup(0, group);
    compute.dispatchWorkgroups(c.workgroups);
  });
  compute.end();
  return params;
}

/** Checks that a buffer can be bound as one storage binding on this device. */
export function checkBindable(device: GPUDevice, buffer: GPUBuffer, what: string): void {
  const max = device.limits.maxStorageBufferBindingSize;
  if (buffer.size > max) {
    throw new StemflowError(
      'budget',
      `The ${what} buffer (${buffer.size} bytes) exceeds this GPU's binding limit of ${max} bytes.`,
    );
  }
}
