/**
 * The archive converter's GPU RecordEncoder (convert.ts). Per record, in one slot of GPU buffers:
 *   1. read the record's stored bitshuffle/LZ4 chunks (`source.readStored`) and upload them;
 *   2. decode (bslz4-decode.wgsl) + per-pixel sums and audit (tans-stats.wgsl `main`) -> read back the
 *      sums (pixels x 8 bytes) and the frames' decode verdicts;
 *   3. host: class map (classMapFromSumsFast, the same as classMapFromSums) -> upload; (class, token)
 *      histogram (`token_histogram`) -> read back;
 *   4. host: frequencies and tables (frequenciesFromHistogram, recordTables) -> upload; encode every lane
 *      (tans-encode.wgsl `main`) into the lane scratch, one for all slots, taken in the order records start
 *      -> read back the lanes' word counts and errors;
 *   5. host: exclusive prefix sum -> upload the offsets; compaction (`compact`; the lane scratch passes to the
 *      next record once it is submitted) -> read back the data words, into a lent readback (`lendReadbacks`:
 *      the record's words are its mapped range, written by the converter without a host copy and given back
 *      with `recycle`) or, when none is free, copied into host memory (with `lentOnly`, the record waits for a
 *      lent one to come back instead).
 * The model is built on the host between the GPU steps, so each record has four small waits; they are the
 * only waits. Two (or `slots`) slots keep records in flight: while record r is encoded, record r + 1 is read,
 * decoded and summed, and record r + slots already reads its chunks into r's slot once r's decode has them
 * (its GPU steps wait until r is done). The encoder guesses that the next calls ask for the next records, and
 * drops a wrong guess.
 * Memory is planned before anything is allocated (`planGpuEncoder`); a failure frees every buffer.
 * The output is bit-identical to the CPU twins' (`cpuRecordEncoder`). Modules: gpu-encoder-plan.ts (memory plan),
 * gpu-encoder-slots.ts (buffers and pipelines), gpu-encoder-record.ts (one record's steps), gpu-encoder-memory.ts
 * (host arrays, lent readbacks), gpu-tans-passes.ts.
 */
import { StemflowError, throwIfAborted } from '../errors';
import type { AcquisitionSource } from '../source/acquisition-source';
import type { EncodedRecord, RecordEncoder } from './convert';
import { createHostPool } from './gpu-encoder-memory';
import type { GpuEncoderPlan } from './gpu-encoder-plan';
import { encodeRecord, type GpuEncoderTimings } from './gpu-encoder-record';
import { createState, type EncodeParams, type EncoderState, sameParams } from './gpu-encoder-slots';

export { type GpuEncoderPlan, type GpuEncoderPlanInput, planGpuEncoder } from './gpu-encoder-plan';
export type { GpuEncoderTimings, RecordTimeline } from './gpu-encoder-record';

