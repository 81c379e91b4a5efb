/**
 * GPU pass: two-phase bitshuffle/LZ4 decode + audit, a drop-in alternative to createBslz4DecodePass (same job,
 * same outputs: src/gpu/passes/bslz4-decode.ts). Shaders: src/shaders/bslz4-parse.wgsl (`plan`, `parse`: one
 * lane per LZ4 block walks its tokens once and writes a sequence table and the frame's verdict) and
 * src/shaders/bslz4-resolve.wgsl (`resolve`: one workgroup per frame resolves output words through the table,
 * unshuffles, stores and audits). CPU twins: src/kernels/bslz4-parse.ts, src/kernels/bslz4-resolve.ts.
 *
 * Scratch owned by the pass (bslz4Decode2pScratchBytes for the memory plan): the sequence table (4 bytes per
 * compressed slot byte + 24) followed by the verdicts (8 bytes per frame) and indirect arguments (36 bytes per dispatch
 * chunk), grown on demand and shared by every job encoded on one queue (jobs run in submission order).
 * Fallbacks, both exact: a batch whose table would exceed the device's binding limit is encoded with the
 * production pass; a batch whose in-slot chunks are not disjoint and in slot order (never produced by the
 * loader) is detected on the GPU by `plan`, which then dispatches the production shader instead of phases 1-2.
 *
 * Measured (H200, 4,096 synthetic 192x192 uint16 frames, 43.3 MB compressed; dist-bench/two-phase): exact
 * (words identical to the production pass, errors, totals and audit equal to the twin), but 21.0 ms per batch
 * against 5.8 ms for the production pass. plan + parse alone take 0.59 ms (one lane per block walks all
 * tokens); the resolve phase takes ~20.4 ms: each output word follows ~7 dependent table look-ups (binary
 * search) back to its literal, serial per lane and divergent across a warp. Not a replacement as it stands.
 */
import { StemflowError } from '../../errors.ts';
import { AUDIT_LAYOUT, checkDecodeParams, type ElemSize } from '../../kernels/bslz4-decode.ts';
import { sequenceTableEntries } from '../../kernels/bslz4-parse.ts';
import decodeSource from '../../shaders/bslz4-decode.wgsl?raw';
import parseSource from '../../shaders/bslz4-parse.wgsl?raw';
import resolveSource from '../../shaders/bslz4-resolve.wgsl?raw';
import { checkBindable } from '../chunked-dispatch.ts';
import { packStruct, structLayout } from '../uniform-layout.ts';
import { type Bslz4DecodeJob, createBslz4DecodePass } from './bslz4-decode.ts';

export const bslz4ParseShader: string = parseSource;
export const bslz4ResolveShader: string = resolveSource;

export interface Bslz4Decode2pPass {
  readonly elemSize: ElemSize;
  readonly workgroupSize: number;
  /** Records the pass into `encoder`; destroy the returned parameter buffer after submitting. */
  encode(encoder: GPUCommandEncoder, job: Bslz4DecodeJob): GPUBuffer;
  /** Encodes and submits the pass on its own. */
  run(job: Bslz4DecodeJob): void;
  /** Whether the last encoded job was handed to the production pass on the host (table too large). */
  readonly lastHostFallback: boolean;
  /** Bytes of scratch the pass holds now. */
  scratchBytes(): number;
  /** Releases the scratch buffers. */
  destroy(): void;
}

/** Scratch bytes the pass needs for a batch (sequence table, verdicts, indirect arguments). */
export function bslz4Decode2pScratchBytes(compressedBytes: number, frameCount: number, chunks = 1): number {
  return 8 * sequenceTableEntries(compressedBytes) + 8 * Math.max(1, frameCount) + 36 * Math.max(1, chunks);
}

const layout = structLayout(parseSource, 'Params');
const decodeLayout = structLayout(decodeSource, 'Params');
const U32_MAX = 0xffffffff;

