/**
 * The GPU archive encoder's record slots (gpu-encoder.ts): each slot holds every buffer one record needs
 * (gpu-encoder-plan.ts) but the lane scratch, which the slots share (plan.shared, taken in turn), allocated
 * inside an out-of-memory error scope, and the pipelines they share. Only the
 * first slot is created with the state; the others once the first record's decode is submitted (`grow`), so
 * creating them (~21 ms per GB on the H200, on this thread) overlaps the first record's GPU work.
 */
import { StemflowError } from '../errors';
import { createBslz4DecodePass } from '../gpu/passes/bslz4-decode';
import type { AcquisitionSource } from '../source/acquisition-source';
import type { RecordEncoder } from './convert';
import { type GpuEncoderPlan, maxRecordStored, planGpuEncoder, readbackBytes } from './gpu-encoder-plan';
import type { GpuEncoderTimings } from './gpu-encoder-timings';
import {
  createTansEncodePassAsync,
  createTansStatsPassAsync,
  type TansEncodePass,
  type TansStatsPass,
} from './gpu-tans-passes';
import { DTYPE_BITS } from './lanes';

export type EncodeParams = Parameters<RecordEncoder['encode']>[3];

export interface Slot {
  /** Empty until `made` resolves. */
  buffers: Record<string, GPUBuffer>;
  /** Resolves once the slot's buffers exist (rejects with a 'budget' error when they do not fit). */
  made: Promise<void>;
  /** Resolves when the chunks' staging buffer is mapped for writing again. */
  uploadReady: Promise<void>;
  /**
   * The record before in this slot: resolves once it no longer needs the chunks' staging (it is being mapped
   * again, `uploadReady` is set), so the next record may read its chunks while that one is still encoded.
   */
  stagingFree: Promise<void>;
  /** The record before in this slot: resolves once it has settled (done with every buffer of the slot). */
  free: Promise<void>;
  /** The slot's own output readback (words copied into host memory), created when first needed. */
  readback: GPUBuffer | null;
  /** The compaction's output when a record's words exceed `decoded` (rare), created when first needed. */
  output: GPUBuffer | null;
}

export interface EncoderState {
  device: GPUDevice;
  plan: GpuEncoderPlan;
  source: AcquisitionSource;
  slots: Slot[];
  /** Output readbacks free to lend (with those lent out and `unmade`: plan.lendReadbacks). */
  lendable: GPUBuffer[];
  /** Lendable readbacks not created yet. */
  unmade: number;
  /** Lendable readbacks are being created in the background (gpu-encoder-memory.ts). */
  preparing: boolean;
  /** Readbacks created in the background, not yet lendable (destroyed with the state). */
  inPreparation: Set<GPUBuffer>;
  /** False once destroyed. */
  alive(): boolean;
  /**
   * A readback of at least `bytes` (a new one, inside an out-of-memory scope; 'budget' error when it fails):
   * the caller keeps it (slot readback) or lends it.
   */
  createReadback(bytes: number, label: string): Promise<GPUBuffer>;
  /** The slot's record output (plan size), created when first needed, inside an out-of-memory scope. */
  recordOutput(slot: Slot): Promise<GPUBuffer>;
  /** Starts creating the slots after the first (once; the first record calls it after submitting its decode). */
  grow(): void;
  /**
   * Gives up the slots not created yet (their records fail with an 'aborted' error) when no record will call
   * `grow`, e.g. the first failed before its decode; the state is then released.
   */
  abandon(): void;
  /** Lent readbacks, by the ArrayBuffer of their mapped range; given back by `giveBack`. */
  lent: Map<ArrayBufferLike, GPUBuffer>;
  /** The buffers one for all the slots (plan.shared: the lane scratch), created with the first slot. */
  shared: Record<string, GPUBuffer>;
  /**
   * Resolves when the record that last took the shared lane scratch has submitted its compaction (the last
   * pass that reads it): a record takes its turn before encoding its lanes (gpu-encoder-record.ts `laneTurn`).
   */
  laneTurn: Promise<void>;
  /**
   * `lentOnly`: a record that finds every readback lent out waits for one to come back instead of copying its
   * words into host memory (gpu-encoder-memory.ts `waitForLoan`). Turned off when the encoder settles (records
   * nobody will ask for, or a failure: loans may then never come back) and when the state is destroyed.
   */
  waitForLoans: boolean;
  /** First frames of the records waiting for a loan: a loan goes to the earliest. */
  loanWaiters: Set<number>;
  /** Resolves at the next change: a readback given back or made lendable, or waiting turned off. */
  loanChange(): Promise<void>;
  /** Wakes the records waiting for a loan (they look again). */
  notifyLoans(): void;
  decode: ReturnType<typeof createBslz4DecodePass>;
  /**
   * The stats and encode passes: their pipelines compile asynchronously once the state's buffers are created,
   * while the first record's chunks are read; a record awaits them before its decode.
   */
  passes: Promise<{ stats: TansStatsPass; lanes: TansEncodePass }>;
  /** Frees every buffer but the lent readbacks, which are freed when given back. */
  destroy(): void;
  /** Takes back a lent readback (unmapped, then free to lend again, or freed if the state is destroyed). */
  giveBack(words: ArrayBufferLike): boolean;
}

