/**
 * GPU passes of the archive encoder: `tans-stats.wgsl` (per-pixel sums and audit; (class, token) histogram)
 * and `tans-encode.wgsl` (lane encoding into scratch; compaction). CPU twins: tans-stats.ts, tans-encode.ts.
 * The caller owns every buffer; `encode*` only record dispatches (no host waits) and return the parameter
 * buffer to destroy after submitting. gpu-encoder.ts chains them into a RecordEncoder.
 */
import { StemflowError } from '../errors';
import { checkBindable, type DispatchChunk, encodeChunks } from '../gpu/chunked-dispatch';
import { structLayout } from '../gpu/uniform-layout';
import encodeSource from '../shaders/tans-encode.wgsl?raw';
import statsSource from '../shaders/tans-stats.wgsl?raw';
import { NEIGHBOUR_BUCKETS } from './hybrid-uint';

const statsLayout = structLayout(statsSource, 'Params');
const encodeLayout = structLayout(encodeSource, 'Params');

const STATS_WORKGROUP = 256;
/** Frames one stats invocation walks for one pixel. */
const SUM_FRAMES_PER_GROUP = 64;
const HISTOGRAM_FRAMES_PER_GROUP = 256;
const ENCODE_WORKGROUP = 64;
const COMPACT_WORKGROUP = 64;
/** Workgroups per dispatch (below maxComputeWorkgroupsPerDimension's default 65,535). */
const MAX_GROUPS = 32768;

/** Words of a lane's scratch region: its raw size plus the 2 words one value may write past the check. */
export function laneStride(maxRawWords: number): number {
  return maxRawWords + 2;
}

export interface StatsJob {
  /** Decoded values, frame-major, `wordsPerFrame` words per frame. */
  values: GPUBuffer;
  frames: number;
  pixels: number;
  wordsPerFrame: number;
  /** Detector columns and pixels per lane (the histogram's neighbour contexts). */
  cols: number;
  slicePixels: number;
}

export interface TansStatsPass {
  /** Adds per-pixel (lo, hi) sums into `sums` and [max, above255] into `audit` (zero both first). */
  encodeSums(encoder: GPUCommandEncoder, job: StatsJob & { sums: GPUBuffer; audit: GPUBuffer }): GPUBuffer;
  /** Adds (context, token) counts into `histogram` (zero it first); `classMap` holds a u32 class per pixel. */
  encodeHistogram(
    encoder: GPUCommandEncoder,
    job: StatsJob & { classMap: GPUBuffer; histogram: GPUBuffer },
  ): GPUBuffer;
}

interface StatsOptions {
  bits: 8 | 16 | 32;
  tokens: number;
  classes: number;
  /** Use a workgroup histogram when it fits (default); false: global atomics only (tests both paths). */
  sharedHistogram?: boolean;
}

function statsPipelines(device: GPUDevice, { bits, tokens, classes, sharedHistogram = true }: StatsOptions) {
  const bins = classes * NEIGHBOUR_BUCKETS * tokens;
  // The workgroup histogram when it fits the GPU's workgroup memory; global atomics otherwise.
  const fits = bins * 4 <= device.limits.maxComputeWorkgroupStorageSize;
  const sharedBins = sharedHistogram && fits && bins > 1 ? bins : 1;
  const module = device.createShaderModule({ label: 'tans-stats.wgsl', code: statsSource });
  const descriptor = (
    entryPoint: string,
    constants: Record<string, number>,
  ): GPUComputePipelineDescriptor => ({
    label: `tans-stats ${entryPoint} u${bits}`,
    layout: 'auto',
    compute: {
      module,
      entryPoint,
      constants: { WORKGROUP_SIZE: STATS_WORKGROUP, BITS: bits, ...constants },
    },
  });
  return {
    bins,
    sums: descriptor('main', {}),
    histogram: descriptor('token_histogram', { TOKENS: tokens, SHARED_BINS: sharedBins }),
  };
}

export function createTansStatsPass(device: GPUDevice, options: StatsOptions): TansStatsPass {
  const d = statsPipelines(device, options);
  return statsPass(
    device,
    d.bins,
    device.createComputePipeline(d.sums),
    device.createComputePipeline(d.histogram),
  );
}

