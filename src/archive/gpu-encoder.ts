/**
 * The archive converter's GPU RecordEncoder (convert.ts). Per record, in one slot of GPU buffers:
 *   1. read the record's stored bitshuffle/LZ4 chunks (`source.readStored`) and upload them;
 *   2. decode (bslz4-decode.wgsl) + per-pixel sums and audit (tans-stats.wgsl `main`) -> read back the
 *      sums (pixels x 8 bytes) and the frames' decode verdicts;
 *   3. host: class map (classMapFromSumsFast, the same as classMapFromSums) -> upload; (class, token)
 *      histogram (`token_histogram`) -> read back;
 *   4. host: frequencies and tables (frequenciesFromHistogram, recordTables) -> upload; encode every lane
 *      (tans-encode.wgsl `main`) -> read back the lanes' word counts and errors;
 *   5. host: exclusive prefix sum -> upload the offsets; compaction (`compact`) -> read back the data words.
 * The model is built on the host between the GPU steps, so each record has four small waits; they are the
 * only waits. Two (or `slots`) slots keep records in flight: while record r is encoded, record r + 1 is read,
 * decoded and summed (the encoder guesses that the next calls ask for the next records, and drops a wrong guess).
 * Memory is planned before anything is allocated (`planGpuEncoder`); a failure frees every buffer.
 * The output is bit-identical to the CPU twins' (`cpuRecordEncoder`).
 */
import { StemflowError, throwIfAborted } from '../errors';
import { createBslz4DecodePass } from '../gpu/passes/bslz4-decode';
import { AUDIT_LAYOUT } from '../kernels/bslz4-decode';
import { DecodeError } from '../kernels/decode-errors';
import type { AcquisitionSource } from '../source/acquisition-source';
import type { EncodedRecord, RecordAudit, RecordEncoder } from './convert';
import { createTansEncodePass, createTansStatsPass, laneStride } from './gpu-tans-passes';
import { NEIGHBOUR_BUCKETS, tokenCount } from './hybrid-uint';
import { type ArchiveDtype, DTYPE_BITS, type LaneGeometry, rawLaneWords } from './lanes';
import { frequenciesFromHistogram, type RecordModel, recordTables } from './record-tables';
import { classMapFromSumsFast, sumsFromPairs } from './tans-stats';

export interface GpuEncoderPlanInput {
  frames: number;
  dtype: ArchiveDtype;
  geometry: LaneGeometry;
  /** Detector columns (neighbour contexts). */
  cols: number;
  classes: number;
  tableLog: number;
  /** Largest stored (compressed) bytes of one record. */
  maxStoredBytes: number;
  slots: number;
  limits: { maxBufferSize: number; maxStorageBufferBindingSize: number };
}

export interface GpuEncoderPlan extends GpuEncoderPlanInput {
  wordsPerFrame: number;
  lanes: number;
  laneStride: number;
  tokens: number;
  /** Buffers of one slot: label, bytes, whether bound as storage (else a mappable staging buffer). */
  buffers: { label: string; bytes: number; bound: boolean }[];
  slotBytes: number;
  totalBytes: number;
}

const align4 = (n: number) => Math.ceil(Math.max(4, n) / 4) * 4;

