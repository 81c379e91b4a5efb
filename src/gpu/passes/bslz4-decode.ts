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
import type { ElemSize } from '../../kernels/bslz4-decode.ts';
import { listBlocks } from '../../kernels/bslz4-parse.ts';
import { decodedPlanesLayout } from '../../kernels/decoded-planes.ts';
import source from '../../shaders/bslz4-decode.wgsl?raw';
import multiSource from '../../shaders/bslz4-decode-multi.wgsl?raw';
import { type DispatchChunk, encodeChunks } from '../chunked-dispatch.ts';
import { structLayout } from '../uniform-layout.ts';
import { checkAhead, checkDecodeJob, NO_PARSE_AHEAD } from './bslz4-decode-job.ts';
import { createDecodeLists, type DecodeLists } from './bslz4-decode-lists.ts';
import {
  checkDecodeWorkgroupMemory,
  decodeListBytes,
  decodeScratchBytes,
  dispatchWorkgroups,
  framesPerDispatch,
} from './bslz4-decode-memory.ts';
import {
  type DecodeOutput,
  decodeOutput,
  decodePipeline,
  PACK_FLAGS_WORKGROUP,
  PARSE_WORKGROUP,
  packFlagsPipeline,
  parsePipeline,
} from './bslz4-decode-pipeline.ts';
import { createDecodeScratch } from './bslz4-decode-scratch.ts';
import type { Bslz4DecodeJob, Bslz4DecodePass } from './bslz4-decode-types.ts';
import {
  checkDecodeStorageBuffers,
  DEFAULT_DECODE_VARIANT,
  type DecodeVariant,
  fusedDecodeVariant,
  parseDecodeVariant,
  readsLists,
} from './bslz4-decode-variants.ts';

export { createAuditBuffer, type DecodeResults, readDecodeResults } from './bslz4-decode-results.ts';
export type { Bslz4DecodeJob, Bslz4DecodePass } from './bslz4-decode-types.ts';

export const bslz4DecodeShader: string = source;
export const bslz4DecodeMultiShader: string = multiSource;

