/**
 * GPU pass: one decoded batch (frame-major slot) -> the resident buffers (detector-major), plus exact 64-bit
 * DP sums per pixel. Shader: src/shaders/detector-transpose.wgsl. CPU twin: src/kernels/detector-transpose.ts.
 * Layout: src/gpu/resident-layout.ts; contract: docs/pass-graph.md.
 *
 * One compute pass per row buffer, normally one dispatch each (a batch larger than `maxValuesPerDispatch`
 * values per buffer, or more than 65,535 workgroups, is split over frames). Traffic: every decoded word is
 * read once and every row word of the batch written once (B x P x elemSize bytes each way; uint16: the low
 * plane's B x P bytes, and high-plane words only where nonzero), plus 2 global atomics per pixel per
 * workgroup span of tilesPerWorkgroup x 32 x OVPW frames (and, uint16, up to 2 for the hot bits).
 */

import { StemflowError } from '../../errors.ts';
import { AUDIT_LAYOUT } from '../../kernels/bslz4-decode.ts';
import { decodedPlanesLayout } from '../../kernels/decoded-planes.ts';
import { checkTransposeBatch } from '../../kernels/detector-transpose.ts';
import { checkHighScratch } from '../../kernels/high-pool-place.ts';
import { checkBindable, type DispatchChunk, encodeChunks } from '../chunked-dispatch.ts';
import { bufferPixelRange } from '../resident-index.ts';
import { type ElemSize, type ResidentLayout, residentParts } from '../resident-layout.ts';
import { shaderSource } from '../shader-source.ts';
import { structLayout } from '../uniform-layout.ts';

const source = shaderSource['detector-transpose'];

/** Workgroup memory of the transpose that counts the histogram: the 16 KiB tile and 256 bins. */
export const HISTOGRAM_WORKGROUP_BYTES = 16384 + 1024;

/** Whether `device` runs the transpose that counts the histogram (its workgroup memory). */
export function transposeCanCountHistogram(device: GPUDevice): boolean {
  return device.limits.maxComputeWorkgroupStorageSize >= HISTOGRAM_WORKGROUP_BYTES;
}

/** Refuses ('unsupported') a transpose that counts the histogram on a device without the workgroup memory for it. */
export function checkTransposeHistogram(device: GPUDevice): void {
  if (!transposeCanCountHistogram(device)) {
    throw new StemflowError(
      'unsupported',
      `The transpose's histogram needs ${HISTOGRAM_WORKGROUP_BYTES} bytes of workgroup memory; this GPU offers ${device.limits.maxComputeWorkgroupStorageSize} (count the histogram in the decode).`,
    );
  }
}

/** Pixels per workgroup block, and output words per pixel row per tile (shader constants). */
export const TRANSPOSE_TILE_PIXELS = 64;
export const TRANSPOSE_TILE_WORDS = 32;
const MAX_TILES_PER_WORKGROUP = 16;
/**
 * Default workgroups a dispatch aims at before it lengthens each workgroup's span of frames. With the
 * span-fastest order, 2,048 (4 tiles a workgroup at 8,190 pixels x 8,192 frames, two waves on the H200) writes a
 * scan's rows in 21.2-21.4 ms against 22.3-22.4 for 1,024 block-fastest (one wave over every row at once), 22.5-22.8
 * for 4,096 and 24.1-24.6 for 8,192 (the per-workgroup sums then cost more than the shorter footprint saves;
 * docs/performance.md, eighteenth session).
 */
const TARGET_WORKGROUPS = 2048;

/** Frames per transpose tile: 32 row words of 4 values (uint8, and uint16's byte planes) or 1 (uint32). */
export function transposeTileFrames(elemSize: ElemSize): number {
  return TRANSPOSE_TILE_WORDS * (elemSize === 4 ? 1 : 4);
}

