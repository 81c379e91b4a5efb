/** GPU pass: phase-flip filter (src/shaders/tcbf-phase-flip.wgsl; CPU twin src/tcbf/kernels/tcbf-phase-flip.ts). */
import { encodeChunks } from '../../gpu/chunked-dispatch.ts';
import { shaderSource } from '../../gpu/shader-source.ts';
import { structLayout } from '../../gpu/uniform-layout.ts';
import type { PhaseFlipSpec } from '../kernels/tcbf-phase-flip.ts';
import { computePipeline, threadChunks } from './dispatch.ts';

const layout = structLayout(shaderSource['tcbf-phase-flip'], 'Params');
const WORKGROUP = 256;

export function createPhaseFlipPass(device: GPUDevice) {
  const pipeline = computePipeline(device, 'tcbf-phase-flip', { WORKGROUP_SIZE: WORKGROUP });
  return {
    /** out = acc x sign(sin chi_even) on the fineRows x fineCols grid; `terms` holds spec.terms (at least 16 bytes). */
    encode(
      encoder: GPUCommandEncoder,
      acc: GPUBuffer,
      terms: GPUBuffer,
      out: GPUBuffer,
      fineRows: number,
      fineCols: number,
      spec: PhaseFlipSpec,
    ): GPUBuffer {
      return encodeChunks(
        encoder,
        {
          device,
          pipeline,
          layout,
          label: 'tcbf-phase-flip',
          bindings: [
            { binding: 1, resource: { buffer: acc } },
            { binding: 2, resource: { buffer: terms } },
            { binding: 3, resource: { buffer: out } },
          ],
        },
        threadChunks(device, fineRows * fineCols, WORKGROUP, {
          fine_rows: fineRows,
          fine_cols: fineCols,
          extent_rows: spec.extentRows,
          extent_cols: spec.extentCols,
          lambda: spec.lambda,
          term_count: spec.terms.length / 4,
        }),
      );
    },
  };
}
