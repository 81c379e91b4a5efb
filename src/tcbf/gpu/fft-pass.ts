/**
 * GPU pass: batched complex FFT lines (src/shaders/fft.wgsl; CPU twin src/tcbf/kernels/fft.ts). One pipeline
 * and one twiddle table (float64 values rounded to float32) per length, made on first use.
 */
import { StemflowError } from '../../errors.ts';
import { checkBindable, encodeChunks } from '../../gpu/chunked-dispatch.ts';
import { shaderSource } from '../../gpu/shader-source.ts';
import { structLayout } from '../../gpu/uniform-layout.ts';
import { MAX_FFT_LENGTH } from '../grid.ts';
import { columnPass, type FftLines, rowPass, twiddles } from '../kernels/fft.ts';
import { computePipeline, groupChunks } from './dispatch.ts';

const layout = structLayout(shaderSource.fft, 'Params');

export interface FftPass {
  /** Records one batch of lines on `buffer` (complex float32); returns the parameter buffers to destroy. */
  encode(encoder: GPUCommandEncoder, buffer: GPUBuffer, job: FftLines): GPUBuffer[];
  /** Rows then columns of `count` images at element `offset`; the inverse is scaled by 1 / (rows cols). */
  encode2d(
    encoder: GPUCommandEncoder,
    buffer: GPUBuffer,
    offset: number,
    count: number,
    rows: number,
    cols: number,
    inverse: boolean,
  ): GPUBuffer[];
  destroy(): void;
}

export function createFftPass(device: GPUDevice): FftPass {
  const byLength = new Map<number, { pipeline: GPUComputePipeline; twiddles: GPUBuffer }>();
  const forLength = (n: number) => {
    if (n & (n - 1) || n < 2 || n > MAX_FFT_LENGTH) {
      throw new StemflowError(
        'unsupported',
        `FFT length ${n} is not a power of two in [2, ${MAX_FFT_LENGTH}].`,
      );
    }
    let entry = byLength.get(n);
    if (!entry) {
      const table = Float32Array.from(twiddles(n));
      const buffer = device.createBuffer({
        label: `fft twiddles ${n}`,
        size: Math.max(16, table.byteLength),
        usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST,
      });
      device.queue.writeBuffer(buffer, 0, table);
      const workgroupSize = Math.min(256, n / 2);
      entry = {
        pipeline: computePipeline(device, 'fft', {
          N: n,
          LOG_N: Math.log2(n),
          WORKGROUP_SIZE: workgroupSize,
        }),
        twiddles: buffer,
      };
      byLength.set(n, entry);
    }
    return entry;
  };
  const encode = (encoder: GPUCommandEncoder, buffer: GPUBuffer, job: FftLines): GPUBuffer[] => {
    const { pipeline, twiddles: tw } = forLength(job.n);
    checkBindable(device, buffer, 'FFT data');
    const chunks = groupChunks(
      device,
      job.lineCount,
      'line_first',
      {
        lines_per_image: job.linesPerImage,
        image_stride: job.imageStride,
        line_step: job.lineStep,
        elem_stride: job.elemStride,
        offset: job.offset,
        inverse: job.inverse ? 1 : 0,
        scale: job.scale,
      },
      'line_count',
    ).map((c) => ({ ...c, params: { ...c.params, line_first: c.params.line_first + job.lineFirst } }));
    return [
      encodeChunks(
        encoder,
        {
          device,
          pipeline,
          layout,
          label: `fft ${job.n}`,
          bindings: [
            { binding: 1, resource: { buffer } },
            { binding: 2, resource: { buffer: tw } },
          ],
        },
        chunks,
      ),
    ];
  };
  return {
    encode,
    encode2d(encoder, buffer, offset, count, rows, cols, inverse) {
      return [
        ...encode(encoder, buffer, rowPass(offset, count, rows, cols, inverse)),
        ...encode(
          encoder,
          buffer,
          columnPass(offset, count, rows, cols, inverse, inverse ? 1 / (rows * cols) : 1),
        ),
      ];
    },
    destroy() {
      for (const { twiddles: t } of byLength.values()) t.destroy();
      byLength.clear();
    },
  };
}
