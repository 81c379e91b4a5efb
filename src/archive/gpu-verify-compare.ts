/**
 * The compare pass of the GPU verifier (gpu-verify.ts): tans-compare.wgsl decodes every lane of a record and
 * compares every value with the reference frames; mismatch counts per block and lane error codes stay on the
 * GPU. CPU twin: `tansCompare` (tans-decode.ts). `tally` turns the counts read back into the report.
 */
import { readBuffer } from '../compute/readback';
import { StemflowError } from '../errors';
import { checkBindable, type DispatchChunk, encodeChunks } from '../gpu/chunked-dispatch';
import { structLayout } from '../gpu/uniform-layout';
import { AUDIT_LAYOUT, auditFromWords } from '../kernels/bslz4-decode';
import source from '../shaders/tans-compare.wgsl?raw';
import type { ArchiveAcquisition } from './reader';
import type { VerifyReport } from './verify';

const layout = structLayout(source, 'Params');
const WORKGROUP = 64;
/**
 * Lanes per compare dispatch (default). Each lane keeps one cache line of its stream and one of its reference
 * frame in use while it walks its slice, and a warp's 32 lanes read 32 different lines. At 65,536 lanes a
 * dispatch an H200 holds ~500 lanes per SM, ~128 KB of lines, which can stay in L1 while a line's values are
 * read; a whole record in one dispatch (262,144 lanes at 16 lanes a frame, ~2,000 resident per SM) needs ~4x that,
 * so most loads go to L2: compare took 18.2 ms a record instead of 8.4 ms (commit 4fd47ce; the L1 footprint is
 * the likely cause). `bench convert` measures 32,768 to 262,144.
 */
export const COMPARE_LANES_PER_DISPATCH = 65536;

export interface TansComparePass {
  encode(
    encoder: GPUCommandEncoder,
    job: {
      data: GPUBuffer;
      dataWords: number;
      offsets: GPUBuffer;
      cells: GPUBuffer;
      classMap: GPUBuffer;
      reference: GPUBuffer;
      /** Mismatches per block (atomic adds from blockBase). */
      mismatches: GPUBuffer;
      /** One word: lanes with an error (atomic adds). */
      errors: GPUBuffer;
      frames: number;
      slices: number;
      slicePixels: number;
      pixels: number;
      wordsPerFrame: number;
      blockFrames: number;
      blockBase: number;
      cols: number;
      /**
       * A piece of a record (default 0, 0): its first lane's index in `offsets` (the record's), and the
       * record's word at which `data` (the piece's words) starts.
       */
      offsetBase?: number;
      wordBase?: number;
    },
  ): GPUBuffer;
}

interface CompareOptions {
  bits: 8 | 16 | 32;
  tableLog: number;
  tokens: number;
  lanesPerDispatch?: number;
}

function compareDescriptor({ bits, tableLog, tokens }: CompareOptions, device: GPUDevice) {
  return {
    label: `tans-compare u${bits}`,
    layout: 'auto',
    compute: {
      module: device.createShaderModule({ label: 'tans-compare.wgsl', code: source }),
      entryPoint: 'main',
      constants: { WORKGROUP_SIZE: WORKGROUP, TABLE_LOG: tableLog, BITS: bits, TOKENS: tokens },
    },
  } satisfies GPUComputePipelineDescriptor;
}

export function createTansComparePass(device: GPUDevice, options: CompareOptions): TansComparePass {
  checkLanes(options.lanesPerDispatch);
  return comparePass(
    device,
    device.createComputePipeline(compareDescriptor(options, device)),
    options.lanesPerDispatch,
  );
}

/** Compiled compare pipelines per device, by constants (a verification after the first compiles nothing). */
const pipelines = new WeakMap<GPUDevice, Map<string, Promise<GPUComputePipeline>>>();

/**
 * As createTansComparePass, with the pipeline compiled asynchronously (start it early, await it when needed)
 * once per device and constants.
 */
export async function createTansComparePassAsync(
  device: GPUDevice,
  options: CompareOptions,
): Promise<TansComparePass> {
  checkLanes(options.lanesPerDispatch);
  let cache = pipelines.get(device);
  if (!cache) {
    cache = new Map();
    pipelines.set(device, cache);
  }
  const key = `${options.bits} ${options.tableLog} ${options.tokens}`;
  let pipeline = cache.get(key);
  if (!pipeline) {
    pipeline = device.createComputePipelineAsync(compareDescriptor(options, device));
    cache.set(key, pipeline);
    pipeline.catch(() => cache.delete(key)); // a failed compile is not kept
  }
  return comparePass(device, await pipeline, options.lanesPerDispatch);
}

