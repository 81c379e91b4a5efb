/**
 * GPU pass: normalised bright-field images from the resident rows (src/shaders/tcbf-gather.wgsl; CPU twin
 * src/tcbf/kernels/tcbf-gather.ts). One dispatch per run of images that share a resident buffer and a spectra buffer.
 */
import { checkBindable, encodeChunks } from '../../gpu/chunked-dispatch.ts';
import type { ElemSize } from '../../gpu/resident-layout.ts';
import { shaderSource } from '../../gpu/shader-source.ts';
import { structLayout } from '../../gpu/uniform-layout.ts';
import { computePipeline, threadChunks } from './dispatch.ts';

const layout = structLayout(shaderSource['tcbf-gather'], 'Params');
const WORKGROUP = 256;

export interface GatherRun {
  /** The row buffer holding the run's pixels (uint16: of the low plane), and its first pixel. */
  resident: GPUBuffer;
  /**
   * uint16: the high plane's buffer (full rows, or a slot pool with `slotTable`) and the hot bitmap
   * (resident-layout.ts 'planes').
   */
  planes?: {
    hi: GPUBuffer;
    hot: GPUBuffer;
    slotTable?: GPUBuffer;
    hotWordsPerPixel: number;
    segmentFrames: number;
    /** Slotted: bytes per slot and segments per pixel. */
    slotFrames?: number;
    segments?: number;
  };
  rowFirstPixel: number;
  wordsPerPixel: number;
  /** Rows of the bound resident buffer, and row words per row tile (resident-layout.ts). */
  bufferRows: number;
  tileWords: number;
  /** Images [listStart, listStart + count) of the bright-field list. */
  listStart: number;
  count: number;
  /** Spectra buffer and the list index of its first image (even: buffers hold whole slots). */
  out: GPUBuffer;
  outFirst: number;
}

export interface GatherShared {
  /** u32 detector pixel per image; f32 1/mean per image; f32 taper rows then cols. */
  pixels: GPUBuffer;
  invMean: GPUBuffer;
  taper: GPUBuffer;
  scanRows: number;
  scanCols: number;
  rows: number;
  cols: number;
  /** Images in the whole list. */
  total: number;
}

export function createGatherPass(device: GPUDevice, elemSize: ElemSize) {
  const pipeline = computePipeline(device, 'tcbf-gather', {
    ELEM_BYTES: elemSize,
    WORKGROUP_SIZE: WORKGROUP,
  });
  return {
    encode(encoder: GPUCommandEncoder, shared: GatherShared, run: GatherRun): GPUBuffer {
      checkBindable(device, run.resident, 'resident');
      if (run.planes) {
        checkBindable(device, run.planes.hi, 'resident high plane');
        checkBindable(device, run.planes.hot, 'hot bitmap');
      }
      checkBindable(device, run.out, 'spectra');
      const hw = shared.rows * shared.cols;
      return encodeChunks(
        encoder,
        {
          device,
          pipeline,
          layout,
          label: 'tcbf-gather',
          bindings: [
            { binding: 1, resource: { buffer: run.resident } },
            { binding: 2, resource: { buffer: shared.pixels } },
            { binding: 3, resource: { buffer: shared.invMean } },
            { binding: 4, resource: { buffer: shared.taper } },
            { binding: 5, resource: { buffer: run.out } },
            // Packed layouts: read-only placeholders the shader never reads.
            { binding: 6, resource: { buffer: run.planes?.hi ?? run.resident } },
            { binding: 7, resource: { buffer: run.planes?.hot ?? shared.pixels } },
            { binding: 8, resource: { buffer: run.planes?.slotTable ?? shared.pixels } },
          ],
        },
        threadChunks(device, run.count * hw, WORKGROUP, {
          list_start: run.listStart,
          row_first_pixel: run.rowFirstPixel,
          words_per_pixel: run.wordsPerPixel,
          buffer_rows: run.bufferRows,
          tile_words: run.tileWords,
          scan_rows: shared.scanRows,
          scan_cols: shared.scanCols,
          rows: shared.rows,
          cols: shared.cols,
          out_first: run.outFirst,
          list_total: shared.total,
          hot_words_per_pixel: run.planes?.hotWordsPerPixel ?? 0,
          segment_frames: run.planes?.segmentFrames ?? 0,
          slotted: run.planes?.slotTable ? 1 : 0,
          slot_frames: run.planes?.slotFrames ?? 0,
          segments: run.planes?.segments ?? 0,
        }),
      );
    },
  };
}