const layout = structLayout(source, 'Params');
const multiLayout = structLayout(multiSource, 'Params');
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
    auditBins = true,
    wordsPerFrame: jobWords,
    planes = false,
  }: {
    elemSize: ElemSize;
    /** Workgroup size of the fused shader (with stageWords: the fused shader, not `variant`). Default 64. */
    workgroupSize?: number;
    /** Words of workgroup memory staging a block's compressed bytes (default 1). */
    stageWords?: number;
    /** A variant name (bslz4-decode-variants.ts); default DEFAULT_DECODE_VARIANT. */
    variant?: string;
    /**
     * false: the audit counts the histogram's bins 0 and 256 only (the twin's `auditBins`); the load counts bins
     * 1..255 in its transpose (createDetectorTransposePass's `histogram`). Default true.
     */
    auditBins?: boolean;
    /**
     * Words a frame of the jobs to come: the pipeline of their output form (decodeOutput) is compiled now, not at
     * the first job. Default: the word form's.
     */
    wordsPerFrame?: number;
    /**
     * Every job's output as two byte planes a frame (src/kernels/decoded-planes.ts; 2-byte values, a multi
     * variant, jobs of decodedPlanesLayout's wordsPerFrame): the load's form, whose transpose reads half the
     * bytes. The decoded slot's high plane must be zero before each job (a new buffer, then the planes
     * transpose, which zeroes what it read).
     */
    planes?: boolean;
  },
): Bslz4DecodePass {
  if (![1, 2, 4].includes(elemSize)) {
    throw new StemflowError('invalid', `Element size ${elemSize} is not 1, 2 or 4 bytes.`);
  }
  const legacy = workgroupSize !== undefined || stageWords !== undefined;
  const v: DecodeVariant = legacy
    ? fusedDecodeVariant(workgroupSize ?? 64, stageWords ?? DEFAULT_STAGE_WORDS)
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
  checkDecodeWorkgroupMemory(v, device.limits.maxComputeWorkgroupStorageSize);
  // Per output form (decodeOutput: a job's frame size picks it) and with or without parsing ahead, compiled at the
  // first job that needs it (cached per device, and here so that a batch builds no cache key), the main form of
  // `wordsPerFrame` now.
  const pipelines = new Map<string, GPUComputePipeline>();
  const pipelineFor = (output: DecodeOutput, ahead: boolean) => {
    const key = `${output} ${ahead}`;
    let p = pipelines.get(key);
    if (!p) {
      p = decodePipeline(device, elemSize, v, ahead, auditBins, output);
      pipelines.set(key, p);
    }
    return p;
  };
  if (planes && (v.shader !== 'multi' || elemSize !== 2)) {
    throw new StemflowError(
      'invalid',
      `Byte planes are the output of the multi decode variants for 2-byte values (variant ${v.name}, ${elemSize}-byte values).`,
    );
  }
  const outputFor = (wordsPerFrame: number): DecodeOutput =>
    planes ? 'planes' : decodeOutput(v, elemSize, wordsPerFrame);
  pipelineFor(planes ? 'planes' : jobWords === undefined ? 'words' : outputFor(jobWords), false);
  const parse = v.list ? parsePipeline(device, elemSize, v.listCap, v.parseWords) : null;
  // Buffers replaced by larger ones, kept until `destroy` (encoders not yet submitted may use them).
  const retired: GPUBuffer[] = [];
  // The parse pass's lists (a list variant; bslz4-decode-lists.ts). Other multi variants bind the index there
  // (declared, never read).
  const decodeLists = createDecodeLists(device, v.listCap, (b) => retired.push(...b));
  const listsFor = decodeLists.ensure;
  const decodeScratch = createDecodeScratch(device, v, (b) => retired.push(b));
  const scratchFor = decodeScratch.ensure;

  // The checked dispatches of a job, its scratch (a multi variant) and its list set (a list variant).
  const prepare = (job: Bslz4DecodeJob) => {
    const { frameCount, pixels } = job;
    const { wordsPerFrame, slotBytes, firstFrame, indexBase } = checkDecodeJob(device, job, elemSize);
    const planesWords = planes ? decodedPlanesLayout(pixels).wordsPerFrame : wordsPerFrame;
    if (wordsPerFrame !== planesWords) {
      throw new StemflowError(
        'invalid',
        `A decode into byte planes writes ${planesWords} words a frame of ${pixels} pixels (the job gives ${wordsPerFrame}).`,
      );
    }
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
    const perFrame = listBlocks(pixels, elemSize);
    const set = job.listSet ?? 0;
    if (set !== 0 && set !== 1) throw new StemflowError('invalid', `List set ${set} is not 0 or 1.`);
    const chained = job.parsed === true || job.ahead !== undefined;
    const dispatches = Math.ceil(frameCount / perDispatch);
    if ((chained || set !== 0) && (!v.list || dispatches > 1)) {
      throw new StemflowError(
        'invalid',
        `Parsing ahead needs a list variant and one dispatch a job (variant '${v.name}', ${dispatches} dispatches).`,
      );
    }
    // The parse pass writes the lists (every list variant); the list shader reads them (not `listx`).
    const listBuffers = v.list
      ? listsFor(Math.min(perDispatch, frameCount) * perFrame, set + 1, chained)
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
          index_base: indexBase,
          ...NO_PARSE_AHEAD,
          list_entry0: set * (listBuffers?.entries ?? 0),
        },
        workgroups,
      });
    }
    return { chunks, scratchAt, perFrame, listBuffers, output: outputFor(wordsPerFrame) };
  };

  const parseBindings = (job: Bslz4DecodeJob, lists: DecodeLists): GPUBindGroupEntry[] => [
    { binding: 1, resource: { buffer: job.compressed } },
    { binding: 2, resource: { buffer: job.index } },
    { binding: 9, resource: { buffer: lists.seqs } },
    { binding: 10, resource: { buffer: lists.info } },
  ];
  const parseWorkgroups = (c: DispatchChunk, perFrame: number) =>
    Math.ceil(((c.params.frame_end - c.params.frame_start) * perFrame) / PARSE_WORKGROUP);

  const encodeParse = (encoder: GPUCommandEncoder, job: Bslz4DecodeJob): GPUBuffer => {
    const { chunks, perFrame, listBuffers } = prepare({ ...job, parsed: true });
    if (!parse || !listBuffers) {
      throw new StemflowError('invalid', `Decode variant '${v.name}' has no lists.`);
    }
    return encodeChunks(
      encoder,
      {
        device,
        pipeline: parse,
        layout: multiLayout,
        label: 'bslz4-parse',
        bindings: parseBindings(job, listBuffers),
      },
      chunks.map((c) => ({ ...c, workgroups: parseWorkgroups(c, perFrame) })),
    );
  };

  const encode = (encoder: GPUCommandEncoder, job: Bslz4DecodeJob): GPUBuffer => {
    const { chunks, scratchAt, perFrame, listBuffers, output } = prepare(job);
    const { ahead } = job;
    if (ahead && listBuffers && chunks.length === 1) {
      // The other list set, parsed by the last workgroups of the dispatch (one thread a block): they fill the
      // decode's tail, where its last frames leave SMs idle (first: 102.6 ms a scan on the H200, last: 97.7;
      // docs/performance.md, seventeenth session).
      if (!readsLists(v)) {
        throw new StemflowError('invalid', `Decode variant '${v.name}' does not read lists to parse ahead.`);
      }
      const { frameCount: n, indexBase, slotBytes } = checkAhead(job, ahead, perFrame, listBuffers.entries);
      const c = chunks[0];
      const groups = Math.ceil((n * perFrame) / size);
      c.params = {
        ...c.params,
        ahead_groups: groups,
        ahead_frames: n,
        ahead_index_base: indexBase,
        ahead_slot_bytes: slotBytes,
        ahead_list0: (1 - (job.listSet ?? 0)) * listBuffers.entries,
      };
      c.workgroups += groups;
      if (c.workgroups > device.limits.maxComputeWorkgroupsPerDimension) {
        throw new StemflowError(
          'invalid',
          `A decode dispatch that parses ahead needs ${c.workgroups} workgroups, more than ${device.limits.maxComputeWorkgroupsPerDimension}.`,
        );
      }
    }
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
    // The multi shader's audit reads the pixel flags as bits, packed into its scratch by the job's first
    // dispatch unless an earlier job's bits are still there (decodeScratch.repack).
    const repack = scratchAt !== undefined && decodeScratch.repack(job, scratchAt);
    const first =
      scratchAt && repack
        ? {
            pipeline: packFlagsPipeline(device),
            bindings: [
              { binding: 3, resource: { buffer: job.flags } },
              { binding: 8, resource: { buffer: scratchAt.buffer } },
            ],
            workgroups: Math.ceil(Math.ceil(job.pixels / 32) / PACK_FLAGS_WORKGROUP),
          }
        : undefined;
    const before =
      parse && listBuffers && !job.parsed
        ? {
            pipeline: parse,
            bindings: parseBindings(job, listBuffers),
            workgroups: (c: DispatchChunk) => parseWorkgroups(c, perFrame),
          }
        : undefined;
    return encodeChunks(
      encoder,
      {
        device,
        pipeline: pipelineFor(output, ahead !== undefined),
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
    encodeParse,
    listBuffers: decodeLists.current,
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
      const sets = options.listSets ?? 1;
      if (sets !== 1 && sets !== 2) {
        throw new StemflowError('invalid', `A decode pass keeps 1 or 2 list sets, not ${sets}.`);
      }
      if (v.list) {
        const perDispatch = framesPerDispatch(v, options.maxFramesPerDispatch);
        listsFor(Math.min(perDispatch, frames) * listBlocks(options.pixels, elemSize), sets, false);
      }
      return (
        bytes +
        (sets - 1) *
          decodeListBytes(
            v,
            Math.min(frames, framesPerDispatch(v, options.maxFramesPerDispatch)),
            options.pixels,
            elemSize,
          )
      );
    },
    destroy() {
      for (const b of retired.splice(0)) b.destroy();
      decodeScratch.destroy();
      decodeLists.destroy();
    },
  };
}