function checkLanes(lanesPerDispatch = COMPARE_LANES_PER_DISPATCH): void {
  if (
    !Number.isInteger(lanesPerDispatch) ||
    lanesPerDispatch < WORKGROUP ||
    lanesPerDispatch % WORKGROUP !== 0
  )
    throw new StemflowError(
      'invalid',
      `Compare lanes per dispatch must be a positive multiple of ${WORKGROUP} (got ${lanesPerDispatch}).`,
    );
}

function comparePass(
  device: GPUDevice,
  pipeline: GPUComputePipeline,
  lanesPerDispatch = COMPARE_LANES_PER_DISPATCH,
): TansComparePass {
  return {
    encode(encoder, job) {
      for (const [b, what] of [
        [job.data, 'record data'],
        [job.reference, 'reference'],
      ] as const) {
        checkBindable(device, b, what);
      }
      const lanes = job.frames * job.slices;
      const chunks: DispatchChunk[] = [];
      for (let first = 0; first < lanes; first += lanesPerDispatch) {
        const count = Math.min(lanesPerDispatch, lanes - first);
        chunks.push({
          params: {
            lane_first: first,
            lane_count: count,
            frames: job.frames,
            slices: job.slices,
            slice_pixels: job.slicePixels,
            pixels: job.pixels,
            words_per_frame: job.wordsPerFrame,
            block_frames: job.blockFrames,
            block_base: job.blockBase,
            data_words: job.dataWords,
            cols: job.cols,
            offset_base: job.offsetBase ?? 0,
            word_base: job.wordBase ?? 0,
          },
          workgroups: Math.ceil(count / WORKGROUP),
        });
      }
      return encodeChunks(
        encoder,
        {
          device,
          pipeline,
          layout,
          label: 'tans-compare',
          bindings: [
            { binding: 1, resource: { buffer: job.data } },
            { binding: 2, resource: { buffer: job.offsets } },
            { binding: 3, resource: { buffer: job.cells } },
            { binding: 4, resource: { buffer: job.classMap } },
            { binding: 5, resource: { buffer: job.reference } },
            { binding: 6, resource: { buffer: job.mismatches } },
            { binding: 7, resource: { buffer: job.errors } },
          ],
        },
        chunks,
      );
    },
  };
}

/** The report from the mismatch counts per block, lane error codes and frame decode verdicts. */
/** What a verification reads back: counts only. */
export interface VerifyCounts {
  /** Mismatches per block. */
  mismatches: Uint32Array;
  /** Lanes with an error. */
  laneErrors: number;
  /** Source frames the GPU decoder refused (its audit's failed frames). */
  sourceErrors: number;
}

/** Reads the counts back: `blocks` words of mismatches, the lane-error word, the decode audit. */
export async function readVerifyCounts(
  device: GPUDevice,
  buffers: { mismatches: GPUBuffer; laneErrors: GPUBuffer; audit: GPUBuffer },
  blocks: number,
): Promise<VerifyCounts> {
  const [mismatches, laneErrors, audit] = await Promise.all([
    readU32(device, buffers.mismatches, blocks),
    readU32(device, buffers.laneErrors, 1),
    readU32(device, buffers.audit, AUDIT_LAYOUT.words),
  ]);
  return { mismatches, laneErrors: laneErrors[0], sourceErrors: auditFromWords(audit).failedFrames };
}

/** The report from the counts read back. */
export function tally(
  acq: ArchiveAcquisition,
  { mismatches: mm, laneErrors, sourceErrors }: VerifyCounts,
): Omit<VerifyReport, 'ms'> & { sourceErrors: number } {
  const { info, geometry } = acq;
  const badBlocks: VerifyReport['badBlocks'] = [];
  let total = 0;
  let b = 0;
  for (const rec of acq.records) {
    for (let first = 0; first < rec.frames; first += info.blockFrames, b++) {
      if (mm[b] === 0) continue;
      total += mm[b];
      badBlocks.push({
        firstFrame: rec.firstFrame + first,
        frames: Math.min(info.blockFrames, rec.frames - first),
        mismatches: mm[b],
      });
    }
  }
  return {
    acquisition: info.name,
    compared: info.scan[0] * info.scan[1] * geometry.pixels,
    mismatches: total,
    badBlocks,
    laneErrors,
    sourceErrors,
  };
}

/** `count` u32 words of a buffer (COPY_SRC), through the project's one readback helper. */
export async function readU32(device: GPUDevice, buffer: GPUBuffer, count: number): Promise<Uint32Array> {
  const bytes = await readBuffer(device, buffer, 0, count * 4);
  return new Uint32Array(bytes.buffer, bytes.byteOffset, count);
}
