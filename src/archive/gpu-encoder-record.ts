/**
 * One record through the GPU archive encoder (gpu-encoder.ts describes the steps): chunks into mapped staging,
 * decode + sums, host class map, histogram, host tables, lane encoding, host prefix sum, compaction, readback.
 */

import { StemflowError, throwIfAborted } from '../errors';
import { chunkIndex } from '../kernels/bslz4-decode';
import type { AcquisitionSource } from '../source/acquisition-source';
import type { EncodedRecord, RecordAudit } from './convert';
import { decodeOnHost, exactTotal, readStaging } from './gpu-encoder-host';
import { type HostPool, waitForLoan } from './gpu-encoder-memory';
import { align4, readbackBytes } from './gpu-encoder-plan';
import type { EncodeParams, EncoderState, Slot } from './gpu-encoder-slots';
import type { GpuEncoderTimings, RecordTimeline } from './gpu-encoder-timings';
import { NEIGHBOUR_BUCKETS } from './hybrid-uint';
import { frequenciesFromHistogram, type RecordModel } from './record-tables';
import { classMapFromSumsFast, sumsFromPairs } from './tans-stats';
import { buildEncodeTablesAll } from './tans-table';

export type { GpuEncoderTimings, RecordTimeline } from './gpu-encoder-timings';

const now = () => performance.now();

