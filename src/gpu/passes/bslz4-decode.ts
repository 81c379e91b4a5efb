/**
 * GPU pass: fused bitshuffle/LZ4 decode + audit of a batch of frames (one chunk per frame). Shader:
 * src/shaders/bslz4-decode.wgsl. CPU twin: src/kernels/bslz4-decode.ts (same error codes,
 * src/kernels/decode-errors.ts). Buffer formats: docs/pass-graph.md.
 *
 * The caller (the load orchestrator) owns every buffer; `encode` only records dispatches (no host waits).
 * Frames are split into dispatches of at most `maxFramesPerDispatch`; in each, one workgroup per frame by
 * default (or `workgroupsPerDispatch` persistent workgroups taking frames in a grid stride) decodes a frame's
 * blocks one after another from a staged copy of each block's compressed bytes in workgroup memory, and adds
 * a decoded frame's counts to the audit. Blocks larger than 8 KiB (non-default bitshuffle block sizes) are
 * reported as UNSUPPORTED_BLOCK_SIZE: decode those frames on the CPU.
 *
 * `variant` (bslz4-decode-variants.ts, default DEFAULT_DECODE_VARIANT) picks the shader and its layout; the
 * multi shader (src/shaders/bslz4-decode-multi.wgsl) decodes several blocks of a frame at once, optionally into
 * a global scratch buffer that the pass owns (8 KiB per block in flight; `destroy` frees it).
 */
import { StemflowError } from '../../errors.ts';
import { AUDIT_LAYOUT, checkDecodeParams, type ElemSize } from '../../kernels/bslz4-decode.ts';
import { listBlocks } from '../../kernels/bslz4-parse.ts';
import source from '../../shaders/bslz4-decode.wgsl?raw';
import multiSource from '../../shaders/bslz4-decode-multi.wgsl?raw';
import { checkBindable, type DispatchChunk, encodeChunks } from '../chunked-dispatch.ts';
import { structLayout } from '../uniform-layout.ts';
import {
  BLOCK_WORDS,
  decodePipeline,
  PACK_FLAGS_WORKGROUP,
  PARSE_WORKGROUP,
  packFlagsPipeline,
  parsePipeline,
} from './bslz4-decode-pipeline.ts';
import {
  checkDecodeStorageBuffers,
  DEFAULT_DECODE_VARIANT,
  type DecodeVariant,
  decodeBlockScratchBytes,
  decodeFlagBytes,
  decodeScratchBytes,
  dispatchWorkgroups,
  framesPerDispatch,
  framesPerWorkgroup,
  parseDecodeVariant,
  readsLists,
} from './bslz4-decode-variants.ts';

export { createAuditBuffer, type DecodeResults, readDecodeResults } from './bslz4-decode-results.ts';

export const bslz4DecodeShader: string = source;
export const bslz4DecodeMultiShader: string = multiSource;

export interface Bslz4DecodeJob {
  /** The batch's chunks back to back (bytes in u32 words), STORAGE. */
  compressed: GPUBuffer;
  /** Bytes of `compressed` that hold data (default its size); index entries must stay inside. */
  compressedBytes?: number;
  /** (byteOffset, byteSize) u32 pairs per batch frame, STORAGE. */
  index: GPUBuffer;
  /** u32 per detector pixel, nonzero = flagged (excluded from totals and audit), STORAGE. */
  flags: GPUBuffer;
  /** frameCount * wordsPerFrame u32 words, STORAGE. */
  decoded: GPUBuffer;
  /** u32 per frame at firstFrame + f, STORAGE. */
  errors: GPUBuffer;
  /** (lo, hi) u32 pair per frame at firstFrame + f, STORAGE. */
  totals: GPUBuffer;
  /** AUDIT_LAYOUT.words u32 words (createAuditBuffer), accumulated into; clear it once per load. */
  audit: GPUBuffer;
  frameCount: number;
  /** Pixels per frame. */
  pixels: number;
  /** Index in `errors` and `totals` of the batch's first frame (its global frame number). Default 0. */
  firstFrame?: number;
  /** Default ceil(pixels * elemSize / 4); extra words are written 0. */
  wordsPerFrame?: number;
  /** Frames per dispatch (default 4096). */
  maxFramesPerDispatch?: number;
  /** Workgroups per dispatch (default one per frame; fewer are persistent and take frames in a grid stride). */
  workgroupsPerDispatch?: number;
}

