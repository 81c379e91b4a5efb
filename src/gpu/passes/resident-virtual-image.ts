/**
 * GPU pass: exact virtual image (u64 per scan position) of a binary mask from the resident detector-major
 * buffers. Shader: src/shaders/resident-virtual-image.wgsl. CPU twin: src/kernels/resident-virtual-image.ts.
 *
 * The mask arrives as a u32 list of global pixel indices, strictly increasing, flagged pixels already
 * removed, and its grouping per row buffer (`groupPixelsByBuffer`). One dispatch per row buffer that holds
 * mask pixels; each adds into `image`, so the image is the sum over all buffers. Traffic: each listed pixel's
 * row is read once (wordsPerPixel x 4 bytes; uint16: the low plane's 256 KiB for a 512 x 512 scan, plus the
 * high plane's segments whose hot bit is set, `residentReads`), plus the list and one read-modify-write of
 * the image (16 bytes per position) per buffer dispatch. Parallelism: one thread per vec4 column and slice of
 * the list (slices x wordsPerPixel / 4 threads per dispatch).
 */

import { StemflowError } from '../../errors.ts';
import { checkBindable, type DispatchChunk, encodeChunks } from '../chunked-dispatch.ts';
import { bufferPixelRange, bufferRows, type PixelGroup } from '../resident-index.ts';
import { type ElemSize, type ResidentLayout, residentParts, slotTableBytes } from '../resident-layout.ts';
import { shaderSource } from '../shader-source.ts';
import { structLayout } from '../uniform-layout.ts';

const source = shaderSource['resident-virtual-image'];

export interface ResidentVirtualImageJob {
  layout: ResidentLayout;
  /** The resident set, layout.bufferBytes order (only the row buffers named by `groups` are bound). */
  resident: readonly GPUBuffer[];
  /** u32 global pixel indices, strictly increasing (STORAGE). */
  pixelList: GPUBuffer;
  /** groupPixelsByBuffer(layout, list): which list entries lie in which buffer. */
  groups: readonly PixelGroup[];
  /** 2 u32 (lo, hi) per scan position: at least layout.frames x 8 bytes; read back as BigUint64Array. */
  image: GPUBuffer;
  /** Zero `image` first (default true); false adds to what it holds. */
  clear?: boolean;
  /** Subtract the sums from what `image` holds (u64, wrapping like the twin); implies clear = false. */
  subtract?: boolean;
  /** vec4 columns (4 x valuesPerWord positions) per dispatch; default: as many as one dispatch allows. */
  maxColumnsPerDispatch?: number;
}

export interface ResidentVirtualImagePass {
  readonly elemSize: ElemSize;
  /** Records the pass; destroy the returned parameter buffers after submitting. */
  encode(encoder: GPUCommandEncoder, job: ResidentVirtualImageJob): GPUBuffer[];
  run(job: ResidentVirtualImageJob): void;
}

const layout = structLayout(source, 'Params');