export function createBslz4Decode2pPass(
  device: GPUDevice,
  {
    elemSize,
    workgroupSize = 256,
    frameLanes = 16,
    parseWorkgroupSize = 64,
    cacheEntries = 256,
    profileParseOnly = false,
  }: {
    elemSize: ElemSize;
    /** Lanes per frame in `resolve`. */
    workgroupSize?: number;
    /** Lanes per frame in `parse` (block b is parsed by lane b mod frameLanes). */
    frameLanes?: number;
    /** Lanes per workgroup in `parse` (a multiple of frameLanes). */
    parseWorkgroupSize?: number;
    /** Sequence-table entries per block cached in workgroup memory. */
    cacheEntries?: number;
    /** Profiling only: encode `plan` and `parse` but not `resolve` (outputs are then not written). */
    profileParseOnly?: boolean;
  },
): Bslz4Decode2pPass {
  if (![1, 2, 4].includes(elemSize)) {
    throw new StemflowError('invalid', `Element size ${elemSize} is not 1, 2 or 4 bytes.`);
  }
  const maxLanes = Math.min(
    device.limits.maxComputeInvocationsPerWorkgroup,
    device.limits.maxComputeWorkgroupSizeX,
  );
  for (const [what, n] of [
    ['Workgroup size', workgroupSize],
    ['Parse workgroup size', parseWorkgroupSize],
    ['Lanes per frame', frameLanes],
  ] as const) {
    if (!Number.isInteger(n) || n < 1 || n > maxLanes) {
      throw new StemflowError('invalid', `${what} ${n} is not within the GPU limits.`);
    }
  }
  if (parseWorkgroupSize % frameLanes !== 0 || maxLanes < 256) {
    throw new StemflowError(
      'invalid',
      `Parse workgroups of ${parseWorkgroupSize} lanes cannot hold ${frameLanes}-lane frames.`,
    );
  }
  const fixedBytes = 8192 + 4 * 257 + 12;
  if (
    !Number.isInteger(cacheEntries) ||
    cacheEntries < 1 ||
    fixedBytes + 8 * cacheEntries > device.limits.maxComputeWorkgroupStorageSize
  ) {
    throw new StemflowError(
      'invalid',
      `A cache of ${cacheEntries} entries does not fit the GPU's workgroup memory.`,
    );
  }
  const parseModule = device.createShaderModule({ label: 'bslz4-parse.wgsl', code: parseSource });
  const parseConstants = { ELEM_SIZE: elemSize, FRAME_LANES: frameLanes, PARSE_WG: parseWorkgroupSize };
  const planPipeline = device.createComputePipeline({
    label: 'bslz4-2p plan',
    layout: 'auto',
    compute: { module: parseModule, entryPoint: 'plan', constants: parseConstants },
  });
  const parsePipeline = device.createComputePipeline({
    label: `bslz4-2p parse x${elemSize}`,
    layout: 'auto',
    compute: { module: parseModule, entryPoint: 'main', constants: parseConstants },
  });
  const audit = {
    AUDIT_MAX: AUDIT_LAYOUT.max,
    AUDIT_FAILED: AUDIT_LAYOUT.failedFrames,
    AUDIT_ABOVE_255: AUDIT_LAYOUT.above255,
    AUDIT_HISTOGRAM: AUDIT_LAYOUT.histogram,
  };
  const resolvePipeline = device.createComputePipeline({
    label: `bslz4-2p resolve x${elemSize}`,
    layout: 'auto',
    compute: {
      module: device.createShaderModule({ label: 'bslz4-resolve.wgsl', code: resolveSource }),
      entryPoint: 'main',
      constants: {
        ELEM_SIZE: elemSize,
        WORKGROUP_SIZE: workgroupSize,
        CACHE_ENTRIES: cacheEntries,
        ...audit,
      },
    },
  });
  const fallbackPipeline = device.createComputePipeline({
    label: `bslz4-2p fallback x${elemSize}`,
    layout: 'auto',
    compute: {
      module: device.createShaderModule({ label: 'bslz4-decode.wgsl', code: decodeSource }),
      entryPoint: 'main',
      constants: { ELEM_SIZE: elemSize, WORKGROUP_SIZE: 64, STAGE_WORDS: 1, ...audit },
    },
  });
  const hostFallback = createBslz4DecodePass(device, { elemSize });

  let seqs: GPUBuffer | undefined;
  let args: GPUBuffer | undefined;
  const grow = (buffer: GPUBuffer | undefined, bytes: number, label: string, usage: GPUBufferUsageFlags) => {
    if (buffer && buffer.size >= bytes) return buffer;
    buffer?.destroy();
    return device.createBuffer({ label, size: Math.ceil(bytes / 4) * 4, usage });
  };
  let lastHostFallback = false;

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
    const tableBytes = 8 * sequenceTableEntries(slotBytes);
    if (tableBytes > device.limits.maxStorageBufferBindingSize || tableBytes > device.limits.maxBufferSize) {
      lastHostFallback = true;
      return hostFallback.encode(encoder, job);
    }
    lastHostFallback = false;
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
    const perDispatch = Math.max(1, Math.floor(job.maxFramesPerDispatch ?? 4096));
    const maxGroups = Math.min(
      Math.max(1, Math.floor(job.workgroupsPerDispatch ?? perDispatch)),
      device.limits.maxComputeWorkgroupsPerDimension,
    );
    const chunks = Math.ceil(frameCount / perDispatch);
    const storage = GPUBufferUsage.STORAGE;
    seqs = grow(seqs, tableBytes + 8 * frameCount, 'bslz4-2p sequence table + verdicts', storage);
    args = grow(
      args,
      Math.max(36, chunks * 36),
      'bslz4-2p indirect arguments',
      storage | GPUBufferUsage.INDIRECT,
    );
    const stride = Math.max(layout.byteSize, device.limits.minUniformBufferOffsetAlignment);
    const bytes = new ArrayBuffer(Math.max(1, chunks) * stride);
    for (let c = 0; c < Math.max(1, chunks); c++) {
      const start = Math.min(c * perDispatch, frameCount);
      packStruct(
        layout,
        {
          frame_start: start,
          frame_end: Math.min(start + perDispatch, frameCount),
          pixels,
          expected_bytes: pixels * elemSize,
          words_per_frame: wordsPerFrame,
          slot_bytes: slotBytes,
          first_frame: firstFrame,
          frame_count: frameCount,
          per_dispatch: perDispatch,
          max_groups: maxGroups,
          chunks,
          verdict_base: sequenceTableEntries(slotBytes),
        },
        bytes,
        c * stride,
      );
    }
    const params = device.createBuffer({
      label: 'bslz4-2p params',
      size: bytes.byteLength,
      usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST,
    });
    device.queue.writeBuffer(params, 0, bytes);
    const buf = (buffer: GPUBuffer) => ({ buffer });
    const group = (pipeline: GPUComputePipeline, c: number, size: number, entries: [number, GPUBuffer][]) =>
      device.createBindGroup({
        label: 'bslz4-2p',
        layout: pipeline.getBindGroupLayout(0),
        entries: [
          { binding: 0, resource: { buffer: params, offset: c * stride, size } },
          ...entries.map(([binding, buffer]) => ({ binding, resource: buf(buffer) })),
        ],
      });
    const pass = encoder.beginComputePass({ label: 'bslz4-2p' });
    pass.setPipeline(planPipeline);
    pass.setBindGroup(
      0,
      group(planPipeline, 0, layout.byteSize, [
        [2, job.index],
        [10, args],
      ]),
    );
    pass.dispatchWorkgroups(1);
    const outputs: [number, GPUBuffer][] = [
      [1, job.compressed],
      [2, job.index],
      [3, job.flags],
      [4, job.decoded],
      [5, job.errors],
      [6, job.totals],
      [7, job.audit],
    ];
    for (let c = 0; c < chunks; c++) {
      pass.setPipeline(parsePipeline);
      pass.setBindGroup(
        0,
        group(parsePipeline, c, layout.byteSize, [
          [1, job.compressed],
          [2, job.index],
          [8, seqs],
        ]),
      );
      pass.dispatchWorkgroupsIndirect(args, 36 * c + 12);
      if (profileParseOnly) continue;
      pass.setPipeline(resolvePipeline);
      pass.setBindGroup(0, group(resolvePipeline, c, layout.byteSize, [...outputs, [8, seqs]]));
      pass.dispatchWorkgroupsIndirect(args, 36 * c + 24);
      pass.setPipeline(fallbackPipeline);
      pass.setBindGroup(0, group(fallbackPipeline, c, decodeLayout.byteSize, outputs));
      pass.dispatchWorkgroupsIndirect(args, 36 * c);
    }
    pass.end();
    return params;
  };

  return {
    elemSize,
    workgroupSize,
    encode,
    run(job) {
      const encoder = device.createCommandEncoder({ label: 'bslz4-2p' });
      const params = encode(encoder, job);
      device.queue.submit([encoder.finish()]);
      params.destroy();
    },
    get lastHostFallback() {
      return lastHostFallback;
    },
    scratchBytes: () => (seqs?.size ?? 0) + (args?.size ?? 0),
    destroy() {
      seqs?.destroy();
      args?.destroy();
      seqs = args = undefined;
    },
  };
}