export interface GpuRecordEncoder extends RecordEncoder {
  /**
   * Takes back a record's words for a later record (convertArchive calls it once a shard is written); a lent
   * readback is unmapped, after which the record's words are gone.
   */
  recycle(record: EncodedRecord): void;
  readonly timings: GpuEncoderTimings;
  /** `lentOnly`: records waiting now for a lent readback to come back. */
  readonly loanWaiters: number;
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
  /**
   * Output readbacks lent with the records (default 0): a record's words are then the readback's mapped range,
   * valid until `recycle`. For converters that give records back once written (convertArchive) and write
   * them without keeping them; with none free, the words are copied into host memory as without lending.
   */
  lendReadbacks?: number;
  /**
   * Every record's words are lent (default false): a record that finds every readback lent out waits for the
   * converter to give one back (`recycle`) instead of copying its words into host memory. Needs a caller that
   * recycles every record once written (convertArchive does) and at least as many lent readbacks as record
   * slots (then the earliest record not yet received always gets one). Waiting stops when the encoder settles.
   */
  lentOnly?: boolean;
  /** GPU bytes the encoder may allocate (optional): more slots or readbacks than fit are refused. */
  budgetBytes?: number;
  /**
   * Compact every record into a buffer of its own instead of into the decoded values (default false: only a
   * record whose words exceed its raw size needs that buffer; tests use it to run that path).
   */
  compactApart?: boolean;
  /**
   * The source decode's variant (bslz4-decode-variants.ts; default DEFAULT_DECODE_VARIANT, which every device
   * runs).
   */
  decodeVariant?: string;
}

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
  // With prefetch, one more record than slots: it reads its chunks while its slot's record is finished.
  const inFlight = prefetch ? depth + 1 : 1;
  if (options.lentOnly && (options.lendReadbacks ?? 0) < depth) {
    throw new StemflowError(
      'invalid',
      `GPU encoder: lending every record needs at least ${depth} lent readback(s), one per record slot (${options.lendReadbacks ?? 0} asked).`,
    );
  }
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
    lentRecords: 0,
    setupMs: 0,
    pipelineWaitMs: 0,
    readbackCreateMs: 0,
    loanWaitMs: 0,
    laterSlotsMs: 0,
    firstSlotMs: 0,
    decodeSetupMs: 0,
    setupScopeMs: 0,
    timeline: [],
  };
  const epoch = performance.now();
  let state: EncoderState | null = null;
  /** Lent readbacks not yet given back, with the state that lent them (it may have been replaced since). */
  const loans = new Map<ArrayBufferLike, EncoderState>();
  const jobs: Job[] = [];
  // Records in the encoder, plus those the converter is still writing (convertArchive's writesInFlight).
  const pool = createHostPool(inFlight + 3);
  let nextSlot = 0;

  const release = () => {
    state?.destroy();
    state = null;
  };
  /** Waits for the records nobody will ask for (wrong guesses, or at the end) and takes back their loans. */
  const settle = async () => {
    // Records in slots not created yet wait for the first record to create them: make sure it happens.
    if (jobs.length > 0) state?.grow();
    // Nobody will give back loans for records nobody asks for: those waiting copy their words instead.
    if (state) {
      state.waitForLoans = false;
      state.notifyLoans();
    }
    const pending = jobs.splice(0);
    for (const r of await Promise.allSettled(pending.map((j) => j.result))) {
      if (r.status === 'fulfilled') giveBack(r.value);
    }
    if (state) state.waitForLoans = Boolean(options.lentOnly) && state.alive();
  };
  const giveBack = (record: EncodedRecord) => {
    const lender = loans.get(record.words.buffer);
    if (lender) {
      loans.delete(record.words.buffer);
      lender.giveBack(record.words.buffer);
    } else pool.give(record.words);
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
    const after = { staging: slot.stagingFree, slot: slot.free };
    let freeStaging = () => {};
    slot.stagingFree = new Promise<void>((resolve) => {
      freeStaging = resolve;
    });
    // The shared lane scratch is taken in the order records start (their order in the acquisition).
    const ready = s.laneTurn;
    let pass = () => {};
    s.laneTurn = new Promise<void>((resolve) => {
      pass = resolve;
    });
    const laneTurn = { ready, pass };
    const result = encodeRecord(
      s,
      slot,
      source,
      firstFrame,
      frames,
      params,
      { timings, profile, pool, epoch, after, freeStaging, laneTurn, compactApart: options.compactApart },
      signal,
    );
    result.then(laneTurn.pass, laneTurn.pass); // also when the record fails before its compaction
    slot.free = result.then(
      () => undefined,
      () => undefined,
    );
    result.then(freeStaging, freeStaging); // also when the record fails before its decode
    result.then(
      (record) => {
        if (record.lent) loans.set(record.words.buffer, s);
      },
      () => undefined, // awaited by `encode`, or dropped with the guess
    );
    const job = { firstFrame, frames, source, result };
    jobs.push(job);
    return job;
  };

  return {
    timings,
    get loanWaiters() {
      return state?.loanWaiters.size ?? 0;
    },
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
            const t = performance.now();
            state = await createState(device, source, frames, params, depth, {
              lendReadbacks: options.lendReadbacks,
              lentOnly: options.lentOnly,
              budgetBytes: options.budgetBytes,
              decodeVariant: options.decodeVariant,
              timings,
            });
            timings.setupMs += performance.now() - t;
            nextSlot = 0;
          }
          job = start(source, firstFrame, frames, params, signal);
        }
        // Prefetch the records that follow (records start at multiples of `frames`).
        let next = Math.max(firstFrame, ...jobs.map((j) => j.firstFrame)) + frames;
        while (jobs.length < inFlight && next < source.frameCount) {
          start(source, next, Math.min(frames, source.frameCount - next), params, signal);
          next += frames;
        }
        const record = await job.result;
        jobs.splice(jobs.indexOf(job), 1);
        timings.records++;
        return record;
      } catch (error) {
        state?.abandon(); // the records waiting for slots not created yet fail too
        await settle();
        release();
        throw error;
      }
    },
    recycle: giveBack,
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