/** Sizes every buffer of the encoder; refuses ('budget') what the device's limits cannot hold. */
export function planGpuEncoder(input: GpuEncoderPlanInput): GpuEncoderPlan {
  const { frames, dtype, geometry: g, classes, tableLog, maxStoredBytes, slots, limits } = input;
  const bits = DTYPE_BITS[dtype];
  const pixels = g.pixels;
  const wordsPerFrame = Math.ceil((pixels * bits) / 32);
  const lanes = frames * g.slices;
  const stride = laneStride(rawLaneWords(g.slicePixels, dtype));
  const tokens = tokenCount(bits);
  const L = 1 << tableLog;
  if (frames * pixels >= 2 ** 32) {
    throw new StemflowError(
      'budget',
      `A record of ${frames} frames x ${pixels} pixels has ${frames * pixels} values; the GPU counts at most 2^32 - 1 per record. Use smaller records.`,
    );
  }
  const contexts = classes * NEIGHBOUR_BUCKETS;
  const small = Math.max(pixels * 8 + 8 + frames * 4, contexts * tokens * 4, lanes * 8);
  const buffers = [
    { label: 'compressed upload', bytes: align4(maxStoredBytes + 4), bound: false },
    { label: 'compressed', bytes: align4(maxStoredBytes + 4), bound: true },
    { label: 'chunk index', bytes: align4(frames * 8), bound: true },
    { label: 'pixel flags', bytes: align4(pixels * 4), bound: true },
    { label: 'decoded', bytes: align4(frames * wordsPerFrame * 4), bound: true },
    { label: 'frame errors', bytes: align4(frames * 4), bound: true },
    { label: 'frame totals', bytes: align4(frames * 8), bound: true },
    { label: 'pixel sums', bytes: align4(pixels * 8), bound: true },
    { label: 'bslz4 audit', bytes: AUDIT_LAYOUT.words * 4, bound: true },
    { label: 'stats audit', bytes: 8, bound: true },
    { label: 'class map', bytes: align4(pixels * 4), bound: true },
    { label: 'histogram', bytes: align4(contexts * tokens * 4), bound: true },
    { label: 'encode symbols', bytes: align4(contexts * tokens * 4), bound: true },
    { label: 'encode positions', bytes: align4(contexts * L * 4), bound: true },
    { label: 'lane scratch', bytes: align4(lanes * stride * 4), bound: true },
    { label: 'lane counts', bytes: align4(lanes * 4), bound: true },
    { label: 'lane errors', bytes: align4(lanes * 4), bound: true },
    { label: 'lane offsets', bytes: align4((lanes + 1) * 4), bound: true },
    { label: 'record output', bytes: align4(lanes * stride * 4), bound: true },
    { label: 'small readback', bytes: align4(small), bound: false },
    { label: 'output readback', bytes: align4(lanes * stride * 4), bound: false },
  ];
  for (const b of buffers) {
    const max = b.bound ? limits.maxStorageBufferBindingSize : limits.maxBufferSize;
    if (b.bytes > max) {
      throw new StemflowError(
        'budget',
        `GPU encoder: the ${b.label} buffer of a ${frames}-frame record needs ${b.bytes} bytes; this GPU allows ${max} per ${b.bound ? 'binding' : 'buffer'}. Use smaller records.`,
      );
    }
  }
  const slotBytes = buffers.reduce((n, b) => n + b.bytes, 0);
  return {
    ...input,
    wordsPerFrame,
    lanes,
    laneStride: stride,
    tokens,
    buffers,
    slotBytes,
    totalBytes: slotBytes * slots,
  };
}

export interface GpuEncoderTimings {
  records: number;
  /** Host reads of the stored chunks, straight into mapped staging memory (includes waiting for the map). */
  readMs: number;
  /** writeBuffer of the model and offsets; unmapping the chunks' staging. */
  uploadMs: number;
  /** Submit to readback of decode + pixel sums (decode alone in profile mode). */
  decodeMs: number;
  /** Pixel sums alone (profile mode only; otherwise inside decodeMs). */
  sumsMs: number;
  /** Host: class map, audit, frequencies and tables. */
  modelMs: number;
  histogramMs: number;
  encodeMs: number;
  /** Compaction alone (profile mode only; otherwise inside readbackMs). */
  compactMs: number;
  /** Compaction + copy of the data words to mapped memory, until mapped. */
  readbackMs: number;
  /** Copying the mapped data words into host memory. */
  hostCopyMs: number;
}

export interface GpuRecordEncoder extends RecordEncoder {
  /** Takes back a record's words for a later record (convertArchive calls it once a shard is written). */
  recycle(record: EncodedRecord): void;
  readonly timings: GpuEncoderTimings;
  /** The plan in use (after the first record). */
  readonly plan: GpuEncoderPlan | null;
  /** Waits for work in flight and frees every buffer (`close` does the same without waiting). */
  dispose(): Promise<void>;
}

export interface GpuEncoderOptions {
  /** Start the next record while this one is encoded (default true). */
  prefetch?: boolean;
  /** Wait after every pass so each timing is one pass's (default false; slower). */
  profile?: boolean;
  /** Records in flight with prefetch (default 2). */
  slots?: number;
}

type EncodeParams = Parameters<RecordEncoder['encode']>[3];