export function sameParams(
  s: EncoderState,
  source: AcquisitionSource,
  frames: number,
  p: EncodeParams,
): boolean {
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

export async function createState(
  device: GPUDevice,
  source: AcquisitionSource,
  frames: number,
  params: EncodeParams,
  slots: number,
  {
    lendReadbacks = 0,
    lentOnly = false,
    budgetBytes,
    decodeVariant,
    timings,
  }: {
    lendReadbacks?: number;
    /** Records wait for a lent readback rather than copy (EncoderState.waitForLoans). */
    lentOnly?: boolean;
    budgetBytes?: number;
    /** The decode's variant (default DEFAULT_DECODE_VARIANT). */
    decodeVariant?: string;
    /**
     * Adds the time spent creating readbacks (their first use is part of a record's start-up) and the slots
     * after the first.
     */
    timings?: Pick<
      GpuEncoderTimings,
      'readbackCreateMs' | 'laterSlotsMs' | 'firstSlotMs' | 'decodeSetupMs' | 'setupScopeMs'
    >;
  } = {},
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
    lendReadbacks,
    budgetBytes,
    limits: device.limits,
    decodeVariant,
  });
  const STORAGE = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC;
  const READBACK = GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST;
  const UPLOAD = GPUBufferUsage.MAP_WRITE | GPUBufferUsage.COPY_SRC;
  const made: Slot[] = [];
  const created: GPUBuffer[] = [];
  const lendable: GPUBuffer[] = [];
  const lent = new Map<ArrayBufferLike, GPUBuffer>();
  let alive = true;
  let decode: ReturnType<typeof createBslz4DecodePass> | null = null;
  /** The slots after the first not created yet (`grow`); rejected when the state is destroyed first. */
  const unmadeSlots: { resolve: () => void; reject: (e: unknown) => void }[] = [];
  const inPreparation = new Set<GPUBuffer>();
  const shared: Record<string, GPUBuffer> = {};
  let wake: (() => void)[] = [];
  let self: EncoderState | undefined;
  const notifyLoans = () => {
    const waiting = wake;
    wake = [];
    for (const w of waiting) w();
  };
  const abandon = () => {
    for (const u of unmadeSlots.splice(0))
      u.reject(new StemflowError('aborted', 'The GPU encoder was closed.'));
  };
  const destroy = () => {
    alive = false;
    if (self) self.waitForLoans = false;
    notifyLoans();
    for (const b of inPreparation) b.destroy();
    inPreparation.clear();
    abandon();
    decode?.destroy();
    for (const b of created.splice(0)) b.destroy();
    for (const b of lendable.splice(0)) b.destroy();
    for (const slot of made) {
      slot.readback?.destroy();
      slot.readback = null;
      slot.output?.destroy();
      slot.output = null;
    }
  };
  const bits = DTYPE_BITS[params.dtype];
  const createReadback = async (bytes: number, label: string) => {
    const t = performance.now();
    device.pushErrorScope('out-of-memory');
    const buffer = device.createBuffer({
      label: `encoder ${label}`,
      size: readbackBytes(bytes, plan.lendBytes),
      usage: READBACK,
    });
    const oom = await device.popErrorScope();
    if (timings) timings.readbackCreateMs += performance.now() - t;
    if (oom) {
      buffer.destroy();
      throw new StemflowError(
        'budget',
        `GPU encoder: a readback of ${bytes} bytes does not fit this GPU's memory (${oom.message}).`,
      );
    }
    return buffer;
  };
  const giveBack = (words: ArrayBufferLike) => {
    const buffer = lent.get(words);
    if (!buffer) return false;
    lent.delete(words);
    if (alive) {
      buffer.unmap();
      lendable.push(buffer);
      notifyLoans();
    } else buffer.destroy();
    return true;
  };
  const slotBuffer = (k: number, b: GpuEncoderPlan['buffers'][number]) => {
    const upload = b.label === 'compressed upload';
    const buffer = device.createBuffer({
      label: `encoder ${k} ${b.label}`,
      size: b.bytes,
      usage: b.bound ? STORAGE : upload ? UPLOAD : READBACK,
      mappedAtCreation: upload,
    });
    created.push(buffer);
    return buffer;
  };
  const slotBuffers = (k: number) => {
    const buffers: Record<string, GPUBuffer> = {};
    for (const b of plan.buffers) if (!b.lazy) buffers[b.label] = slotBuffer(k, b);
    return buffers;
  };
  const newSlot = (buffers: Record<string, GPUBuffer>, ready: Promise<void>): Slot => ({
    buffers,
    made: ready,
    uploadReady: Promise.resolve(),
    stagingFree: Promise.resolve(),
    free: Promise.resolve(),
    readback: null,
    output: null,
  });
  const budgetError = (what: string, oom: GPUError) =>
    new StemflowError(
      'budget',
      `GPU encoder: ${what} do not fit this GPU's memory (${oom.message}); the plan: ${slots} record slot(s) of ${plan.slotBytes} bytes, a lane scratch of ${plan.sharedBytes} bytes, a decode scratch of ${plan.decodeScratchBytes} bytes and ${plan.lendReadbacks} lent readback(s) of ${plan.lendBytes} bytes (${plan.totalBytes} in all). Use smaller records or fewer slots.`,
    );
  device.pushErrorScope('out-of-memory');
  let popped = false;
  try {
    let t = performance.now();
    made.push(newSlot(slotBuffers(0), Promise.resolve()));
    for (const b of plan.shared) shared[b.label] = slotBuffer(0, { ...b, label: `${b.label} (shared)` });
    const firstSlotMs = performance.now() - t;
    t = performance.now();
    // One decode pass for the slots; its scratch (plan.decodeScratchBytes) is allocated here, in the scope.
    // The record's sums and audit come from tans-stats; of the decode's audit only the frame verdicts are read,
    // so its histogram's bins 1..255 (a workgroup atomic a value) are left out.
    decode = createBslz4DecodePass(device, {
      elemSize: (bits / 8) as 1 | 2 | 4,
      variant: plan.decodeVariant,
      auditBins: false,
      wordsPerFrame: plan.wordsPerFrame,
    });
    decode.reserve(frames, { pixels: params.geometry.pixels });
    const decodeSetupMs = performance.now() - t;
    t = performance.now();
    popped = true;
    const oom = await device.popErrorScope();
    if (timings) {
      timings.firstSlotMs += firstSlotMs;
      timings.decodeSetupMs += decodeSetupMs;
      timings.setupScopeMs += performance.now() - t;
    }
    if (oom) throw budgetError('the first record slot, the lane scratch and the decode scratch', oom);
    // The other slots: created by `grow`, one after another, each in its own scope.
    for (let k = 1; k < slots; k++) {
      const ready = new Promise<void>((resolve, reject) => {
        unmadeSlots.push({ resolve, reject });
      });
      ready.catch(() => undefined); // awaited by the records that use the slot
      made.push(newSlot({}, ready));
    }
    let growing = false;
    const grow = () => {
      if (growing) return;
      growing = true;
      void (async () => {
        for (let k = 1; k < slots; k++) {
          const next = unmadeSlots.shift();
          if (!next) return; // destroyed: rejected there
          const { resolve, reject } = next;
          // The slot's buffers in one error scope, popped once: with a scope (and its pop) per buffer, the
          // second record waited 414 ms for its staging on the H200 and the convert ran at 11.09 GB/s; with one
          // per slot, 176 ms and 13.13 GB/s (the pops resolve only as the device's queue makes progress).
          let failed: unknown = null;
          const t = performance.now();
          device.pushErrorScope('out-of-memory');
          for (const b of plan.buffers) if (!b.lazy) made[k].buffers[b.label] = slotBuffer(k, b);
          if (timings) timings.laterSlotsMs += performance.now() - t;
          const oom = await device.popErrorScope().catch(() => null);
          if (oom) failed = budgetError(`record slot ${k}`, oom);
          else if (!alive) failed = new StemflowError('aborted', 'The GPU encoder was closed.');
          if (failed) {
            for (const b of Object.values(made[k].buffers)) b.destroy();
            reject(failed);
          } else resolve();
        }
      })();
    };
    // Compiled while the first record is read (errors surface when awaited). Started after the error scope:
    // popping it can wait for pipelines being compiled (Dawn on SwiftShader did, ~2 s).
    const passes = Promise.all([
      createTansStatsPassAsync(device, { bits, tokens: plan.tokens, classes: params.classes }),
      createTansEncodePassAsync(device, { bits, tableLog: params.tableLog, tokens: plan.tokens }),
    ]).then(([stats, lanes]) => ({ stats, lanes }));
    passes.catch(() => undefined);
    self = {
      device,
      plan,
      source,
      slots: made,
      lendable,
      unmade: plan.lendReadbacks,
      preparing: false,
      inPreparation,
      alive: () => alive,
      createReadback,
      recordOutput: async (slot) => {
        if (slot.output) return slot.output;
        const bytes = plan.buffers.find((b) => b.label === 'record output')?.bytes ?? 4;
        device.pushErrorScope('out-of-memory');
        const buffer = device.createBuffer({ label: 'encoder record output', size: bytes, usage: STORAGE });
        const oom = await device.popErrorScope();
        if (oom) {
          buffer.destroy();
          throw budgetError(`a record output of ${bytes} bytes`, oom);
        }
        if (!alive) {
          buffer.destroy();
          throw new StemflowError('aborted', 'The GPU encoder was closed.');
        }
        slot.output = buffer;
        return buffer;
      },
      grow,
      abandon,
      lent,
      shared,
      laneTurn: Promise.resolve(),
      waitForLoans: lentOnly,
      loanWaiters: new Set(),
      loanChange: () => new Promise<void>((resolve) => wake.push(resolve)),
      notifyLoans,
      decode,
      passes,
      destroy,
      giveBack,
    };
    return self;
  } catch (error) {
    if (!popped) await device.popErrorScope().catch(() => null);
    destroy();
    throw error;
  }
}