/** As createTansStatsPass, with the pipelines compiled asynchronously (start it early, await it when needed). */
export async function createTansStatsPassAsync(
  device: GPUDevice,
  options: StatsOptions,
): Promise<TansStatsPass> {
  const d = statsPipelines(device, options);
  const [sums, histogram] = await Promise.all([
    device.createComputePipelineAsync(d.sums),
    device.createComputePipelineAsync(d.histogram),
  ]);
  return statsPass(device, d.bins, sums, histogram);
}

function statsPass(
  device: GPUDevice,
  bins: number,
  sums: GPUComputePipeline,
  histogram: GPUComputePipeline,
): TansStatsPass {
  const chunks = (job: StatsJob, framesPerGroup: number): DispatchChunk[] => {
    checkBindable(device, job.values, 'decoded values');
    const invocations = job.pixels * Math.ceil(job.frames / framesPerGroup);
    const out: DispatchChunk[] = [];
    for (let first = 0; first < invocations; first += MAX_GROUPS * STATS_WORKGROUP) {
      const count = Math.min(MAX_GROUPS * STATS_WORKGROUP, invocations - first);
      out.push({
        params: {
          first,
          count,
          frames: job.frames,
          pixels: job.pixels,
          words_per_frame: job.wordsPerFrame,
          frames_per_group: framesPerGroup,
          bins,
          cols: job.cols,
          slice_pixels: job.slicePixels,
        },
        workgroups: Math.ceil(count / STATS_WORKGROUP),
      });
    }
    return out;
  };
  return {
    encodeSums(encoder, job) {
      return encodeChunks(
        encoder,
        {
          device,
          pipeline: sums,
          layout: statsLayout,
          label: 'tans-stats sums',
          bindings: [
            { binding: 1, resource: { buffer: job.values } },
            { binding: 2, resource: { buffer: job.sums } },
            { binding: 3, resource: { buffer: job.audit } },
          ],
        },
        chunks(job, SUM_FRAMES_PER_GROUP),
      );
    },
    encodeHistogram(encoder, job) {
      return encodeChunks(
        encoder,
        {
          device,
          pipeline: histogram,
          layout: statsLayout,
          label: 'tans-stats token_histogram',
          bindings: [
            { binding: 1, resource: { buffer: job.values } },
            { binding: 4, resource: { buffer: job.classMap } },
            { binding: 5, resource: { buffer: job.histogram } },
          ],
        },
        chunks(job, HISTOGRAM_FRAMES_PER_GROUP),
      );
    },
  };
}

export interface EncodeJob {
  values: GPUBuffer;
  frames: number;
  slices: number;
  slicePixels: number;
  pixels: number;
  wordsPerFrame: number;
  /** Detector columns (neighbour contexts). */
  cols: number;
  /** Scratch words per lane (laneStride). */
  laneStride: number;
  classMap: GPUBuffer;
  /** Per context and token: freq | start << 16. */
  symbols: GPUBuffer;
  /** Per context: L cell positions, one u32 each. */
  positions: GPUBuffer;
  scratch: GPUBuffer;
  /** Per lane: words written (0 on error). */
  counts: GPUBuffer;
  /** Per lane: ENCODE_OK or ENCODE_TOKEN_ABSENT. */
  errors: GPUBuffer;
}

export interface TansEncodePass {
  /** Encodes every lane into its scratch region and writes counts and errors. */
  encodeLanes(encoder: GPUCommandEncoder, job: EncodeJob): GPUBuffer;
  /** Copies each lane's `counts` words from scratch to `output` at `offsets` (exclusive prefix sum). */
  encodeCompaction(
    encoder: GPUCommandEncoder,
    job: EncodeJob & { offsets: GPUBuffer; output: GPUBuffer },
  ): GPUBuffer;
}

interface EncodeOptions {
  bits: 8 | 16 | 32;
  tableLog: number;
  tokens: number;
}