interface Job {
  firstFrame: number;
  frames: number;
  source: AcquisitionSource;
  result: Promise<EncodedRecord>;
}

/** A RecordEncoder running stats, encode and compaction on `device`. Sources must be GPU-decodable. */
export function gpuRecordEncoder(device: GPUDevice, options: GpuEncoderOptions = {}): GpuRecordEncoder {
  const { prefetch = true, profile = false } = options;
  const depth = prefetch ? Math.max(2, Math.floor(options.slots ?? 2)) : 1;
  const timings: GpuEncoderTimings = {
    records: 0,
    readMs: 0,
    uploadMs: 0,
    decodeMs: 0,
    sumsMs: 0,
    modelMs: 0,
    histogramMs: 0,
    encodeMs: 0,
    compactMs: 0,
    readbackMs: 0,
    hostCopyMs: 0,
  };
  let state: EncoderState | null = null;
  const jobs: Job[] = [];
  const pool = createHostPool(depth + 1);
  let nextSlot = 0;

  const release = () => {
    state?.destroy();
    state = null;
  };
  const settle = async () => {
    const pending = jobs.splice(0);
    await Promise.allSettled(pending.map((j) => j.result));
  };

  const start = (
    source: AcquisitionSource,
    firstFrame: number,
    frames: number,
    params: EncodeParams,
    signal?: AbortSignal,
  ) => {
    const s = state as EncoderState;
    const slot = s.slots[nextSlot];
    nextSlot = (nextSlot + 1) % s.slots.length;
    const result = encodeRecord(
      s,
      slot,
      source,
      firstFrame,
      frames,
      params,
      { timings, profile, pool },
      signal,
    );
    result.catch(() => undefined); // awaited by `encode`, or dropped with the guess
    const job = { firstFrame, frames, source, result };
    jobs.push(job);
    return job;
  };

  return {
    timings,
    get plan() {
      return state?.plan ?? null;
    },
    async encode(source, firstFrame, frames, params, signal) {
      throwIfAborted(signal);
      try {
        let job = jobs.find((j) => j.source === source && j.firstFrame === firstFrame && j.frames === frames);
        if (!job || !state || !sameParams(state, source, frames, params)) {
          await settle();
          if (!state || !sameParams(state, source, frames, params)) {
            release();
            state = await createState(device, source, frames, params, depth);
            nextSlot = 0;
          }
          job = start(source, firstFrame, frames, params, signal);
        }
        // Prefetch the records that follow (records start at multiples of `frames`).
        let next = Math.max(firstFrame, ...jobs.map((j) => j.firstFrame)) + frames;
        while (jobs.length < depth && next < source.frameCount) {
          start(source, next, Math.min(frames, source.frameCount - next), params, signal);
          next += frames;
        }
        const record = await job.result;
        jobs.splice(jobs.indexOf(job), 1);
        timings.records++;
        return record;
      } catch (error) {
        await settle();
        release();
        throw error;
      }
    },
    recycle(record) {
      pool.give(record.words);
    },
    close() {
      if (jobs.length === 0) release();
      else void settle().then(release);
    },
    async dispose() {
      await settle();
      release();
    },
  };
}

interface Slot {
  buffers: Record<string, GPUBuffer>;
  /** Resolves when the chunks' staging buffer is mapped for writing again. */
  uploadReady: Promise<void>;
}

interface EncoderState {
  device: GPUDevice;
  plan: GpuEncoderPlan;
  source: AcquisitionSource;
  slots: Slot[];
  decode: ReturnType<typeof createBslz4DecodePass>;
  stats: ReturnType<typeof createTansStatsPass>;
  lanes: ReturnType<typeof createTansEncodePass>;
  destroy(): void;
}

function sameParams(s: EncoderState, source: AcquisitionSource, frames: number, p: EncodeParams): boolean {
  const q = s.plan;
  return (
    s.source === source &&
    frames <= q.frames &&
    p.dtype === q.dtype &&
    p.geometry.pixels === q.geometry.pixels &&
    p.geometry.slices === q.geometry.slices &&
    p.tableLog === q.tableLog &&
    p.cols === q.cols &&
    p.classes === q.classes
  );
}

