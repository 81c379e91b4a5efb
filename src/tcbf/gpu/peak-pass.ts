/** GPU pass: correlation peaks (src/shaders/tcbf-peak.wgsl; CPU twin src/tcbf/kernels/tcbf-peak.ts). */
import { StemflowError } from '../../errors.ts';
import { encodeChunks } from '../../gpu/chunked-dispatch.ts';
import { shaderSource } from '../../gpu/shader-source.ts';
import { structLayout } from '../../gpu/uniform-layout.ts';
import { computePipeline, groupChunks } from './dispatch.ts';

const layout = structLayout(shaderSource['tcbf-peak'], 'Params');
const WORKGROUP = 256;

export function createPeakPass(device: GPUDevice) {
  const pipeline = computePipeline(device, 'tcbf-peak', { WORKGROUP_SIZE: WORKGROUP });
  return {
    /**
     * Peaks of `count` correlation images at the start of `corr`, for list images [imageFirst, imageFirst +
     * count): expected (vec2 f32 per list image) in, peaks (vec4 f32 per list image) out.
     */
    encode(
      encoder: GPUCommandEncoder,
      corr: GPUBuffer,
      expected: GPUBuffer,
      peaks: GPUBuffer,
      imageFirst: number,
      count: number,
      rows: number,
      cols: number,
      radius: number,
    ): GPUBuffer {
      const chunks = groupChunks(device, count, 'image_first', {
        image_count: 0,
        rows,
        cols,
        radius_rows: Math.min(radius, Math.floor((rows - 1) / 2)),
        radius_cols: Math.min(radius, Math.floor((cols - 1) / 2)),
      }).map((c) => ({
        ...c,
        params: { ...c.params, image_first: imageFirst + c.params.image_first, image_count: c.workgroups },
      }));
      if (chunks.length > 1) {
        // Images of later chunks do not start at element 0 of `corr`: keep one dispatch per call.
        throw new StemflowError(
          'invalid',
          `tcbf-peak takes at most ${device.limits.maxComputeWorkgroupsPerDimension} images per call, not ${count}.`,
        );
      }
      return encodeChunks(
        encoder,
        {
          device,
          pipeline,
          layout,
          label: 'tcbf-peak',
          bindings: [
            { binding: 1, resource: { buffer: corr } },
            { binding: 2, resource: { buffer: expected } },
            { binding: 3, resource: { buffer: peaks } },
          ],
        },
        chunks,
      );
    },
  };
}