export interface DetectorTransposeJob {
  layout: ResidentLayout;
  /** The decoded slot: frame f of the batch at word f * wordsPerFrame, packed like the source dtype. */
  decoded: GPUBuffer;
  /** Default ceil(pixels * elemSize / 4); a pass made with `planes`: the planes form's (decodedPlanesLayout). */
  wordsPerFrame?: number;
  /** Global index of the batch's first frame: a multiple of layout.valuesPerWord. */
  firstFrame: number;
  /** Frames in the batch. */
  frames: number;
  /** The resident set: buffer i of at least layout.bufferBytes[i] bytes (createResidentBuffers), zeroed once. */
  resident: readonly GPUBuffer[];
  /** 2 u32 (lo, hi) per pixel; the pass adds to it (clear it once before the first batch). */
  dpSums: GPUBuffer;
  /** Frame tiles each workgroup loops over (1..16); default: enough workgroups to fill the GPU. */
  tilesPerWorkgroup?: number;
  /** Values per dispatch before a batch is split over frames (default 2^28: ~1 GB moved as uint16). */
  maxValuesPerDispatch?: number;
  /**
   * A slotted high plane ('slots'): the batch's high scratch, one buffer per row buffer, rows of
   * `wordsPerPixel` words from global row word firstFrame / 4 (highScratchWordsPerPixel), zero where the pass
   * writes nothing; its nonzero high words go there, and gpu/passes/high-pool-place.ts moves them into slots.
   * `batchHot` gets the batch's own hot bits (batchHotWords a pixel, bit g - floor(firstFrame / segmentFrames)
   * for segment g; zero before the batch).
   */
  highScratch?: {
    buffers: readonly GPUBuffer[];
    wordsPerPixel: number;
    batchHot: GPUBuffer;
    batchHotWords: number;
  };
  /**
   * A pass made with `histogram`: the decode's audit buffer (AUDIT_LAYOUT), whose histogram bins 1..255 get the
   * batch's unflagged values, and the pixel flags (one u32 a pixel, nonzero = flagged) the decode used.
   */
  audit?: { buffer: GPUBuffer; flags: GPUBuffer };
}

export interface DetectorTransposePass {
  readonly elemSize: ElemSize;
  /** Whether the pass counts the audit histogram's bins 1..255 (its jobs give `audit`). */
  readonly histogram: boolean;
  /** Whether its jobs' decoded slots are byte planes (src/kernels/decoded-planes.ts). */
  readonly planes: boolean;
  /** Records the pass; destroy the returned parameter buffers after submitting. */
  encode(encoder: GPUCommandEncoder, job: DetectorTransposeJob): GPUBuffer[];
  /** Encodes and submits the pass on its own. */
  run(job: DetectorTransposeJob): void;
  /** Whether a batch with this slot stride runs the 16-byte form (loads 'vec4' and aligned frame rows). */
  usesVec4(wordsPerFrame: number): boolean;
}

const layout = structLayout(source, 'Params');

/** Zeroed resident buffers of a layout, all of them (STORAGE | COPY_SRC | COPY_DST). */
export function createResidentBuffers(
  device: GPUDevice,
  resident: ResidentLayout,
  label = 'resident',
): GPUBuffer[] {
  return resident.bufferBytes.map((size, b) =>
    device.createBuffer({
      label: `${label} ${b}`,
      size,
      usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
    }),
  );
}

/**
 * How each thread moves its words of a tile: 'scalar' loads and stores one word after the other (one load in
 * flight per thread); 'batched' issues all of its loads first (up to 16 in flight), then stores them; 'vec4'
 * (entry point main_vec4) moves 16 bytes per global access, loads and stores, for every element size; it needs the
 * decoded frame rows 16-byte aligned (wordsPerFrame a multiple of 4: the load plan pads its rows so), and a batch
 * without that runs the scalar form (`usesVec4`). All are exact. On the H200 (interleaved
 * rounds, docs/performance.md "The transpose, measured"): 426 GB/s of decoded input per batch for 'vec4', 318 for
 * 'scalar', 301 for 'batched'; inside the 512 x 512 x 192 x 192 load 48 ms instead of 62. Since the tenth session
 * main_vec4 holds no private arrays or dynamically indexed vectors (its loads, slots and row words are separate
 * values): 602-699 GB/s against 369-408 for the form with arrays in the same rounds, 30.4-32.0 ms inside the load
 * against 49.1-50.8. 'vec4' is the default.
 */