/** Largest stored bytes of any `frames`-frame record of the source (records start at multiples of frames). */
function maxRecordStored(source: AcquisitionSource, frames: number): number {
  const sizes = source.storedSizes();
  let max = 0;
  for (let first = 0; first < sizes.length; first += frames) {
    let n = 0;
    for (let f = first; f < Math.min(sizes.length, first + frames); f++) n += sizes[f];
    max = Math.max(max, n);
  }
  return max;
}

async function createState(
  device: GPUDevice,
  source: AcquisitionSource,
  frames: number,
  params: EncodeParams,
  slots: number,
): Promise<EncoderState> {
  if (!source.storedCodec.gpu) {
    throw new StemflowError('unsupported', `GPU encoder: ${source.storedCodec.reason}`);
  }
  const plan = planGpuEncoder({
    frames,
    dtype: params.dtype,
    geometry: params.geometry,
    cols: params.cols,
    classes: params.classes,
    tableLog: params.tableLog,
    maxStoredBytes: maxRecordStored(source, frames),
    slots,
    limits: device.limits,
  });
  const created: GPUBuffer[] = [];
  const destroy = () => {
    for (const b of created.splice(0)) b.destroy();
  };
  const STORAGE = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC;
  const READBACK = GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST;
  const UPLOAD = GPUBufferUsage.MAP_WRITE | GPUBufferUsage.COPY_SRC;
  device.pushErrorScope('out-of-memory');
  let popped = false;
  try {
    const bits = DTYPE_BITS[params.dtype];
    const made: Slot[] = [];
    for (let s = 0; s < slots; s++) {
      const buffers: Record<string, GPUBuffer> = {};
      for (const b of plan.buffers) {
        const upload = b.label === 'compressed upload';
        const buffer = device.createBuffer({
          label: `encoder ${s} ${b.label}`,
          size: b.bytes,
          usage: b.bound ? STORAGE : upload ? UPLOAD : READBACK,
          mappedAtCreation: upload,
        });
        created.push(buffer);
        buffers[b.label] = buffer;
      }
      made.push({ buffers, uploadReady: Promise.resolve() });
    }
    popped = true;
    const oom = await device.popErrorScope();
    if (oom) {
      throw new StemflowError(
        'budget',
        `GPU encoder: ${slots} record slot(s) of ${plan.slotBytes} bytes (${plan.totalBytes} in all) do not fit this GPU's memory (${oom.message}). Use smaller records.`,
      );
    }
    return {
      device,
      plan,
      source,
      slots: made,
      decode: createBslz4DecodePass(device, { elemSize: (bits / 8) as 1 | 2 | 4 }),
      stats: createTansStatsPass(device, { bits, tokens: plan.tokens, classes: params.classes }),
      lanes: createTansEncodePass(device, { bits, tableLog: params.tableLog, tokens: plan.tokens }),
      destroy,
    };
  } catch (error) {
    if (!popped) await device.popErrorScope().catch(() => null);
    destroy();
    throw error;
  }
}

/** Copies `bytes` of `buffer` (MAP_READ) to the host. */
async function readStaging(buffer: GPUBuffer, bytes: number): Promise<ArrayBuffer> {
  if (bytes === 0) return new ArrayBuffer(0);
  await buffer.mapAsync(GPUMapMode.READ, 0, align4(bytes));
  try {
    return buffer.getMappedRange(0, align4(bytes)).slice(0, bytes);
  } finally {
    buffer.unmap();
  }
}

const now = () => performance.now();