function encodePipelines(device: GPUDevice, { bits, tableLog, tokens }: EncodeOptions) {
  const module = device.createShaderModule({ label: 'tans-encode.wgsl', code: encodeSource });
  const descriptor = (entryPoint: string, workgroup: number): GPUComputePipelineDescriptor => ({
    label: `tans-encode ${entryPoint} u${bits}`,
    layout: 'auto',
    compute: {
      module,
      entryPoint,
      constants: { WORKGROUP_SIZE: workgroup, TABLE_LOG: tableLog, BITS: bits, TOKENS: tokens },
    },
  });
  return { lanes: descriptor('main', ENCODE_WORKGROUP), compact: descriptor('compact', COMPACT_WORKGROUP) };
}

export function createTansEncodePass(device: GPUDevice, options: EncodeOptions): TansEncodePass {
  const d = encodePipelines(device, options);
  return encodePass(device, device.createComputePipeline(d.lanes), device.createComputePipeline(d.compact));
}

/** As createTansEncodePass, with the pipelines compiled asynchronously (start it early, await it when needed). */
export async function createTansEncodePassAsync(
  device: GPUDevice,
  options: EncodeOptions,
): Promise<TansEncodePass> {
  const d = encodePipelines(device, options);
  const [lanes, compact] = await Promise.all([
    device.createComputePipelineAsync(d.lanes),
    device.createComputePipelineAsync(d.compact),
  ]);
  return encodePass(device, lanes, compact);
}

function encodePass(
  device: GPUDevice,
  lanesPipeline: GPUComputePipeline,
  compactPipeline: GPUComputePipeline,
): TansEncodePass {
  const params = (job: EncodeJob, first: number, count: number) => ({
    lane_first: first,
    lane_count: count,
    frames: job.frames,
    slices: job.slices,
    slice_pixels: job.slicePixels,
    pixels: job.pixels,
    words_per_frame: job.wordsPerFrame,
    lane_stride: job.laneStride,
    cols: job.cols,
  });
  const check = (job: EncodeJob) => {
    const lanes = job.frames * job.slices;
    if (job.scratch.size < lanes * job.laneStride * 4) {
      throw new StemflowError('invalid', `The scratch buffer holds ${job.scratch.size} bytes, too few.`);
    }
    checkBindable(device, job.values, 'decoded values');
    checkBindable(device, job.scratch, 'lane scratch');
    return lanes;
  };
  return {
    encodeLanes(encoder, job) {
      const lanes = check(job);
      const chunks: DispatchChunk[] = [];
      for (let first = 0; first < lanes; first += MAX_GROUPS * ENCODE_WORKGROUP) {
        const count = Math.min(MAX_GROUPS * ENCODE_WORKGROUP, lanes - first);
        chunks.push({ params: params(job, first, count), workgroups: Math.ceil(count / ENCODE_WORKGROUP) });
      }
      return encodeChunks(
        encoder,
        {
          device,
          pipeline: lanesPipeline,
          layout: encodeLayout,
          label: 'tans-encode',
          bindings: [
            { binding: 1, resource: { buffer: job.values } },
            { binding: 2, resource: { buffer: job.classMap } },
            { binding: 3, resource: { buffer: job.symbols } },
            { binding: 4, resource: { buffer: job.positions } },
            { binding: 5, resource: { buffer: job.scratch } },
            { binding: 6, resource: { buffer: job.counts } },
            { binding: 7, resource: { buffer: job.errors } },
          ],
        },
        chunks,
      );
    },
    encodeCompaction(encoder, job) {
      const lanes = check(job);
      checkBindable(device, job.output, 'record output');
      const chunks: DispatchChunk[] = [];
      for (let first = 0; first < lanes; first += MAX_GROUPS) {
        const count = Math.min(MAX_GROUPS, lanes - first);
        chunks.push({ params: params(job, first, count), workgroups: count });
      }
      return encodeChunks(
        encoder,
        {
          device,
          pipeline: compactPipeline,
          layout: encodeLayout,
          label: 'tans-encode compact',
          bindings: [
            { binding: 5, resource: { buffer: job.scratch } },
            { binding: 6, resource: { buffer: job.counts } },
            { binding: 8, resource: { buffer: job.offsets } },
            { binding: 9, resource: { buffer: job.output } },
          ],
        },
        chunks,
      );
    },
  };
}
