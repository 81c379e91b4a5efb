/**
 * GPU pass: a batch of spectra times one spectrum (src/shaders/tcbf-spectrum-product.wgsl; CPU twin
 * src/tcbf/kernels/tcbf-spectrum-product.ts).
 */
import { encodeChunks } from '../../gpu/chunked-dispatch.ts';
import { shaderSource } from '../../gpu/shader-source.ts';
import { structLayout } from '../../gpu/uniform-layout.ts';
import { computePipeline, threadChunks } from './dispatch.ts';

const layout = structLayout(shaderSource['tcbf-spectrum-product'], 'Params');
const WORKGROUP = 256;

export function createSpectrumProductPass(device: GPUDevice) {
  const pipeline = computePipeline(device, 'tcbf-spectrum-product', { WORKGROUP_SIZE: WORKGROUP });
  return {
    /** dst[0 .. count hw) = src[srcOffset ..] x factor (complex elements). */
    encode(
      encoder: GPUCommandEncoder,
      src: GPUBuffer,
      srcOffset: number,
      count: number,
      hw: number,
      factor: GPUBuffer,
      dst: GPUBuffer,
    ): GPUBuffer {
      return encodeChunks(
        encoder,
        {
          device,
          pipeline,
          layout,
          label: 'tcbf-spectrum-product',
          bindings: [
            { binding: 1, resource: { buffer: src } },
            { binding: 2, resource: { buffer: factor } },
            { binding: 3, resource: { buffer: dst } },
          ],
        },
        threadChunks(device, count * hw, WORKGROUP, { src_offset: srcOffset, hw }),
      );
    },
  };
}