async function encodeRecord(
  s: EncoderState,
  slot: Slot,
  source: AcquisitionSource,
  firstFrame: number,
  frames: number,
  { geometry: g }: EncodeParams,
  { timings, profile, pool }: { timings: GpuEncoderTimings; profile: boolean; pool: HostPool },
  signal?: AbortSignal,
): Promise<EncodedRecord> {
  const { device, plan } = s;
  const { pixels } = g;
  const b = slot.buffers;
  const lanes = frames * g.slices;
  const queue = device.queue;
  const submit = (encoder: GPUCommandEncoder, params: GPUBuffer[]) => {
    queue.submit([encoder.finish()]);
    for (const p of params) p.destroy();
  };
  const statsJob = {
    values: b.decoded,
    frames,
    pixels,
    wordsPerFrame: plan.wordsPerFrame,
    cols: plan.cols,
    slicePixels: g.slicePixels,
  };

  // 1. Read the stored chunks straight into the mapped staging buffer; the GPU copies them into its slot.
  let t = now();
  const upload = b['compressed upload'];
  await slot.uploadReady;
  if (upload.mapState !== 'mapped') await upload.mapAsync(GPUMapMode.WRITE); // after a failed job
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
  timings.readMs += now() - t;
  t = now();
  upload.unmap();
  const index = new Uint32Array(frames * 2);
  for (let f = 0; f < frames; f++) {
    index[2 * f] = stored.offsets[f];
    index[2 * f + 1] = stored.sizes[f];
  }
  queue.writeBuffer(b['chunk index'], 0, index);
  timings.uploadMs += now() - t;
  throwIfAborted(signal);

  // 2. Decode, per-pixel sums and audit; read back sums, audit and the frames' decode verdicts.
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
  if (profile) {
    submit(encoder, [decodeParams]);
    await queue.onSubmittedWorkDone();
    timings.decodeMs += now() - t;
    t = now();
    encoder = device.createCommandEncoder({ label: `encode record at ${firstFrame}: sums` });
  }
  const sums = async () => {
    encoder.clearBuffer(b['pixel sums']);
    encoder.clearBuffer(b['stats audit']);
    const p = s.stats.encodeSums(encoder, { ...statsJob, sums: b['pixel sums'], audit: b['stats audit'] });
    const staging = b['small readback'];
    encoder.copyBufferToBuffer(b['pixel sums'], 0, staging, 0, pixels * 8);
    encoder.copyBufferToBuffer(b['stats audit'], 0, staging, pixels * 8, 8);
    encoder.copyBufferToBuffer(b['frame errors'], 0, staging, pixels * 8 + 8, frames * 4);
    submit(encoder, profile ? [p] : [decodeParams, p]);
    if (upload.mapState === 'unmapped') {
      slot.uploadReady = upload.mapAsync(GPUMapMode.WRITE);
      slot.uploadReady.catch(() => undefined); // a destroyed slot rejects it; the next job awaits it
    }
    return new Uint32Array(await readStaging(staging, pixels * 8 + 8 + frames * 4));
  };
  let words = await sums();
  if (profile) timings.sumsMs += now() - t;
  else timings.decodeMs += now() - t;
  const frameErrors = words.subarray(2 * pixels + 2);
  if (frameErrors.some((e) => e !== 0)) {
    // Frames the GPU decoder leaves to the CPU (blocks above 8 KiB) are decoded here and uploaded.
    await decodeOnHost(s, slot, source, firstFrame, frameErrors, signal);
    encoder = device.createCommandEncoder({ label: `encode record at ${firstFrame}: sums again` });
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
  timings.modelMs += now() - t;
  t = now();
  queue.writeBuffer(b['class map'], 0, Uint32Array.from(classMap));
  timings.uploadMs += now() - t;
  t = now();
  encoder = device.createCommandEncoder({ label: `encode record at ${firstFrame}: histogram` });
  encoder.clearBuffer(b.histogram);
  const bins = plan.classes * NEIGHBOUR_BUCKETS * plan.tokens;
  const histParams = s.stats.encodeHistogram(encoder, {
    ...statsJob,
    classMap: b['class map'],
    histogram: b.histogram,
  });
  encoder.copyBufferToBuffer(b.histogram, 0, b['small readback'], 0, bins * 4);
  submit(encoder, [histParams]);
  const histogram = new Uint32Array(await readStaging(b['small readback'], bins * 4));
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
  const tables = recordTables(model);
  timings.modelMs += now() - t;
  t = now();
  queue.writeBuffer(b['encode symbols'], 0, tables.encodeSymbols);
  queue.writeBuffer(b['encode positions'], 0, Uint32Array.from(tables.encodePositions));
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
    scratch: b['lane scratch'],
    counts: b['lane counts'],
    errors: b['lane errors'],
  };
  encoder = device.createCommandEncoder({ label: `encode record at ${firstFrame}: lanes` });
  const laneParams = s.lanes.encodeLanes(encoder, encodeJob);
  encoder.copyBufferToBuffer(b['lane counts'], 0, b['small readback'], 0, lanes * 4);
  encoder.copyBufferToBuffer(b['lane errors'], 0, b['small readback'], lanes * 4, lanes * 4);
  submit(encoder, [laneParams]);
  const laneWords = new Uint32Array(await readStaging(b['small readback'], lanes * 8));
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
  t = now();
  encoder = device.createCommandEncoder({ label: `encode record at ${firstFrame}: compaction` });
  const compactParams = s.lanes.encodeCompaction(encoder, {
    ...encodeJob,
    offsets: b['lane offsets'],
    output: b['record output'],
  });
  if (profile) {
    submit(encoder, [compactParams]);
    await queue.onSubmittedWorkDone();
    timings.compactMs += now() - t;
    t = now();
    encoder = device.createCommandEncoder({ label: `encode record at ${firstFrame}: readback` });
  }
  const readback = b['output readback'];
  if (dataWords > 0) encoder.copyBufferToBuffer(b['record output'], 0, readback, 0, dataWords * 4);
  submit(encoder, profile ? [] : [compactParams]);
  const data = pool.take(plan.lanes * plan.laneStride).subarray(0, dataWords);
  if (dataWords > 0) {
    await readback.mapAsync(GPUMapMode.READ, 0, dataWords * 4);
    timings.readbackMs += now() - t;
    t = now();
    data.set(new Uint32Array(readback.getMappedRange(0, dataWords * 4)));
    readback.unmap();
    timings.hostCopyMs += now() - t;
  }
  return { model, offsets, words: data, audit };
}

