import { createHash } from 'node:crypto';
import { readBuffer } from '../compute/readback';
import type { GpuContext } from '../gpu/device';
import { createGpuTimer } from '../gpu/gpu-timer';
import { planGpuLoad } from '../gpu/load-plan';
import { createAuditBuffer, createBslz4DecodePass } from '../gpu/passes/bslz4-decode';
import {
  createDetectorTransposePass,
  createResidentBuffers,
  TRANSPOSE_LOADS,
  type TransposeLoads,
} from '../gpu/passes/detector-transpose';
import { locatePixel } from '../gpu/resident-index';
import { residentParts } from '../gpu/resident-layout';
import { chunkIndex } from '../kernels/bslz4-decode';
import type { AcquisitionSource } from '../source/acquisition-source';

export interface PassProfile {
  batchFrames: number;
  batches: number;
  /** GPU time of one batch's pass, from repeated back-to-back dispatches (submit to completion / repeats). */
  decodeMs: number;
  transposeMs: number;
  /** Decoded bytes of one batch (frames x pixels x 2). */
  decodedBytes: number;
  /** (decode + transpose) x batches: the GPU time of the whole scan's load graph. */
  scanGpuMs: number;
  repeats: number;
  /** The same from GPU timestamps (null without 'timestamp-query'). */
  timestamps: { decodeMs: number; transposeMs: number; scanGpuMs: number } | null;
  /** Decode variants (GPU timestamps, or wall time without them), each checked identical to the default. */
  variants: { name: string; decodeMs: number; identical: boolean }[];
  /**
   * Transpose variants (`parseTransposeVariant`), timed in interleaved rounds (GPU timestamps, or wall time):
   * the median and the best of the kept runs; each checked to give the default's DP sums and resident words
   * (the batch's row segments of 64 pixels spread over the detector, both byte planes).
   */
  transposeVariants: {
    name: string;
    transposeMs: number;
    minMs: number;
    identical: boolean;
    /** Whether it ran the 16-byte form (main_vec4): loads 'vec4' on 16-byte aligned frame rows. */
    vec4: boolean;
  }[];
}

/**
 * A transpose variant by name: parts `scalar`, `batched` or `vec4` (how tiles move, detector-transpose.ts
 * TransposeLoads) and `t<N>` (tiles per workgroup), e.g. base, vec4, vec4-t8; `base` is the default.
 */
export function parseTransposeVariant(name: string): { loads?: TransposeLoads; tiles?: number } {
  const v: { loads?: TransposeLoads; tiles?: number } = {};
  for (const part of name.split('-')) {
    const t = /^t(\d+)$/.exec(part);
    if (part === 'base') continue;
    if ((TRANSPOSE_LOADS as readonly string[]).includes(part)) v.loads = part as TransposeLoads;
    else if (t) v.tiles = Number(t[1]);
    else
      throw new TypeError(
        `Unknown transpose variant part '${part}' in '${name}' (base, ${TRANSPOSE_LOADS.join(', ')}, t<N>)`,
      );
  }
  return v;
}

/**
 * GPU time per pass, measured on the first batch of the real data: the batch is uploaded once, then each
 * pass runs `repeats` times in one submission and the wall time to completion is divided by `repeats`
 * (a warm-up run first). The resident layout is the full scan's, so the transpose writes where it would.
 */
