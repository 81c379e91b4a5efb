/**
 * The GPU load: compressed chunks in, exact resident counts (detector-major) and the audit out, in one
 * decode of every value (docs/pass-graph.md). Batches stream through a few scratch slots; the host waits
 * only for a slot to come free (bounded back-pressure), never inside the submission of a batch.
 */

import { StemflowError, throwIfAborted } from '../errors.ts';
import type { GpuContext } from '../gpu/device.ts';
import { describePlan } from '../gpu/load-plan.ts';
import {
  type Bslz4DecodePass,
  createAuditBuffer,
  createBslz4DecodePass,
  readDecodeResults,
} from '../gpu/passes/bslz4-decode.ts';
import { checkTransposeHistogram, createResidentBuffers } from '../gpu/passes/detector-transpose.ts';
import { compactHighPlane } from '../gpu/resident-compact.ts';
import { type ElemSize, residentParts } from '../gpu/resident-layout.ts';
import { createStagingPool } from '../gpu/staging-pool';
import { type AcquisitionSource, DTYPE_BYTES } from '../source/acquisition-source.ts';
import { checkBlockSize, decodeFailure, explainFailure } from './gpu-load-checks.ts';
import { createHighSlots, type HighSlots } from './gpu-load-high.ts';
import { loadPasses } from './gpu-load-passes.ts';
import { planLoad } from './gpu-load-planning.ts';
import type { GpuLoad, GpuLoadOptions, GpuLoadTimings, LoadStage } from './gpu-load-types.ts';
import { createBatchReader } from './gpu-load-upload.ts';
import { readBuffer } from './readback.ts';

export type {
  GpuLoad,
  GpuLoadOptions,
  GpuLoadProgress,
  GpuLoadTimings,
  LoadStage,
} from './gpu-load-types.ts';