export function createResidentVirtualImagePass(
  device: GPUDevice,
  {
    elemSize,
    workgroupSize = 256,
    slices = elemSize === 2 ? 16 : 8,
  }: {
    elemSize: ElemSize;
    /** Threads per workgroup: workgroupSize / slices columns x slices parts of the pixel list. */
    workgroupSize?: number;
    /**
     * Parts of the pixel list read in parallel per column (more loads in flight), added up in the workgroup.
     * H200, 512 x 512 x 192 x 192 uint16 packed 2 per word, workgroup 256: 1 slice 0.7 TB/s, 4: 1.4 TB/s,
     * 8: 3.6 TB/s, 16: 3.9 TB/s. Byte planes have half the vec4 columns per row (16 positions each), so they
     * default to 16 slices: as many threads and loads in flight as the packed rows had with 8.
     */
    slices?: number;
  },
): ResidentVirtualImagePass {
  if (
    workgroupSize & (workgroupSize - 1) ||
    workgroupSize > device.limits.maxComputeInvocationsPerWorkgroup ||
    slices & (slices - 1) ||
    slices < 1 ||
    slices > workgroupSize
  ) {
    throw new StemflowError(
      'invalid',
      `Workgroup size ${workgroupSize} and ${slices} slices must be powers of two within the GPU limit.`,
    );
  }
  // Two vec4<u32> per thread for the slice reduction.
  if (slices > 1 && workgroupSize * 32 > device.limits.maxComputeWorkgroupStorageSize) {
    throw new StemflowError(
      'invalid',
      `Workgroup size ${workgroupSize} needs ${workgroupSize * 32} bytes of workgroup memory, above this GPU's ${device.limits.maxComputeWorkgroupStorageSize}.`,
    );
  }
  const columnsPerGroup = workgroupSize / slices;
  const pipeline = device.createComputePipeline({
    label: `resident-virtual-image x${elemSize}`,
    layout: 'auto',
    compute: {
      module: device.createShaderModule({ label: 'resident-virtual-image.wgsl', code: source }),
      entryPoint: 'main',
      constants: { ELEM_BYTES: elemSize, WORKGROUP_SIZE: workgroupSize, SLICES: slices },
    },
  });
  const maxGroups = device.limits.maxComputeWorkgroupsPerDimension;

  const encode = (encoder: GPUCommandEncoder, job: ResidentVirtualImageJob): GPUBuffer[] => {
    const { layout: plan, resident, pixelList, groups, image } = job;
    if (plan.elemSize !== elemSize) {
      throw new StemflowError(
        'invalid',
        `A ${elemSize}-byte virtual image got a ${plan.elemSize}-byte layout.`,
      );
    }
    const parts = residentParts(plan, resident);
    if (image.size < plan.frames * 8) {
      throw new StemflowError('invalid', `The image buffer does not hold ${plan.frames} positions.`);
    }
    checkBindable(device, image, 'virtual image');
    checkBindable(device, pixelList, 'mask pixel list');
    if (!job.subtract && (job.clear ?? true)) encoder.clearBuffer(image);
    const columns = Math.ceil(plan.frames / (4 * plan.valuesPerWord));
    const perDispatch = Math.min(
      job.maxColumnsPerDispatch ?? Number.POSITIVE_INFINITY,
      maxGroups * columnsPerGroup,
    );
    const params: GPUBuffer[] = [];
    for (const { buffer: b, start, count } of groups) {
      if (count === 0) continue;
      if (!(b >= 0 && b < plan.rowBuffers) || (start + count) * 4 > pixelList.size) {
        throw new StemflowError('invalid', `Mask group of buffer ${b} reaches past the pixel list.`);
      }
      const buffer = parts.lo[b];
      const hi = parts.hi?.[b] ?? buffer;
      const hot = parts.hot ?? pixelList;
      const slotTable = parts.slotTable ?? pixelList;
      for (const [what, x, bytes] of [
        ['low', buffer, plan.rowBufferBytes[b]],
        ['high', hi, parts.hi ? plan.bufferBytes[plan.rowBuffers + b] : 0],
        ['hot', hot, parts.hot ? plan.hotBytes : 0],
        ['slot table', slotTable, parts.slotTable ? slotTableBytes(plan) : 0],
      ] as const) {
        if (x.size < bytes) {
          throw new StemflowError('invalid', `Resident ${what} buffer ${b} is smaller than ${bytes} bytes.`);
        }
        checkBindable(device, x, `resident ${what} ${b}`);
      }
      const chunks: DispatchChunk[] = [];
      for (let c = 0; c < columns; c += perDispatch) {
        const end = Math.min(columns, c + perDispatch);
        chunks.push({
          params: {
            list_start: start,
            list_count: count,
            row_first_pixel: bufferPixelRange(plan, b).first,
            vec4_per_pixel: plan.wordsPerPixel / 4,
            buffer_rows: bufferRows(plan, b),
            tile_vec4: plan.tileWords / 4,
            frames: plan.frames,
            column_first: c,
            column_end: end,
            subtract: job.subtract ? 1 : 0,
            hot_words_per_pixel: plan.hotWordsPerPixel,
            segment_frames: plan.segmentFrames,
            slotted: plan.high === 'slots' ? 1 : 0,
            slot_frames: plan.slotFrames,
            segments: plan.segments,
          },
          workgroups: Math.ceil((end - c) / columnsPerGroup),
        });
      }
      params.push(
        encodeChunks(
          encoder,
          {
            device,
            pipeline,
            layout,
            label: `resident-virtual-image buffer ${b}`,
            bindings: [
              { binding: 1, resource: { buffer } },
              { binding: 2, resource: { buffer: pixelList } },
              { binding: 3, resource: { buffer: image } },
              // Packed layouts: read-only placeholders the shader never reads.
              { binding: 4, resource: { buffer: hi } },
              { binding: 5, resource: { buffer: hot } },
              { binding: 6, resource: { buffer: slotTable } },
            ],
          },
          chunks,
        ),
      );
    }
    return params;
  };
  return {
    elemSize,
    encode,
    run(job) {
      const encoder = device.createCommandEncoder({ label: 'resident-virtual-image' });
      const params = encode(encoder, job);
      device.queue.submit([encoder.finish()]);
      for (const p of params) p.destroy();
    },
  };
}