export async function profileLoadPasses(
  ctx: GpuContext,
  source: AcquisitionSource,
  {
    batchFrames,
    repeats = 16,
    variants = [],
    transposeVariants = [],
    rounds = 3,
  }: {
    batchFrames?: number;
    repeats?: number;
    variants?: readonly string[];
    transposeVariants?: readonly string[];
    /** Interleaved timing rounds of the transpose variants. */
    rounds?: number;
  },
): Promise<PassProfile> {
  const { device } = ctx;
  const [rows, cols] = source.summary.detector;
  const pixels = rows * cols;
  const plan = planGpuLoad({
    frames: source.frameCount,
    detector: [rows, cols],
    elemSize: 2,
    chunkSizes: source.storedSizes(),
    limits: {
      maxBufferSize: ctx.limits.maxBufferSize,
      maxStorageBufferBindingSize: ctx.limits.maxStorageBufferBindingSize,
      maxStorageBuffersPerShaderStage: ctx.limits.maxStorageBuffersPerShaderStage,
    },
    batchFrames,
    slots: 1,
    // The transpose into a full high plane (as the figures since the fifth session were measured).
    highPlane: 'full',
  });
  const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC;
  const buffers: GPUBuffer[] = [];
  let decode: ReturnType<typeof createBslz4DecodePass> | null = null;
  const make = (size: number) => {
    const b = device.createBuffer({ size: Math.ceil(size / 4) * 4, usage });
    buffers.push(b);
    return b;
  };
  try {
    const resident = createResidentBuffers(device, plan.resident);
    buffers.push(...resident);
    const flags = make(pixels * 4);
    const errors = make(plan.frames * 4);
    const totals = make(plan.frames * 8);
    const dpSums = make(pixels * 8);
    const audit = createAuditBuffer(device);
    buffers.push(audit);
    const compressed = make(plan.compressedSlotBytes);
    const index = make(plan.indexSlotBytes);
    const decoded = make(plan.decodedSlotBytes);
    const count = Math.min(plan.batchFrames, plan.frames);
    const stored = await source.readStored(0, count);
    device.queue.writeBuffer(
      compressed,
      0,
      stored.bytes.buffer,
      stored.bytes.byteOffset,
      Math.floor(stored.bytes.byteLength / 4) * 4,
    );
    const tail = stored.bytes.byteLength % 4;
    if (tail) {
      const last = new Uint8Array(4);
      last.set(stored.bytes.subarray(stored.bytes.byteLength - tail));
      device.queue.writeBuffer(compressed, stored.bytes.byteLength - tail, last);
    }
    device.queue.writeBuffer(index, 0, chunkIndex(stored));
    await device.queue.onSubmittedWorkDone();
    // The load's decode: its variant, one dispatch a batch.
    const pass = createBslz4DecodePass(device, { elemSize: 2, variant: plan.decodeVariant });
    decode = pass;
    pass.reserve(count, { pixels, maxFramesPerDispatch: plan.batchFrames });
    const flagWords = new Uint32Array(pixels);
    if (source.pixelMask) flagWords.set(source.pixelMask);
    device.queue.writeBuffer(flags, 0, flagWords);
    const transpose = createDetectorTransposePass(device, { elemSize: 2 });
    const decodeJob = {
      compressed,
      compressedBytes: Math.ceil(stored.bytes.byteLength / 4) * 4,
      index,
      flags,
      decoded,
      errors,
      totals,
      audit,
      frameCount: count,
      pixels,
      wordsPerFrame: plan.wordsPerFrame,
      maxFramesPerDispatch: plan.batchFrames,
    };
    const transposeJob = {
      layout: plan.resident,
      decoded,
      wordsPerFrame: plan.wordsPerFrame,
      firstFrame: 0,
      frames: count,
      resident,
      dpSums,
    };
    // Wall time of n runs in one submission per run, and the median GPU time of one run (timestamps between
    // runs) over the second half of the runs: the first runs bring the clocks up from idle.
    const timer = createGpuTimer(ctx, 64);
    const gpuMs: number[] = [];
    let lateRuns: number[] = [];
    const time = async (encode: (e: GPUCommandEncoder) => GPUBuffer[], n: number) => {
      const encoder = device.createCommandEncoder();
      const params: GPUBuffer[] = [];
      const t0 = timer?.count ?? 0;
      for (let r = 0; r < n; r++) {
        timer?.mark(encoder, 'run');
        params.push(...encode(encoder));
      }
      timer?.mark(encoder, 'end');
      const t = performance.now();
      device.queue.submit([encoder.finish()]);
      await device.queue.onSubmittedWorkDone();
      const elapsed = performance.now() - t;
      for (const p of params) p.destroy();
      if (timer) {
        const marks = (await timer.read()).slice(t0);
        const runs = marks.slice(1).map((m, i) => m.ms - marks[i].ms);
        const late = runs.slice(Math.floor(n / 2)).sort((a, b) => a - b);
        lateRuns = late;
        gpuMs.push(late[Math.floor(late.length / 2)]);
        timer.reset();
      }
      return elapsed / n;
    };
    const lastGpu = () => (timer ? gpuMs[gpuMs.length - 1] : null);
    const runDecode = (e: GPUCommandEncoder) => [pass.encode(e, decodeJob)];
    const runTranspose = (e: GPUCommandEncoder) => transpose.encode(e, transposeJob);
    await time(runDecode, 1);
    await time(runTranspose, 1);
    const decodeMs = await time(runDecode, repeats);
    const decodeGpu = lastGpu();
    const transposeMs = await time(runTranspose, repeats);
    const transposeGpu = lastGpu();
    // One fresh run into a poisoned slot and a cleared audit: the hash of every output.
    const digest = async (run: (e: GPUCommandEncoder) => GPUBuffer[]) => {
      poison(device, decoded);
      device.queue.writeBuffer(audit, 0, new Uint32Array(audit.size / 4));
      await time(run, 1);
      const h = createHash('sha256');
      for (const [b, n] of [
        [decoded, count * plan.wordsPerFrame * 4],
        [errors, count * 4],
        [totals, count * 8],
        [audit, audit.size],
      ] as const)
        h.update(await readBuffer(device, b, 0, n));
      return h.digest('hex');
    };
    const reference = await digest(runDecode);
    const variantResults: PassProfile['variants'] = [];
    for (const name of variants) {
      // Any decode variant name (bslz4-decode-variants.ts), its batch's scratch and lists made first.
      const variantPass = createBslz4DecodePass(device, { elemSize: 2, variant: name });
      variantPass.reserve(count, { pixels, maxFramesPerDispatch: plan.batchFrames });
      const run = (e: GPUCommandEncoder) => [variantPass.encode(e, decodeJob)];
      await time(run, 1);
      const wall = await time(run, repeats);
      const decodeMs = lastGpu() ?? wall;
      variantResults.push({ name, decodeMs, identical: (await digest(run)) === reference });
      await device.queue.onSubmittedWorkDone();
      variantPass.destroy();
    }
    // DP sums of one transpose of the batch from cleared sums, and the batch's row segments of 64 pixels
    // spread over the detector (both planes), into poisoned rows: every variant must give the same.
    const parts = residentParts(plan.resident, resident);
    const segmentBytes = (Math.ceil(count / plan.resident.valuesPerWord) * 4 + 3) & ~3;
    const samples = Array.from({ length: 64 }, (_, k) => Math.floor((k * pixels) / 64));
    const transposeDigest = async (run: (e: GPUCommandEncoder) => GPUBuffer[]) => {
      device.queue.writeBuffer(dpSums, 0, new Uint32Array(pixels * 2));
      const poisonWords = new Uint32Array(segmentBytes / 4).fill(0xa5a5a5a5);
      for (const p of samples) {
        // The batch's frames from 0 lie in the row's first tile (the plan tiles rows by batches).
        const { buffer, runs } = locatePixel(plan.resident, p);
        const wordOffset = runs[0].wordOffset;
        for (const plane of [parts.lo, parts.hi ?? []])
          if (plane[buffer]) device.queue.writeBuffer(plane[buffer], wordOffset * 4, poisonWords);
      }
      await time(run, 1);
      const h = createHash('sha256').update(await readBuffer(device, dpSums, 0, pixels * 8));
      for (const p of samples) {
        const { buffer, runs } = locatePixel(plan.resident, p);
        const wordOffset = runs[0].wordOffset;
        for (const plane of [parts.lo, parts.hi ?? []])
          if (plane[buffer]) h.update(await readBuffer(device, plane[buffer], wordOffset * 4, segmentBytes));
      }
      return h.digest('hex');
    };
    const transposeResults: PassProfile['transposeVariants'] = [];
    if (transposeVariants.length > 0) {
      const reference = await transposeDigest(runTranspose);
      const passes = transposeVariants.map((name) => {
        const { loads, tiles } = parseTransposeVariant(name);
        return { pass: createDetectorTransposePass(device, { elemSize: 2, loads }), tiles };
      });
      const runs = passes.map(
        ({ pass, tiles }) =>
          (e: GPUCommandEncoder) =>
            pass.encode(e, { ...transposeJob, tilesPerWorkgroup: tiles }),
      );
      const identical: boolean[] = [];
      for (const run of runs) identical.push((await transposeDigest(run)) === reference);
      const kept: number[][] = runs.map(() => []);
      for (let round = 0; round < rounds; round++) {
        for (const [i, run] of runs.entries()) {
          const wall = await time(run, repeats);
          kept[i].push(...(timer ? lateRuns : [wall]));
        }
      }
      transposeVariants.forEach((name, i) => {
        const sorted = kept[i].sort((a, b) => a - b);
        transposeResults.push({
          name,
          transposeMs: sorted[Math.floor(sorted.length / 2)],
          minMs: sorted[0],
          identical: identical[i],
          vec4: passes[i].pass.usesVec4(plan.wordsPerFrame),
        });
      });
    }
    timer?.destroy();
    const errorWords = new Uint32Array((await readBuffer(device, errors, 0, count * 4)).buffer);
    if (errorWords.some((e) => e !== 0)) throw new Error('profile batch failed to decode');
    return {
      batchFrames: count,
      batches: plan.batches,
      decodeMs,
      transposeMs,
      decodedBytes: count * pixels * 2,
      scanGpuMs: (decodeMs + transposeMs) * (plan.frames / count),
      repeats,
      timestamps:
        decodeGpu === null || transposeGpu === null
          ? null
          : {
              decodeMs: decodeGpu,
              transposeMs: transposeGpu,
              scanGpuMs: (decodeGpu + transposeGpu) * (plan.frames / count),
            },
      variants: variantResults,
      transposeVariants: transposeResults,
    };
  } finally {
    decode?.destroy();
    for (const b of buffers) b.destroy();
  }
}

/** Fills a buffer with 0xa5 bytes, so that a pass must write every word it owns to match a reference. */
function poison(device: GPUDevice, buffer: GPUBuffer): void {
  const piece = new Uint8Array(Math.min(buffer.size, 16 << 20)).fill(0xa5);
  for (let at = 0; at < buffer.size; at += piece.length)
    device.queue.writeBuffer(buffer, at, piece, 0, Math.min(piece.length, buffer.size - at));
}
