/**
 * The bslz4-decode pass's compute pipelines (src/gpu/passes/bslz4-decode.ts): the fused shader
 * (src/shaders/bslz4-decode.wgsl), the multi shader (src/shaders/bslz4-decode-multi.wgsl) or, for the list
 * variants, the list shader (src/shaders/bslz4-decode-list.wgsl, 10 storage buffers: see
 * `decodeStorageBuffers`) specialised for an element size and a decode variant, cached per device.
 */
import { StemflowError } from '../../errors.ts';
import { AUDIT_LAYOUT, type ElemSize } from '../../kernels/bslz4-decode.ts';
import { shaderSource } from '../shader-source.ts';
import { type DecodeVariant, readsLists } from './bslz4-decode-variants.ts';

/** Words of a bitshuffle block of 8 KiB (the largest the shaders decode). */
export const BLOCK_WORDS = 2048;

/** Pipelines per device and layout: a pass per load or per archive costs no compile after the first. */
const pipelineCache = new WeakMap<GPUDevice, Map<string, GPUComputePipeline>>();

/** The pipeline cached under `key` for `device`, created by `create` the first time. */
function cachedPipeline(
  device: GPUDevice,
  key: string,
  create: () => GPUComputePipeline,
): GPUComputePipeline {
  let cache = pipelineCache.get(device);
  if (!cache) {
    cache = new Map();
    pipelineCache.set(device, cache);
  }
  let pipeline = cache.get(key);
  if (!pipeline) {
    pipeline = create();
    cache.set(key, pipeline);
  }
  return pipeline;
}

/**
 * How the decode stores its output words: 'words' one 32-bit word a store (any frame); 'vec4' 16 bytes a store
 * (common/bslz4-out-vec4.wgsl: the multi shaders, values of 2 or 4 bytes, frames of a multiple of 4 words);
 * 'planes' two byte planes a frame (common/bslz4-out-planes.wgsl, src/kernels/decoded-planes.ts: the multi
 * shaders, 2-byte values, asked for by the pass's `planes`).
 */
export type DecodeOutput = 'words' | 'vec4' | 'planes';

/**
 * The output form for frames of `wordsPerFrame` words of `elemSize`-byte values: 'vec4' where the multi shaders can
 * store every output vec4 whole (each frame, group of 8 values and raw tail then starts at a multiple of 4 words),
 * unless the variant keeps word stores (`sw`).
 */
export function decodeOutput(v: DecodeVariant, elemSize: ElemSize, wordsPerFrame: number): DecodeOutput {
  return v.shader === 'multi' && !v.wordStores && elemSize !== 1 && wordsPerFrame % 4 === 0
    ? 'vec4'
    : 'words';
}

/**
 * The pipeline of a decode variant for `elemSize` (compiled once per device). `ahead`: a variant that reads lists,
 * as bslz4-decode-list-ahead.wgsl (its dispatches also parse the next batch; the parse's `windowWords`).
 * `output`: decodeOutput's form (the `-v4` shaders for 'vec4').
 */