export async function encodeRecord(
  s: EncoderState,
  slot: Slot,
  source: AcquisitionSource,
  firstFrame: number,
  frames: number,
  { geometry: g }: EncodeParams,
  {
    timings,
    profile,
    pool,
    epoch,
    after,
    freeStaging,
    laneTurn,
    compactApart = false,
  }: {
    timings: GpuEncoderTimings;
    profile: boolean;
    /** Compact into the slot's own record output even when the words fit `decoded` (tests that path). */
    compactApart?: boolean;
    pool: HostPool;
    epoch: number;
    /** The record before in this slot: done with the chunks' staging; done with the slot. */
    after: { staging: Promise<void>; slot: Promise<void> };
    /** Called once this record no longer needs the chunks' staging. */
    freeStaging: () => void;
    /**
     * The shared lane scratch (EncoderState.laneTurn): `ready` once the record before has submitted its
     * compaction; `pass` hands it to the next record (called after this record's compaction is submitted, and
     * by the caller when the record settles).
     */
    laneTurn: { ready: Promise<void>; pass: () => void };
  },
  signal?: AbortSignal,
): Promise<EncodedRecord> {
  const { device, plan } = s;
  const line: RecordTimeline = {
    firstFrame,
    startMs: now() - epoch,
    endMs: 0,
    stagingWaitMs: 0,
    readMs: 0,
    slotWaitMs: 0,
    modelMs: 0,
    copyMs: 0,
    gpuWaitMs: 0,
    gpuWaits: { sums: 0, histogram: 0, lanes: 0, words: 0 },
    pipelineWaitMs: 0,
    readbackCreateMs: 0,
    loanWaitMs: 0,
    laneTurnWaitMs: 0,
    lent: false,
  };
  const gpuResult = async <T>(step: keyof RecordTimeline['gpuWaits'], p: Promise<T>): Promise<T> => {
    const t = now();
    try {
      return await p;
    } finally {
      line.gpuWaitMs += now() - t;
      line.gpuWaits[step] += now() - t;
    }
  };
  const { pixels } = g;
  const lanes = frames * g.slices;
  const queue = device.queue;
  const submit = (encoder: GPUCommandEncoder, params: GPUBuffer[]) => {
    queue.submit([encoder.finish()]);
    for (const p of params) p.destroy();
  };
  // 1. Read the stored chunks straight into the mapped staging buffer; the GPU copies them into its slot.
  let t = now();
  await slot.made; // the slots after the first are created while the first record is decoded
  const b = slot.buffers;
  const statsJob = {
    values: b.decoded,
    frames,
    pixels,
    wordsPerFrame: plan.wordsPerFrame,
    cols: plan.cols,
    slicePixels: g.slicePixels,
  };
  const upload = b['compressed upload'];
  await after.staging;
  await slot.uploadReady;
  if (upload.mapState !== 'mapped') await upload.mapAsync(GPUMapMode.WRITE); // after a failed job
  line.stagingWaitMs = now() - t;
  const mapped = new Uint8Array(upload.getMappedRange());
  const stored = await source.readStored(firstFrame, frames, signal, mapped);
  const storedBytes = stored.bytes.byteLength;
  if (align4(storedBytes) > mapped.byteLength) {
    throw new StemflowError(
      'invalid',
      `Record at frame ${firstFrame}: ${storedBytes} stored bytes exceed the planned ${mapped.byteLength}.`,
    );
  }
  if (stored.bytes.buffer !== mapped.buffer || stored.bytes.byteOffset !== 0) mapped.set(stored.bytes);
  line.readMs = now() - t - line.stagingWaitMs;
  timings.readMs += now() - t;
  t = now();
  await after.slot; // its GPU steps use this slot's buffers until it is done
  line.slotWaitMs = now() - t;
  t = now();
  upload.unmap();
  queue.writeBuffer(b['chunk index'], 0, chunkIndex(stored));
  timings.uploadMs += now() - t;
  throwIfAborted(signal);

  // 2. Decode (its own submission: it does not wait for the stats and encode pipelines, which the first
  //    record may still be compiling), per-pixel sums and audit; read back sums, audit and frame verdicts.
  t = now();
  let encoder = device.createCommandEncoder({ label: `encode record at ${firstFrame}: decode` });
  const paddedBytes = align4(storedBytes);
  encoder.copyBufferToBuffer(upload, 0, b.compressed, 0, paddedBytes);
  const decodeParams = s.decode.encode(encoder, {
    compressed: b.compressed,
    compressedBytes: paddedBytes,
    index: b['chunk index'],
    flags: b['pixel flags'],
    decoded: b.decoded,
    errors: b['frame errors'],
    totals: b['frame totals'],
    audit: b['bslz4 audit'],
    frameCount: frames,
    pixels,
    wordsPerFrame: plan.wordsPerFrame,
  });
  submit(encoder, [decodeParams]);
  // The chunks are on the GPU once that submission is done: the staging is mapped again for the next record.
  slot.uploadReady = upload.mapAsync(GPUMapMode.WRITE);
  slot.uploadReady.catch(() => undefined); // a destroyed slot rejects it; the next job awaits it
  freeStaging();
  if (profile) {
    await queue.onSubmittedWorkDone();
    timings.decodeMs += now() - t;
    t = now();
  }
  const tp = now();
  const { stats, lanes: lanePass } = await s.passes;
  line.pipelineWaitMs = now() - tp;
  timings.pipelineWaitMs += line.pipelineWaitMs;
  const sums = async () => {
    encoder = device.createCommandEncoder({ label: `encode record at ${firstFrame}: sums` });
    encoder.clearBuffer(b['pixel sums']);
    encoder.clearBuffer(b['stats audit']);
    const p = stats.encodeSums(encoder, { ...statsJob, sums: b['pixel sums'], audit: b['stats audit'] });
    const staging = b['small readback'];
    encoder.copyBufferToBuffer(b['pixel sums'], 0, staging, 0, pixels * 8);
    encoder.copyBufferToBuffer(b['stats audit'], 0, staging, pixels * 8, 8);
    encoder.copyBufferToBuffer(b['frame errors'], 0, staging, pixels * 8 + 8, frames * 4);
    submit(encoder, [p]);
    const result = gpuResult('sums', readStaging(staging, pixels * 8 + 8 + frames * 4));
    s.grow(); // the first record's decode is submitted: create the other slots while it runs
    return new Uint32Array(await result);
  };
  let words = await sums();
  if (profile) timings.sumsMs += now() - t;
  else timings.decodeMs += now() - t;
  const frameErrors = words.subarray(2 * pixels + 2);
  if (frameErrors.some((e) => e !== 0)) {
    // Frames the GPU decoder leaves to the CPU (blocks above 8 KiB) are decoded here and uploaded.
    await decodeOnHost(s, slot, source, firstFrame, frameErrors, signal);
    words = await sums();
  }

  // 3. Host: class map and audit; histogram on the GPU.
  t = now();
  const pairs = words.slice(0, 2 * pixels);
  const pixelSums = sumsFromPairs(pairs);
  const classMap = classMapFromSumsFast(pixelSums, plan.classes);
  const audit: RecordAudit = {
    max: words[2 * pixels],
    total: exactTotal(pixelSums),
    above255: words[2 * pixels + 1],
  };
  line.modelMs += now() - t;
  t = now();
  queue.writeBuffer(b['class map'], 0, Uint32Array.from(classMap));
  timings.uploadMs += now() - t;
  t = now();
  encoder = device.createCommandEncoder({ label: `encode record at ${firstFrame}: histogram` });
  encoder.clearBuffer(b.histogram);
  const bins = plan.classes * NEIGHBOUR_BUCKETS * plan.tokens;
  const histParams = stats.encodeHistogram(encoder, {
    ...statsJob,
    classMap: b['class map'],
    histogram: b.histogram,
  });
  encoder.copyBufferToBuffer(b.histogram, 0, b['small readback'], 0, bins * 4);
  submit(encoder, [histParams]);
  const histogram = new Uint32Array(await gpuResult('histogram', readStaging(b['small readback'], bins * 4)));
  timings.histogramMs += now() - t;

  // 4. Host: frequencies and tables; encode every lane on the GPU.
  t = now();
  const model: RecordModel = {
    dtype: plan.dtype,
    tableLog: plan.tableLog,
    classes: plan.classes,
    tokens: plan.tokens,
    cols: plan.cols,
    classMap,
    freqs: frequenciesFromHistogram(histogram, plan.classes * NEIGHBOUR_BUCKETS, plan.tokens, plan.tableLog),
    pixelSums,
  };
  const contexts = plan.classes * NEIGHBOUR_BUCKETS;
  const tables = buildEncodeTablesAll(model.freqs, contexts, plan.tokens, plan.tableLog);
  line.modelMs += now() - t;
  timings.modelMs += line.modelMs;
  t = now();
  queue.writeBuffer(b['encode symbols'], 0, tables.symbols);
  queue.writeBuffer(b['encode positions'], 0, tables.positions);
  timings.uploadMs += now() - t;
  t = now();
  const encodeJob = {
    values: b.decoded,
    frames,
    slices: g.slices,
    slicePixels: g.slicePixels,
    pixels,
    wordsPerFrame: plan.wordsPerFrame,
    cols: plan.cols,
    laneStride: plan.laneStride,
    classMap: b['class map'],
    symbols: b['encode symbols'],
    positions: b['encode positions'],
    scratch: s.shared['lane scratch'],
    counts: b['lane counts'],
    errors: b['lane errors'],
  };
  // The lane scratch is one for all the slots: records take it in turn, from their lanes' encoding to the
  // submission of their compaction (its last reader); the queue runs the passes in that order.
  const tt = now();
  await laneTurn.ready;
  line.laneTurnWaitMs = now() - tt;
  throwIfAborted(signal);
  encoder = device.createCommandEncoder({ label: `encode record at ${firstFrame}: lanes` });
  const laneParams = lanePass.encodeLanes(encoder, encodeJob);
  encoder.copyBufferToBuffer(b['lane counts'], 0, b['small readback'], 0, lanes * 4);
  encoder.copyBufferToBuffer(b['lane errors'], 0, b['small readback'], lanes * 4, lanes * 4);
  submit(encoder, [laneParams]);
  const laneWords = new Uint32Array(await gpuResult('lanes', readStaging(b['small readback'], lanes * 8)));
  timings.encodeMs += now() - t;
  const bad = laneWords.subarray(lanes).findIndex((e) => e !== 0);
  if (bad >= 0) {
    throw new StemflowError(
      'invalid',
      `Record at frame ${firstFrame}: lane ${bad} has a value whose token is absent from its table.`,
      { frame: firstFrame + Math.floor(bad / g.slices) },
    );
  }

  // 5. Prefix sum on the host; compaction; read back the data words.
  const offsets = new Uint32Array(lanes + 1);
  for (let lane = 0; lane < lanes; lane++) offsets[lane + 1] = offsets[lane] + laneWords[lane];
  const dataWords = offsets[lanes];
  t = now();
  queue.writeBuffer(b['lane offsets'], 0, offsets);
  timings.uploadMs += now() - t;
  // The data words: into a lent readback when one is free (handed out mapped, no host copy; the converter
  // gives it back once written), else into the slot's own readback and copied into host memory. Readbacks
  // are created when first needed, at about the size needed (grown if a record needs more).
  const bytes = dataWords * 4;
  t = now();
  const waited = { ms: 0 };
  const lend = dataWords > 0 ? await waitForLoan(s, bytes, firstFrame, waited) : undefined;
  line.loanWaitMs = waited.ms;
  timings.loanWaitMs += waited.ms;
  if (!s.alive()) {
    lend?.destroy();
    throw new StemflowError('aborted', 'The GPU encoder was closed.');
  }
  let readback = lend;
  if (!readback && dataWords > 0) {
    if (slot.readback && slot.readback.size < bytes) {
      slot.readback.destroy();
      slot.readback = null;
    }
    slot.readback ??= await s.createReadback(bytes, 'output readback');
    readback = slot.readback;
  }
  line.readbackCreateMs = now() - t - waited.ms;
  // The compaction writes into `decoded` (its values are encoded) unless the words exceed it.
  const output = bytes <= b.decoded.size && !compactApart ? b.decoded : await s.recordOutput(slot);
  t = now();
  encoder = device.createCommandEncoder({ label: `encode record at ${firstFrame}: compaction` });
  const compactParams = lanePass.encodeCompaction(encoder, {
    ...encodeJob,
    offsets: b['lane offsets'],
    output,
  });
  if (profile) {
    submit(encoder, [compactParams]);
    laneTurn.pass();
    await queue.onSubmittedWorkDone();
    timings.compactMs += now() - t;
    t = now();
    encoder = device.createCommandEncoder({ label: `encode record at ${firstFrame}: readback` });
  }
  if (readback) encoder.copyBufferToBuffer(output, 0, readback, 0, bytes);
  submit(encoder, profile ? [] : [compactParams]);
  laneTurn.pass();
  let data: Uint32Array;
  if (lend) {
    try {
      await gpuResult('words', lend.mapAsync(GPUMapMode.READ, 0, bytes));
    } catch (error) {
      s.lendable.push(lend);
      throw error;
    }
    timings.readbackMs += now() - t;
    data = new Uint32Array(lend.getMappedRange(0, bytes));
    s.lent.set(data.buffer, lend);
    line.lent = true;
    timings.lentRecords++;
  } else {
    // Sized like a readback (the words + 25 %), not the plan's largest record: a 16,384-frame record's host
    // array is ~130 MB instead of 1.15 GB.
    data = pool.take(readbackBytes(bytes, plan.lanes * plan.laneStride * 4) / 4).subarray(0, dataWords);
    if (readback) {
      await gpuResult('words', readback.mapAsync(GPUMapMode.READ, 0, bytes));
      timings.readbackMs += now() - t;
      t = now();
      data.set(new Uint32Array(readback.getMappedRange(0, bytes)));
      readback.unmap();
      line.copyMs = now() - t;
      timings.hostCopyMs += line.copyMs;
    }
  }
  line.endMs = now() - epoch;
  timings.timeline.push(line);
  return { model, offsets, words: data, audit, lent: line.lent };
}