export async function loadToGpu(
  ctx: GpuContext,
  source: AcquisitionSource,
  options: GpuLoadOptions = {},
): Promise<GpuLoad> {
  const t0 = performance.now();
  const { device } = ctx;
  const { signal } = options;
  if (!source.storedCodec.gpu) throw new StemflowError('unsupported', source.storedCodec.reason);
  // Before anything is allocated (the transpose pass itself is made after the batch buffers).
  if (options.histogramIn === 'transpose') checkTransposeHistogram(device);
  const { summary } = source;
  const elemSize = DTYPE_BYTES[summary.dtype] as ElemSize;
  const pixels = summary.detector[0] * summary.detector[1];
  const sizes = source.storedSizes();
  const bytesTotal = sizes.reduce((a, b) => a + b, 0);
  const plan = planLoad(ctx, source, sizes, options);
  options.onPlan?.(plan, describePlan(plan));
  await checkBlockSize(source, elemSize, signal);
  const progress = (stage: LoadStage, framesDone: number, bytesRead: number) =>
    options.onProgress?.({ stage, framesDone, frameCount: source.frameCount, bytesRead, bytesTotal });
  progress('plan', 0, 0);

  const STORAGE_IN = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST;
  const STORAGE_OUT = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
  const owned: GPUBuffer[] = [];
  const timings0 = {
    indexMs: 0,
    allocateMs: 0,
    residentAllocMs: 0,
    residentReused: 0,
    scopeWaitMs: 0,
    pipelinesMs: 0,
  };
  const make = (label: string, size: number, usage: number) => {
    const b = device.createBuffer({ label, size: Math.max(4, Math.ceil(size / 4) * 4), usage });
    owned.push(b);
    return b;
  };
  const releaseAll = () => {
    for (const b of owned) b.destroy();
    owned.length = 0;
  };

  let decode: Bslz4DecodePass | null = null;
  let high: HighSlots | null = null;
  try {
    // Allocation, checked for out-of-memory as one scope: nothing is used before it all exists.
    const allocateStart = performance.now();
    timings0.indexMs = allocateStart - t0;
    device.pushErrorScope('out-of-memory');
    const residentStart = performance.now();
    const taken = options.pool
      ? options.pool.take(device, plan.resident)
      : { buffers: createResidentBuffers(device, plan.resident), reused: 0 };
    const resident = taken.buffers;
    timings0.residentAllocMs = performance.now() - residentStart;
    timings0.residentReused = taken.reused;
    owned.push(...resident);
    // A slotted high plane: its scratch, pools' state, and the pools it may grow (it updates `resident`).
    high = plan.resident.high === 'slots' ? createHighSlots(device, plan, resident, owned, make) : null;
    const flags = make('pixel flags', pixels * 4, STORAGE_IN);
    const errors = make('decode errors', plan.frames * 4, STORAGE_OUT);
    const totals = make('frame totals', plan.frames * 8, STORAGE_OUT);
    const dpSums = make('DP sums', pixels * 8, STORAGE_OUT);
    const audit = createAuditBuffer(device);
    owned.push(audit);
    // One set of batch buffers for all slots: the GPU runs the batches in queue order (the index written by
    // queue.writeBuffer and the chunks copied in the batch's own commands come after the previous batch's
    // passes), so only the host's staging and the high scratch need one per batch in flight. Parsing ahead,
    // the compressed chunks, the index and the decode's lists hold two batches (batch k in set k % 2): batch k's
    // dispatch decodes it and parses batch k + 1. Copying ahead, the index holds three (plan.indexSets): batch
    // k + 2's entries are written before batch k's dispatch.
    const sets = plan.parseAhead ? 2 : 1;
    const compressed = make('batch compressed', sets * plan.compressedSlotBytes, STORAGE_IN);
    const index = make('batch index', plan.indexSets * plan.indexSlotBytes, STORAGE_IN);
    const decoded = make('batch decoded', plan.decodedSlotBytes, GPUBufferUsage.STORAGE);
    const batchBuffers = [compressed, index, decoded];
    const slots = Array.from({ length: plan.slots }, () => ({ done: null as Promise<void> | null }));
    // The decode pass of this load and its global scratch (plan.decodeScratchBytes), freed with the scratch.
    const histogramInTranspose = options.histogramIn === 'transpose';
    decode = createBslz4DecodePass(device, {
      elemSize,
      variant: plan.decodeVariant,
      auditBins: !histogramInTranspose,
      wordsPerFrame: plan.wordsPerFrame,
      planes: plan.decodedPlanes,
    });
    decode.reserve(plan.batchFrames, {
      pixels,
      maxFramesPerDispatch: plan.batchFrames,
      listSets: sets,
    });
    const scopeStart = performance.now();
    const oom = await device.popErrorScope();
    timings0.scopeWaitMs = performance.now() - scopeStart;
    if (oom) {
      throw new StemflowError(
        'budget',
        `The GPU ran out of memory allocating the load (${describePlan(plan).join('; ')}): ${oom.message}`,
      );
    }
    ctx.throwIfFailed();
    const flagWords = new Uint32Array(pixels);
    if (source.pixelMask) flagWords.set(source.pixelMask);
    device.queue.writeBuffer(flags, 0, flagWords);

    const allocatedAt = performance.now();
    const { transpose } = loadPasses(
      device,
      elemSize,
      options.transposeLoads,
      histogramInTranspose,
      plan.decodedPlanes,
    );
    const pipelinesMs = performance.now() - allocatedAt;
    const timings: GpuLoadTimings = {
      ...timings0,
      prepareMs: 0,
      readWaitMs: 0,
      uploadMs: 0,
      submitMs: 0,
      gpuWaitMs: 0,
      readbackMs: 0,
      compactMs: 0,
      poolGrowths: 0,
      totalMs: 0,
    };
    // Chunk bytes are read straight into mapped staging buffers (gpu-load-upload.ts); the GPU copies each into
    // its set. A staging buffer is re-mapped once the commands that copy it are submitted.
    const ring = plan.slots + 1;
    // From the staging pool (handed out mapped; given back at the end; without one, a pool that keeps
    // nothing). What it holds besides is freed before anything is made, so the load stays within its plan.
    const stagingPool = options.staging ?? createStagingPool(0);
    const reused = Array.from({ length: ring }, () => stagingPool.reuse(plan.compressedSlotBytes));
    stagingPool.clear();
    const staging = reused.map((pooled, i) => {
      const b = pooled ?? stagingPool.take(device, plan.compressedSlotBytes, `staging ${i}`);
      owned.push(b);
      return b;
    });
    timings.prepareMs = performance.now() - t0;
    timings.pipelinesMs = pipelinesMs;
    timings.allocateMs = performance.now() - allocateStart - pipelinesMs;
    const reader = createBatchReader({
      device,
      plan,
      source,
      signal,
      staging,
      compressed,
      index,
      sets,
      indexSets: plan.indexSets,
      job: { flags, decoded, errors, totals, audit, pixels },
      timings,
    });
    const upload = reader.upload;
    let firstSubmit: number | undefined;
    const pass = decode;
    const timer = options.timer;
    let current = await upload(0);
    // Copying ahead: batch k + 1, already in its set when batch k's commands are recorded (they copy batch k + 2).
    let next: Awaited<ReturnType<typeof upload>> | null = null;
    if (plan.parseAhead) {
      // The first batch's copy and parse; every later batch is copied and parsed beside its predecessor's decode
      // (copying ahead: batch 1 copied here too, each batch k + 2 after batch k's decode).
      const encoder = device.createCommandEncoder({ label: 'load batch 0 parse' });
      timer?.mark(encoder, 'copy');
      current.copy(encoder);
      if (plan.copyAhead) {
        next = await upload(1);
        next.copy(encoder);
      }
      timer?.mark(encoder, 'decode');
      const params = pass.encodeParse(encoder, current.job);
      timer?.mark(encoder, 'gap');
      device.queue.submit([encoder.finish()]);
      params.destroy();
      current.remap();
      next?.remap();
    }
    for (let k = 0; k < plan.batches; k++) {
      throwIfAborted(signal);
      ctx.throwIfFailed();
      const slot = slots[k % plan.slots];
      let t = performance.now();
      if (slot.done) {
        await slot.done;
        await high?.settle(k % plan.slots);
        slot.done = null;
      }
      timings.gpuWaitMs += performance.now() - t;
      const slotFree = performance.now();
      if (!plan.parseAhead && k > 0) current = await upload(k);
      // Parsing ahead: batch k + 1 must be read before batch k's commands (they copy and parse it); copying
      // ahead, batch k + 1 is in its set already and batch k + 2 must be read (they copy it).
      const ahead = plan.copyAhead
        ? next
        : plan.parseAhead && k + 1 < plan.batches
          ? await upload(k + 1)
          : null;
      const later = plan.copyAhead && k + 2 < plan.batches ? await upload(k + 2) : null;
      const readReady = performance.now();
      t = performance.now();
      const { job } = current;
      const encoder = device.createCommandEncoder({ label: `load batch ${k}` });
      if (!plan.copyAhead) {
        timer?.mark(encoder, 'copy');
        if (ahead) ahead.copy(encoder);
        else if (!plan.parseAhead) current.copy(encoder);
      }
      timer?.mark(encoder, 'decode');
      const params = [
        pass.encode(encoder, {
          ...job,
          // The flag bits batch 0 packed stay in the decode's scratch for the whole load.
          flagsPacked: k > 0,
          ahead: ahead
            ? {
                frameCount: ahead.job.frameCount,
                indexBase: ahead.job.indexBase,
                slotBytes: ahead.job.compressedBytes,
              }
            : undefined,
        }),
      ];
      if (plan.copyAhead) {
        // Into the set batch k's dispatch just read: after it (Dawn's barrier waits for that dispatch), and
        // before passes that wait only for compute work, so the GPU may run the copy beside them.
        timer?.mark(encoder, 'copy');
        later?.copy(encoder);
      }
      timer?.mark(encoder, 'transpose');
      params.push(
        ...transpose.encode(encoder, {
          layout: high?.layout ?? plan.resident,
          decoded,
          wordsPerFrame: plan.wordsPerFrame,
          firstFrame: job.firstFrame,
          frames: job.frameCount,
          resident,
          dpSums,
          highScratch: high?.scratch(k % plan.slots),
          audit: histogramInTranspose ? { buffer: audit, flags } : undefined,
        }),
      );
      if (high) {
        timer?.mark(encoder, 'place');
        high.encode(encoder, k % plan.slots, { firstFrame: job.firstFrame, frames: job.frameCount });
      }
      timer?.mark(encoder, 'gap');
      device.queue.submit([encoder.finish()]);
      for (const p of params) p.destroy();
      slot.done = high ? high.submitted(k % plan.slots) : device.queue.onSubmittedWorkDone();
      if (plan.copyAhead) {
        later?.remap();
        if (ahead) current = ahead;
        next = later;
      } else if (ahead) {
        ahead.remap();
        current = ahead;
      } else if (!plan.parseAhead) {
        current.remap();
      }
      timings.submitMs += performance.now() - t;
      if (timer) {
        firstSubmit ??= performance.now();
        timings.batchHostMs ??= [];
        timings.batchHostMs.push([
          slotFree - firstSubmit,
          readReady - firstSubmit,
          performance.now() - firstSubmit,
        ]);
      }
      progress('decode', job.firstFrame + job.frameCount, reader.bytesRead);
    }
    let t = performance.now();
    await Promise.all([...slots.map((s) => s.done), ...reader.mapped()]);
    // The last batches' pools, in batch order.
    for (let k = Math.max(0, plan.batches - plan.slots); k < plan.batches; k++) {
      await high?.settle(k % plan.slots);
    }
    timings.gpuWaitMs += performance.now() - t;
    timings.poolGrowths = high?.growths ?? 0;
    ctx.throwIfFailed();
    progress('finish', plan.frames, reader.bytesRead);

    t = performance.now();
    const results = await readDecodeResults(device, { errors, totals, audit }, { frameCount: plan.frames });
    const dp = new BigUint64Array((await readBuffer(device, dpSums, 0, pixels * 8)).buffer);
    const { hot } = residentParts(plan.resident, resident);
    const hotBitmap = hot
      ? new Uint32Array((await readBuffer(device, hot, 0, plan.resident.hotBytes)).buffer)
      : null;
    timings.readbackMs = performance.now() - t;
    if (results.audit.failedFrames > 0) throw decodeFailure(source, results.errors);
    // Scratch goes; the resident data, the flags and nothing else stay.
    for (const b of batchBuffers) b.destroy();
    high?.destroyScratch();
    for (const b of [errors, totals, dpSums, audit]) b.destroy();
    // Every staging buffer is mapped again here (awaited above): back to its pool.
    for (const b of staging) stagingPool.give(b);
    decode.destroy();
    let loaded = high ? { ...plan, resident: high.layout, residentBytes: high.layout.totalBytes } : plan;
    let residentSet: readonly GPUBuffer[] = resident;
    if (options.compactHigh && hotBitmap && plan.resident.high === 'full') {
      t = performance.now();
      const compacted = await compactHighPlane(device, plan.resident, resident, hotBitmap);
      loaded = { ...plan, resident: compacted.layout, residentBytes: compacted.layout.totalBytes };
      residentSet = compacted.resident;
      timings.compactMs = performance.now() - t;
    }
    owned.length = 0;
    owned.push(flags);
    if (!options.pool) owned.push(...residentSet);
    timings.totalMs = performance.now() - t0;
    return {
      plan: loaded,
      resident: residentSet,
      flags,
      flagged: Uint8Array.from(flagWords, (v) => (v === 0 ? 0 : 1)),
      audit: results.audit,
      frameTotals: results.totals,
      dpSums: dp,
      hotBitmap,
      timings,
      release: () => {
        if (options.pool && owned.length) options.pool.give(residentSet);
        releaseAll();
      },
    };
  } catch (e) {
    decode?.destroy();
    high?.destroyScratch();
    releaseAll();
    throw await explainFailure(ctx, e);
  }
}