export interface Bslz4DecodePass {
  readonly elemSize: ElemSize;
  readonly workgroupSize: number;
  readonly variant: DecodeVariant;
  /** Records the pass into `encoder`; destroy the returned parameter buffer after submitting. */
  encode(encoder: GPUCommandEncoder, job: Bslz4DecodeJob): GPUBuffer;
  /** Encodes and submits the pass on its own. */
  run(job: Bslz4DecodeJob): void;
  /**
   * Allocates now the scratch (and a list variant's lists, for frames of `pixels` pixels) that batches of up to
   * `frames` frames need (call it inside the caller's out-of-memory scope); returns its bytes
   * (decodeScratchBytes, what the memory plans count).
   */
  reserve(
    frames: number,
    options: { pixels: number; maxFramesPerDispatch?: number; workgroupsPerDispatch?: number },
  ): number;
  /** Frees the scratch buffer of a 'scratch' variant (after the submitted work; a later encode makes another). */
  destroy(): void;
}

const layout = structLayout(source, 'Params');
const multiLayout = structLayout(multiSource, 'Params');
const U32_MAX = 0xffffffff;
/** Workgroup memory of the shader besides the stage: the 8 KiB block, the frame histogram, max and sum. */
const FIXED_WORKGROUP_BYTES = 8192 + 4 * 257 + 12;
/** Workgroup memory of the multi shader besides stages and blocks: histogram, max, sum, round verdict. */
const MULTI_FIXED_BYTES = 4 * 257 + 12 + 4;
/**
 * Default staged compressed words per block: one. Workgroup memory per workgroup bounds how many frames an SM
 * decodes at once, which matters more than where the token walk reads its bytes (H200, 4,096 frames of
 * 192x192 uint16: 64 lanes and 1 word 5.65 ms; 128 words 6.52 ms; 1,024 words 10.5 ms at 32 lanes).
 */
const DEFAULT_STAGE_WORDS = 1;

