/** Shared by the tcBF passes: compute pipelines from shader-source and 1-D thread ranges split into dispatches. */
import type { DispatchChunk } from '../../gpu/chunked-dispatch.ts';
import { type ShaderName, shaderSource } from '../../gpu/shader-source.ts';

export function computePipeline(
  device: GPUDevice,
  name: ShaderName,
  constants: Record<string, number>,
): GPUComputePipeline {
  return device.createComputePipeline({
    label: `${name} ${JSON.stringify(constants)}`,
    layout: 'auto',
    compute: {
      module: device.createShaderModule({ label: `${name}.wgsl`, code: shaderSource[name] }),
      entryPoint: 'main',
      constants,
    },
  });
}

/** Threads [0, total) as dispatches of at most maxComputeWorkgroupsPerDimension workgroups each. */
export function threadChunks(
  device: GPUDevice,
  total: number,
  workgroupSize: number,
  params: Readonly<Record<string, number>>,
): DispatchChunk[] {
  const perDispatch = device.limits.maxComputeWorkgroupsPerDimension * workgroupSize;
  const chunks: DispatchChunk[] = [];
  for (let first = 0; first < total; first += perDispatch) {
    const end = Math.min(total, first + perDispatch);
    chunks.push({
      params: { ...params, thread_first: first, thread_end: end },
      workgroups: Math.ceil((end - first) / workgroupSize),
    });
  }
  return chunks;
}

/** Workgroups [0, total) as dispatches, each chunk told its first index through `firstName`. */
export function groupChunks(
  device: GPUDevice,
  total: number,
  firstName: string,
  params: Readonly<Record<string, number>>,
  countName?: string,
): DispatchChunk[] {
  const max = device.limits.maxComputeWorkgroupsPerDimension;
  const chunks: DispatchChunk[] = [];
  for (let first = 0; first < total; first += max) {
    const count = Math.min(max, total - first);
    chunks.push({
      params: { ...params, [firstName]: first, ...(countName ? { [countName]: count } : {}) },
      workgroups: count,
    });
  }
  return chunks;
}