export type TransposeLoads = 'scalar' | 'batched' | 'vec4';
export const TRANSPOSE_LOADS: readonly TransposeLoads[] = ['scalar', 'batched', 'vec4'];
export const DEFAULT_TRANSPOSE_LOADS: TransposeLoads = 'vec4';

export function createDetectorTransposePass(
  device: GPUDevice,
  {
    elemSize,
    loads = DEFAULT_TRANSPOSE_LOADS,
    histogram = false,
    planes = false,
  }: {
    elemSize: ElemSize;
    loads?: TransposeLoads;
    /**
     * The decoded slots are the decode's planes form (uint16 only; src/kernels/decoded-planes.ts):
     * detector-transpose-planes.wgsl, its 16-byte entry point only, reads the low plane and the marked spans' high
     * bytes, and zeroes the high bytes it read. Not with `histogram`.
     */
    planes?: boolean;
    /**
     * Count the audit histogram's bins 1..255 here (detector-transpose-histogram.wgsl: 17 KiB of workgroup
     * memory, so only where maxComputeWorkgroupStorageSize allows), for a decode made with `auditBins: false`:
     * a load with histogramIn 'transpose'. The load's GPU work is the same with the bins in either pass
     * (docs/performance.md, twentieth and twenty-fifth sessions).
     */
    histogram?: boolean;
  },
): DetectorTransposePass {
  if (planes && (elemSize !== 2 || histogram || loads !== 'vec4')) {
    throw new StemflowError(
      'invalid',
      'A transpose of byte planes is for uint16 values, with 16-byte loads and without the histogram.',
    );
  }
  const name = planes
    ? 'detector-transpose-planes'
    : histogram
      ? 'detector-transpose-histogram'
      : 'detector-transpose';
  if (histogram) checkTransposeHistogram(device);
  const makePipeline = (vec4: boolean) =>
    device.createComputePipeline({
      label: `detector-transpose x${elemSize} ${vec4 ? 'vec4' : loads === 'vec4' ? 'scalar' : loads}`,
      layout: 'auto',
      compute: {
        module: device.createShaderModule({ label: `${name}.wgsl`, code: shaderSource[name] }),
        entryPoint: vec4 ? 'main_vec4' : 'main',
        // Only the constants the entry point uses.
        constants: {
          ELEM_BYTES: elemSize,
          ...(histogram ? { AUDIT_HISTOGRAM: AUDIT_LAYOUT.histogram } : {}),
          ...(vec4 ? {} : { BATCHED_LOADS: loads === 'batched' ? 1 : 0 }),
        },
      },
    });
  // 'vec4' compiles the scalar form only when a batch needs it.
  const pipelines = new Map<boolean, GPUComputePipeline>();
  const pipelineFor = (vec4: boolean) => {
    let pipeline = pipelines.get(vec4);
    if (!pipeline) {
      pipeline = makePipeline(vec4);
      pipelines.set(vec4, pipeline);
    }
    return pipeline;
  };
  pipelineFor(loads === 'vec4');
  const usesVec4 = (wordsPerFrame: number) => loads === 'vec4' && wordsPerFrame % 4 === 0;
  const tileFrames = transposeTileFrames(elemSize);
  const maxGroups = device.limits.maxComputeWorkgroupsPerDimension;

  const encode = (encoder: GPUCommandEncoder, job: DetectorTransposeJob): GPUBuffer[] => {
    const { layout: plan, decoded, firstFrame, frames, resident, dpSums } = job;
    if (plan.elemSize !== elemSize) {
      throw new StemflowError('invalid', `A ${elemSize}-byte transpose got a ${plan.elemSize}-byte layout.`);
    }
    const wordsPerFrame = checkTransposeBatch({ ...job, planes });
    const parts = residentParts(plan, resident);
    const scratch = job.highScratch;
    if ((plan.high === 'slots') !== (scratch !== undefined)) {
      throw new StemflowError(
        'invalid',
        'A slotted high plane takes the batch high words through a high scratch (highScratch), a full one not.',
      );
    }
    if (scratch) {
      checkHighScratch(plan, firstFrame, frames, {
        ...scratch,
        bufferBytes: scratch.buffers.map((buffer) => buffer.size),
        batchHotBytes: scratch.batchHot.size,
      });
      for (const [b, buffer] of scratch.buffers.entries()) checkBindable(device, buffer, `high scratch ${b}`);
    }
    resident.forEach((buffer, b) => {
      if (buffer.size < plan.bufferBytes[b]) {
        throw new StemflowError(
          'invalid',
          `Resident buffer ${b} is smaller than ${plan.bufferBytes[b]} bytes.`,
        );
      }
      checkBindable(device, buffer, `resident ${b}`);
    });
    if (decoded.size < frames * wordsPerFrame * 4) {
      throw new StemflowError('invalid', `The decoded slot does not hold ${frames} frames.`);
    }
    if (dpSums.size < plan.pixels * 8) {
      throw new StemflowError('invalid', `The DP sums buffer does not hold ${plan.pixels} pixels.`);
    }
    checkBindable(device, decoded, 'decoded slot');
    checkBindable(device, dpSums, 'DP sums');
    const audit = job.audit;
    if (histogram !== (audit !== undefined)) {
      throw new StemflowError(
        'invalid',
        histogram
          ? 'A transpose that counts the histogram needs the audit buffer and the pixel flags.'
          : 'This transpose does not count the histogram: it takes no audit buffer.',
      );
    }
    if (audit) {
      if (audit.buffer.size < AUDIT_LAYOUT.words * 4) {
        throw new StemflowError('invalid', `The audit buffer holds fewer than ${AUDIT_LAYOUT.words} words.`);
      }
      if (audit.flags.size < plan.pixels * 4) {
        throw new StemflowError('invalid', `The pixel flags hold fewer than ${plan.pixels} pixels.`);
      }
    }
    if (frames === 0) return [];
    const tpg = job.tilesPerWorkgroup;
    if (tpg !== undefined && !(Number.isInteger(tpg) && tpg >= 1 && tpg <= MAX_TILES_PER_WORKGROUP)) {
      throw new StemflowError('invalid', `tilesPerWorkgroup must be 1..${MAX_TILES_PER_WORKGROUP}.`);
    }
    const maxValues = job.maxValuesPerDispatch ?? 2 ** 28;
    const frameTiles = Math.ceil(frames / tileFrames);
    // 'vec4': blocks start at a multiple of TRANSPOSE_TILE_PIXELS (aligned rows), and the frame grid of a
    // dispatch may start up to 3 row words early (aligned vec4 stores), which can add a span.
    const vec4 = usesVec4(wordsPerFrame) && plan.wordsPerPixel % 4 === 0;
    const form = planes ? decodedPlanesLayout(plan.pixels) : undefined;
    if (form && !vec4) {
      throw new StemflowError(
        'invalid',
        'A transpose of byte planes needs resident rows of a multiple of 4 words.',
      );
    }
    const pipeline = pipelineFor(vec4);
    const rowValues = plan.valuesPerWord;
    const outWord = firstFrame / rowValues;

    // Packed layouts bind placeholders at the high plane and hot bitmap slots, and all but slotted ones at the
    // batch's hot bits (the shader never touches them; one each, as writable bindings must not alias); they go
    // back with the parameter buffers, destroyed after the submit.
    const unused = Array.from({ length: (parts.hi ? 0 : 2) + (scratch ? 0 : 1) }, () =>
      device.createBuffer({ label: 'detector-transpose unused', size: 16, usage: GPUBufferUsage.STORAGE }),
    );
    const spare = [...unused];
    const hiBinding = parts.hi ? null : spare.shift();
    const hotBinding = parts.hot ?? spare.shift();
    const batchHotBinding = scratch?.batchHot ?? spare.shift();
    const params = parts.lo.map((buffer, b) => {
      const { first, end } = bufferPixelRange(plan, b);
      const origin = vec4 ? first - (first % TRANSPOSE_TILE_PIXELS) : first;
      const blocks = Math.ceil((end - origin) / TRANSPOSE_TILE_PIXELS);
      const tiles =
        tpg ??
        Math.min(MAX_TILES_PER_WORKGROUP, Math.max(1, Math.floor((blocks * frameTiles) / TARGET_WORKGROUPS)));
      const spanFrames = tiles * tileFrames;
      const blocksPerChunk = Math.min(blocks, vec4 ? Math.floor(maxGroups / 2) : maxGroups);
      const spansPerChunk = Math.max(
        1,
        Math.min(
          Math.floor(maxGroups / blocksPerChunk) - (vec4 ? 1 : 0),
          Math.floor(maxValues / (blocksPerChunk * TRANSPOSE_TILE_PIXELS * spanFrames)),
        ),
      );
      const chunks: DispatchChunk[] = [];
      for (let block = 0; block < blocks; block += blocksPerChunk) {
        const pixelFirst = origin + block * TRANSPOSE_TILE_PIXELS;
        const pixelEnd = Math.min(end, pixelFirst + blocksPerChunk * TRANSPOSE_TILE_PIXELS);
        const pixelBlocks = Math.ceil((pixelEnd - pixelFirst) / TRANSPOSE_TILE_PIXELS);
        for (let f = 0; f < frames; f += spansPerChunk * spanFrames) {
          const frameEnd = Math.min(frames, f + spansPerChunk * spanFrames);
          // main_vec4's lead: frames before frame_first in the first output vec4 (shader: `lead`).
          const lead = vec4 ? ((outWord + f / rowValues) % 4) * rowValues : 0;
          const spans = Math.ceil((frameEnd - f + lead) / spanFrames);
          chunks.push({
            params: {
              pixel_first: pixelFirst,
              pixel_end: pixelEnd,
              pixel_begin: Math.max(first, pixelFirst),
              spans,
              row_first_pixel: first,
              buffer_rows: end - first,
              words_per_pixel: plan.wordsPerPixel,
              tile_words: plan.tileWords,
              words_per_frame: wordsPerFrame,
              frame_first: f,
              frame_end: frameEnd,
              tiles_per_group: tiles,
              out_word: outWord,
              first_frame: firstFrame,
              segment_frames: plan.segmentFrames,
              hot_words_per_pixel: plan.hotWordsPerPixel,
              hi_words_per_pixel: scratch ? scratch.wordsPerPixel : plan.wordsPerPixel,
              hi_word_base: scratch ? outWord : 0,
              hi_tile_words: scratch ? scratch.wordsPerPixel : plan.tileWords,
              batch_seg_first: scratch ? Math.floor(firstFrame / plan.segmentFrames) : 0,
              batch_hot_words: scratch ? scratch.batchHotWords : 0,
              high_word: form?.planeWords ?? 0,
              mark_word: form ? 2 * form.planeWords : 0,
              span_pixels: form?.spanElems ?? 0,
              // A vec4 across this buffer's end is also read by the next buffer's dispatch, which zeroes it.
              clear_end: end === plan.pixels ? 0xffffffff : end,
            },
            workgroups: pixelBlocks * spans,
          });
        }
      }
      return encodeChunks(
        encoder,
        {
          device,
          pipeline,
          layout,
          label: `detector-transpose buffer ${b}`,
          bindings: [
            { binding: 1, resource: { buffer: decoded } },
            { binding: 2, resource: { buffer } },
            { binding: 3, resource: { buffer: dpSums } },
            { binding: 4, resource: { buffer: scratch?.buffers[b] ?? parts.hi?.[b] ?? hiBinding! } },
            { binding: 5, resource: { buffer: hotBinding! } },
            { binding: 6, resource: { buffer: batchHotBinding! } },
            ...(audit
              ? [
                  { binding: 7, resource: { buffer: audit.buffer } },
                  { binding: 8, resource: { buffer: audit.flags } },
                ]
              : []),
          ],
        },
        chunks,
      );
    });
    return [...params, ...unused];
  };
  return {
    elemSize,
    histogram,
    planes,
    usesVec4,
    encode,
    run(job) {
      const encoder = device.createCommandEncoder({ label: 'detector-transpose' });
      const params = encode(encoder, job);
      device.queue.submit([encoder.finish()]);
      for (const p of params) p.destroy();
    },
  };
}