export function decodePipeline(
  device: GPUDevice,
  elemSize: ElemSize,
  v: DecodeVariant,
  ahead = false,
  auditBins = true,
  output: DecodeOutput = 'words',
): GPUComputePipeline {
  const multi = v.shader === 'multi';
  const listed = readsLists(v);
  if (ahead && !listed) {
    throw new StemflowError('invalid', `Decode variant ${v.name} reads no lists: it cannot parse ahead.`);
  }
  if (output === 'planes' && (!multi || elemSize !== 2)) {
    throw new StemflowError(
      'invalid',
      `Decode variant ${v.name} with ${elemSize}-byte values cannot write its output as byte planes.`,
    );
  }
  if (output === 'vec4' && (!multi || elemSize === 1)) {
    throw new StemflowError(
      'invalid',
      `Decode variant ${v.name} with ${elemSize}-byte values cannot store its output as vec4s.`,
    );
  }
  const multiBase = ahead ? 'bslz4-decode-list-ahead' : listed ? 'bslz4-decode-list' : 'bslz4-decode-multi';
  if (v.quadStores && !device.features.has('subgroups')) {
    throw new StemflowError(
      'unsupported',
      `Decode variant ${v.name} exchanges its stores within quads: this GPU does not offer the 'subgroups' feature.`,
    );
  }
  // `qx`: the forms whose unshuffle stores 8-value pieces (vec4, planes); words keep the stores of the plain file.
  const quadBase = v.quadStores && multiBase !== 'bslz4-decode-multi' ? multiBase : null;
  const multiName =
    output === 'vec4'
      ? quadBase
        ? (`${quadBase}-v4-qx` as const)
        : (`${multiBase}-v4` as const)
      : output === 'planes'
        ? quadBase
          ? (`${quadBase}-planes-qx` as const)
          : (`${multiBase}-planes` as const)
        : multiBase;
  const audit = {
    AUDIT_MAX: AUDIT_LAYOUT.max,
    AUDIT_FAILED: AUDIT_LAYOUT.failedFrames,
    AUDIT_ABOVE_255: AUDIT_LAYOUT.above255,
    AUDIT_HISTOGRAM: AUDIT_LAYOUT.histogram,
    AUDIT_BINS: auditBins ? 1 : 0,
  };
  const key = `${elemSize} ${v.shader} ${v.lanes} ${v.groups} ${v.stageWords} ${v.scratch} ${v.window} ${v.keep} ${v.pattern} ${v.unshuffleWords} ${v.epochs} ${v.list} ${v.listCap} ${v.listRead} ${v.frameGroups} ${v.planeSkip} ${v.bitAudit} ${v.zeroTrack} ${v.midBins} ${v.quadStores} ${ahead ? `ahead ${v.parseWords}` : ''} ${auditBins} ${output}`;
  return cachedPipeline(device, key, () =>
    device.createComputePipeline({
      label: `bslz4-decode x${elemSize} ${v.name}`,
      layout: 'auto',
      compute: multi
        ? {
            module: device.createShaderModule({ label: `${multiName}.wgsl`, code: shaderSource[multiName] }),
            entryPoint: 'main',
            constants: {
              ELEM_SIZE: elemSize,
              LANES: v.lanes,
              GROUPS: v.groups,
              STAGE_WORDS: v.stageWords,
              STAGE_TOTAL: v.stageWords * v.groups,
              SCRATCH: v.scratch ? 1 : 0,
              WINDOW: v.window ? 1 : 0,
              KEEP: v.keep ? 1 : 0,
              PATTERN: v.pattern ? 1 : 0,
              UNSHUFFLE_WORDS: v.unshuffleWords ? 1 : 0,
              EPOCHS_PER_ROUND: v.epochs,
              BLOCK_WG_WORDS: v.scratch ? 1 : BLOCK_WORDS * v.groups,
              LIST_CAP: v.listCap,
              LIST_STAGE: v.listRead === 'stage' ? 1 : 0,
              LIST_WG: listed && v.listRead === 'stage' ? v.listCap * v.groups : 1,
              FRAME_GROUPS: v.frameGroups ? 1 : 0,
              PLANE_SKIP: v.planeSkip ? 1 : 0,
              BIT_AUDIT: v.bitAudit ? 1 : 0,
              ZERO_TRACK: v.zeroTrack ? 1 : 0,
              MID_BINS: v.midBins ? 1 : 0,
              AUDIT_SETS: v.frameGroups ? v.groups : 1,
              ...(ahead ? { WINDOW_WORDS: v.parseWords } : {}),
              ...audit,
            },
          }
        : {
            module: device.createShaderModule({
              label: 'bslz4-decode.wgsl',
              code: shaderSource['bslz4-decode'],
            }),
            entryPoint: 'main',
            constants: { ELEM_SIZE: elemSize, WORKGROUP_SIZE: v.lanes, STAGE_WORDS: v.stageWords, ...audit },
          },
    }),
  );
}

/** Threads per workgroup of the multi shader's `pack_flags` (a word of 32 flag bits each). */
export const PACK_FLAGS_WORKGROUP = 64;

/**
 * The multi shader's `pack_flags` entry point (bslz4-decode-multi.wgsl, which binds 8 storage buffers: every
 * device): the pixel flags as bits in the decode scratch, once a job before its decode dispatches.
 */
export function packFlagsPipeline(device: GPUDevice): GPUComputePipeline {
  const key = 'pack flags';
  return cachedPipeline(device, key, () =>
    device.createComputePipeline({
      label: 'bslz4-decode pack flags',
      layout: 'auto',
      compute: {
        module: device.createShaderModule({
          label: 'bslz4-decode-multi.wgsl',
          code: shaderSource['bslz4-decode-multi'],
        }),
        entryPoint: 'pack_flags',
      },
    }),
  );
}

/** Threads per workgroup of the parse pass. */
export const PARSE_WORKGROUP = 64;

/** The parse pass's pipeline (src/shaders/bslz4-parse.wgsl) for `elemSize` and lists of `cap` sequences. */
export function parsePipeline(
  device: GPUDevice,
  elemSize: ElemSize,
  cap: number,
  windowWords = 1,
): GPUComputePipeline {
  const key = `parse ${elemSize} ${cap} ${windowWords}`;
  return cachedPipeline(device, key, () =>
    device.createComputePipeline({
      label: `bslz4-parse x${elemSize} cap${cap}`,
      layout: 'auto',
      compute: {
        module: device.createShaderModule({ label: 'bslz4-parse.wgsl', code: shaderSource['bslz4-parse'] }),
        entryPoint: 'main',
        constants: {
          ELEM_SIZE: elemSize,
          LIST_CAP: cap,
          WORKGROUP_SIZE: PARSE_WORKGROUP,
          WINDOW_WORDS: windowWords,
        },
      },
    }),
  );
}