export function createBslz4DecodePass(
  device: GPUDevice,
  {
    elemSize,
    workgroupSize,
    stageWords,
    variant,
  }: {
    elemSize: ElemSize;
    /** Workgroup size of the fused shader (with stageWords: the fused shader, not `variant`). Default 64. */
    workgroupSize?: number;
    /** Words of workgroup memory staging a block's compressed bytes (default 1). */
    stageWords?: number;
    /** A variant name (bslz4-decode-variants.ts); default DEFAULT_DECODE_VARIANT. */
    variant?: string;
  },
): Bslz4DecodePass {
  if (![1, 2, 4].includes(elemSize)) {
    throw new StemflowError('invalid', `Element size ${elemSize} is not 1, 2 or 4 bytes.`);
  }
  const legacy = workgroupSize !== undefined || stageWords !== undefined;
  const v: DecodeVariant = legacy
    ? {
        name: `wg${workgroupSize ?? 64}-stage${stageWords ?? DEFAULT_STAGE_WORDS}`,
        shader: 'fused',
        lanes: workgroupSize ?? 64,
        groups: 1,
        stageWords: stageWords ?? DEFAULT_STAGE_WORDS,
        scratch: false,
        window: false,
        keep: false,
        pattern: false,
        unshuffleWords: false,
        epochs: 8,
        list: false,
        listCap: 0,
        listRead: 'stage',
        parseWords: 1,
        frameGroups: false,
      }
    : parseDecodeVariant(variant ?? DEFAULT_DECODE_VARIANT);
  const size = v.lanes * v.groups;
  if (
    !Number.isInteger(size) ||
    size < 1 ||
    size > device.limits.maxComputeInvocationsPerWorkgroup ||
    size > device.limits.maxComputeWorkgroupSizeX
  ) {
    throw new StemflowError('invalid', `Workgroup size ${size} is not within the GPU limits.`);
  }
  checkDecodeStorageBuffers(v, device.limits.maxStorageBuffersPerShaderStage);
  const multi = v.shader === 'multi';
  const fixedBytes = multi
    ? MULTI_FIXED_BYTES * framesPerWorkgroup(v) +
      4 * v.groups +
      (v.frameGroups ? 4 * v.groups + 4 : 0) +
      (v.scratch ? 4 : 4 * BLOCK_WORDS * v.groups) +
      (v.list && v.listRead === 'stage' ? 8 * v.listCap * v.groups : 8)
    : FIXED_WORKGROUP_BYTES;
  const maxStage = Math.floor((device.limits.maxComputeWorkgroupStorageSize - fixedBytes) / 4 / v.groups);
  if (!Number.isInteger(v.stageWords) || v.stageWords < 1 || v.stageWords > maxStage) {
    throw new StemflowError(
      'invalid',
      `A stage of ${v.stageWords} words is not within the GPU's workgroup memory (variant ${v.name}).`,
    );
  }
  const compiled = decodePipeline(device, elemSize, v);
  const parse = v.list ? parsePipeline(device, elemSize, v.listCap, v.parseWords) : null;
  // The parse pass's lists (a list variant) for the block entries of one dispatch, grown when a dispatch needs
  // more (the bytes decodeListBytes counts). Other multi variants bind the index there (declared, never read).
  let lists: { seqs: GPUBuffer; info: GPUBuffer; entries: number } | null = null;
  const listsFor = (entries: number) => {
    if (!lists || lists.entries < entries) {
      if (lists) retired.push(lists.seqs, lists.info);
      const n = Math.max(1, entries);
      lists = {
        seqs: device.createBuffer({
          label: 'bslz4-parse sequences',
          size: Math.max(16, n * v.listCap * 8),
          usage: GPUBufferUsage.STORAGE,
        }),
        info: device.createBuffer({
          label: 'bslz4-parse block verdicts',
          size: Math.max(16, n * 8),
          usage: GPUBufferUsage.STORAGE,
        }),
        entries: n,
      };
      checkBindable(device, lists.seqs, 'decode sequence list');
    }
    return lists;
  };
  // The multi shader's scratch: 8 KiB per group of each workgroup of a dispatch (a word when not SCRATCH),
  // then the pixel flags as bits from word `flagBase`. A smaller one is kept until `destroy` (encoders not yet
  // submitted may use it).
  let scratch: GPUBuffer | null = null;
  const retired: GPUBuffer[] = [];
  const scratchFor = (
    frames: number,
    pixels: number,
    options: { maxFramesPerDispatch?: number; workgroupsPerDispatch?: number },
  ) => {
    const blockBytes = Math.max(
      4,
      decodeBlockScratchBytes(v, frames, {
        ...options,
        maxWorkgroups: device.limits.maxComputeWorkgroupsPerDimension,
      }),
    );
    const bytes = blockBytes + decodeFlagBytes(v, pixels);
    if (!scratch || scratch.size < bytes) {
      if (scratch) retired.push(scratch);
      scratch = device.createBuffer({
        label: 'bslz4-decode scratch',
        size: bytes,
        usage: GPUBufferUsage.STORAGE,
      });
    }
    checkBindable(device, scratch, 'decode scratch');
    return { buffer: scratch, flagBase: blockBytes / 4 };
  };

  const encode = (encoder: GPUCommandEncoder, job: Bslz4DecodeJob): GPUBuffer => {
    const { frameCount, pixels, firstFrame = 0 } = job;
    const wordsPerFrame = checkDecodeParams({
      frameCount,
      pixels,
      elemSize,
      wordsPerFrame: job.wordsPerFrame,
    });
    const slotBytes = job.compressedBytes ?? Math.min(job.compressed.size, U32_MAX);
    if (
      !Number.isInteger(slotBytes) ||
      slotBytes < 0 ||
      slotBytes > job.compressed.size ||
      slotBytes > U32_MAX
    ) {
      throw new StemflowError('invalid', `compressedBytes ${slotBytes} does not fit the compressed buffer.`);
    }
    if (!Number.isInteger(firstFrame) || firstFrame < 0) {
      throw new StemflowError('invalid', `firstFrame ${firstFrame} is not a frame index.`);
    }
    const need = (buffer: GPUBuffer, bytes: number, what: string) => {
      if (buffer.size < bytes) {
        throw new StemflowError('invalid', `The ${what} buffer holds ${buffer.size} bytes, not ${bytes}.`);
      }
      checkBindable(device, buffer, what);
    };
    need(job.compressed, 4, 'compressed slot');
    need(job.index, Math.max(8, frameCount * 8), 'index');
    need(job.flags, pixels * 4, 'pixel flags');
    need(job.decoded, Math.max(4, frameCount * wordsPerFrame * 4), 'decoded slot');
    need(job.errors, Math.max(4, (firstFrame + frameCount) * 4), 'errors');
    need(job.totals, Math.max(8, (firstFrame + frameCount) * 8), 'frame totals');
    need(job.audit, AUDIT_LAYOUT.words * 4, 'audit');
    const perDispatch = framesPerDispatch(v, job.maxFramesPerDispatch);
    const maxGroups = Math.min(
      Math.max(1, Math.floor(job.workgroupsPerDispatch ?? v.workgroups ?? perDispatch)),
      device.limits.maxComputeWorkgroupsPerDimension,
    );
    const scratchAt = multi
      ? scratchFor(frameCount, pixels, {
          maxFramesPerDispatch: perDispatch,
          workgroupsPerDispatch: job.workgroupsPerDispatch,
        })
      : undefined;
    const chunks: DispatchChunk[] = [];
    for (let start = 0; start < frameCount; start += perDispatch) {
      const frames = Math.min(perDispatch, frameCount - start);
      const workgroups = Math.min(dispatchWorkgroups(v, frames), maxGroups);
      chunks.push({
        params: {
          frame_start: start,
          frame_end: start + frames,
          pixels,
          expected_bytes: pixels * elemSize,
          words_per_frame: wordsPerFrame,
          slot_bytes: slotBytes,
          first_frame: firstFrame,
          flag_base: scratchAt?.flagBase ?? 0,
        },
        workgroups,
      });
    }
    const perFrame = listBlocks(pixels, elemSize);
    // The parse pass writes the lists (every list variant); the list shader reads them (not `listx`).
    const listBuffers = v.list ? listsFor(Math.min(perDispatch, frameCount) * perFrame) : undefined;
    const listBindings: GPUBindGroupEntry[] =
      listBuffers && readsLists(v)
        ? [
            { binding: 9, resource: { buffer: listBuffers.seqs } },
            { binding: 10, resource: { buffer: listBuffers.info } },
          ]
        : [];
    const scratchBinding: GPUBindGroupEntry[] = scratchAt
      ? [{ binding: 8, resource: { buffer: scratchAt.buffer } }, ...listBindings]
      : [];
    // The multi shader's audit reads the pixel flags as bits, packed once a job into its scratch.
    const first = scratchAt
      ? {
          pipeline: packFlagsPipeline(device),
          bindings: [
            { binding: 3, resource: { buffer: job.flags } },
            { binding: 8, resource: { buffer: scratchAt.buffer } },
          ],
          workgroups: Math.ceil(Math.ceil(pixels / 32) / PACK_FLAGS_WORKGROUP),
        }
      : undefined;
    const before =
      parse && listBuffers
        ? {
            pipeline: parse,
            bindings: [
              { binding: 1, resource: { buffer: job.compressed } },
              { binding: 2, resource: { buffer: job.index } },
              { binding: 9, resource: { buffer: listBuffers.seqs } },
              { binding: 10, resource: { buffer: listBuffers.info } },
            ],
            workgroups: (c: DispatchChunk) =>
              Math.ceil(((c.params.frame_end - c.params.frame_start) * perFrame) / PARSE_WORKGROUP),
          }
        : undefined;
    return encodeChunks(
      encoder,
      {
        device,
        pipeline: compiled,
        layout: multi ? multiLayout : layout,
        label: 'bslz4-decode',
        bindings: [
          { binding: 1, resource: { buffer: job.compressed } },
          { binding: 2, resource: { buffer: job.index } },
          { binding: 3, resource: { buffer: job.flags } },
          { binding: 4, resource: { buffer: job.decoded } },
          { binding: 5, resource: { buffer: job.errors } },
          { binding: 6, resource: { buffer: job.totals } },
          { binding: 7, resource: { buffer: job.audit } },
          ...scratchBinding,
        ],
        before,
        first,
      },
      chunks,
    );
  };

  return {
    elemSize,
    workgroupSize: size,
    variant: v,
    encode,
    run(job) {
      const encoder = device.createCommandEncoder({ label: 'bslz4-decode' });
      const params = encode(encoder, job);
      device.queue.submit([encoder.finish()]);
      params.destroy();
    },
    reserve(frames, options) {
      const bytes = decodeScratchBytes(v, frames, {
        ...options,
        elemSize,
        maxWorkgroups: device.limits.maxComputeWorkgroupsPerDimension,
      });
      if (multi) scratchFor(frames, options.pixels, options);
      if (v.list) {
        const perDispatch = framesPerDispatch(v, options.maxFramesPerDispatch);
        listsFor(Math.min(perDispatch, frames) * listBlocks(options.pixels, elemSize));
      }
      return bytes;
    },
    destroy() {
      for (const b of retired.splice(0)) b.destroy();
      scratch?.destroy();
      scratch = null;
      lists?.seqs.destroy();
      lists?.info.destroy();
      lists = null;
    },
  };
}
