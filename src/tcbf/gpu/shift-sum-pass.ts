/** GPU pass: shifted sum of spectra (src/shaders/tcbf-shift-sum.wgsl; CPU twin src/tcbf/kernels/tcbf-shift-sum.ts). */
import { encodeChunks } from '../../gpu/chunked-dispatch.ts';
import { shaderSource } from '../../gpu/shader-source.ts';
import { structLayout } from '../../gpu/uniform-layout.ts';
import { computePipeline, threadChunks } from './dispatch.ts';

const layout = structLayout(shaderSource['tcbf-shift-sum'], 'Params');
const WORKGROUP = 256;

export function createShiftSumPass(device: GPUDevice) {
  const pipeline = computePipeline(device, 'tcbf-shift-sum', { WORKGROUP_SIZE: WORKGROUP });
  return {
    /** Adds (or, with `clear`, writes) the shifted sum of images [0, count) of `spectra` into `acc`. */
    encode(
      encoder: GPUCommandEncoder,
      spectra: GPUBuffer,
      count: number,
      shifts: GPUBuffer,
      shiftFirst: number,
      acc: GPUBuffer,
      rows: number,
      cols: number,
      factor: number,
      clear: boolean,
    ): GPUBuffer {
      const fineRows = rows * factor;
      const fineCols = cols * factor;
      return encodeChunks(
        encoder,
        {
          device,
          pipeline,
          layout,
          label: 'tcbf-shift-sum',
          bindings: [
            { binding: 1, resource: { buffer: spectra } },
            { binding: 2, resource: { buffer: shifts } },
            { binding: 3, resource: { buffer: acc } },
          ],
        },
        threadChunks(device, fineRows * fineCols, WORKGROUP, {
          image_count: count,
          shift_first: shiftFirst,
          rows,
          cols,
          fine_rows: fineRows,
          fine_cols: fineCols,
          clear: clear ? 1 : 0,
        }),
      );
    },
  };
}