/** Exact sum of per-pixel sums (each exact below 2^53). */
function exactTotal(sums: Float64Array): bigint {
  let total = 0n;
  let partial = 0;
  for (let p = 0; p < sums.length; p++) {
    partial += sums[p];
    if (partial > 2 ** 52) {
      total += BigInt(partial);
      partial = 0;
    }
  }
  return total + BigInt(partial);
}

/**
 * Frames the GPU decoder did not decode: those it leaves to the CPU (UNSUPPORTED_BLOCK_SIZE) are decoded by
 * the source and written into the decoded buffer; any other verdict is a damaged source.
 */
async function decodeOnHost(
  s: EncoderState,
  slot: Slot,
  source: AcquisitionSource,
  firstFrame: number,
  frameErrors: Uint32Array,
  signal?: AbortSignal,
): Promise<void> {
  const wordBytes = s.plan.wordsPerFrame * 4;
  for (let f = 0; f < frameErrors.length; f++) {
    const code = frameErrors[f];
    if (code === 0) continue;
    if (code !== DecodeError.UNSUPPORTED_BLOCK_SIZE) {
      const name = Object.entries(DecodeError).find(([, v]) => v === code)?.[0] ?? `code ${code}`;
      throw new StemflowError('corrupt', `Frame ${firstFrame + f} of the source does not decode (${name}).`, {
        frame: firstFrame + f,
      });
    }
    const bytes = await source.readFrames(firstFrame + f, 1, signal);
    const padded = new Uint8Array(wordBytes);
    padded.set(bytes);
    s.device.queue.writeBuffer(slot.buffers.decoded, f * wordBytes, padded);
  }
}

interface HostPool {
  /** A host array of at least `words` words: a recycled one, or a new one. */
  take(words: number): Uint32Array;
  /** Returns an array `take` gave out (any view of it); others are ignored. */
  give(words: Uint32Array): void;
}

/**
 * Host arrays for the records' data words, reused once the converter has written a record (`recycle`):
 * touching fresh memory costs more than the copy itself (H200 host: 100 MB copied from the mapped readback
 * into fresh memory 67-85 ms, into touched memory 19-21 ms).
 */
function createHostPool(keep: number): HostPool {
  const ours = new WeakSet<ArrayBuffer>();
  const free: Uint32Array[] = [];
  return {
    take(words) {
      const i = free.findIndex((a) => a.length >= words);
      if (i >= 0) return free.splice(i, 1)[0];
      const fresh = new Uint32Array(words);
      ours.add(fresh.buffer);
      return fresh;
    },
    give(words) {
      const buffer = words.buffer as ArrayBuffer;
      if (!ours.has(buffer) || free.some((a) => a.buffer === buffer) || free.length >= keep) return;
      free.push(new Uint32Array(buffer));
    },
  };
}
