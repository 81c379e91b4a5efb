/**
 * Exhaustive verification on the GPU, a piece of a record at a time (at most `pieceFrames` frames, whole
 * mismatch blocks; gpu-verify-plan.ts). Per piece: the source's stored chunks and the piece's lanes are read
 * (concurrent reads) straight into mapped staging of one of `slots` slots, copied by the GPU into one of two
 * sets of bound inputs, decoded by bslz4-decode.wgsl into a frame-major scratch buffer, and tans-compare.wgsl
 * (gpu-verify-compare.ts) decodes every lane and compares every value. Only counts come back, in one readback
 * of a few KB at the end: mismatches per block, lanes with an error, the decode's audit. CPU twin:
 * `cpuVerifier` (verify.ts) over `tansCompare`. Memory is planned first (gpu-verify-plan.ts), for a piece:
 * smaller pieces make smaller buffers, faster to create, and a shorter first read and last compare.
 *
 * Overlap. Piece p + 1's staging copies run while piece p is decoded and compared, into the other input set.
 * (On the H200 mapped staging is device memory behind the PCIe BAR: the host's reads write into it at up to
 * ~33 GB/s, ~24 GB/s when each piece maps it again; the GPU's copies out of it are device-local.) One queue
 * runs everything, and Dawn puts a barrier before each use of a buffer whose last use differs; a barrier waits
 * for every earlier command of its source stage. The queue order per piece p is therefore:
 *   copies(p) [transfer: staging -> set p % 2], writes(p) + tag(p + 1) [transfer: the chunk index, lane offsets
 *   and tables into set p % 2; 4-byte clears of every buffer of set (p + 1) % 2 that piece p + 1 writes],
 *   decode + compare(p) [compute].
 * The copies go first, so the slot is free for the next read before the host prepares the small writes.
 * tag(p + 1) waits for the compute of piece p - 1 (the last reader of that set), so when copies(p + 1) are
 * submitted the set's last use is a transfer write: their barrier waits for earlier transfers only, not for
 * the compute of piece p, which runs alongside. decode(p) waits for transfers submitted before it, never for
 * copies(p + 1). A set's record tables (lane offsets, decode cells, class map) are written, and tagged, only
 * when its record changes. With `overlap: false` (one set, no tags) each piece's copies wait for the piece
 * before. The only host waits are a piece's staging reads (bounded by `slots`) and the final readback.
 */

import { StemflowError, throwIfAborted } from '../errors';
import { createAuditBuffer, createBslz4DecodePass } from '../gpu/passes/bslz4-decode';
import { decodeScratchBytes } from '../gpu/passes/bslz4-decode-memory';
import { createStagingPool } from '../gpu/staging-pool';
import { chunkIndex } from '../kernels/bslz4-decode';
import type { AcquisitionSource, StoredBatch } from '../source/acquisition-source';
import { createTansComparePassAsync, readVerifyCounts, tally } from './gpu-verify-compare';
import { type GpuVerifyOptions, type GpuVerifyReport, newTimings, VERIFY_SLOTS } from './gpu-verify-options';
import { planGpuVerify, planVerifyPieces, VERIFY_PIECE_FRAMES, type VerifyPiece } from './gpu-verify-plan';
import { DTYPE_BITS } from './lanes';
import type { ArchiveAcquisition } from './reader';

export {
  COMPARE_LANES_PER_DISPATCH,
  createTansComparePass,
  type TansComparePass,
} from './gpu-verify-compare';
export {
  type GpuVerifyOptions,
  type GpuVerifyReport,
  type GpuVerifyTimings,
  VERIFY_SLOTS,
} from './gpu-verify-options';
export { type GpuVerifyPlan, planGpuVerify, VERIFY_PIECE_FRAMES } from './gpu-verify-plan';

/** Staging for one piece in flight. */
interface Slot {
  chunks: GPUBuffer;
  data: GPUBuffer;
  /** Resolves when both are mapped for writing again. */
  ready: Promise<void>;
}

/** Bound inputs of one piece: chunks, chunk index, data words, lane offsets, decode cells, class map. */
type InputSet = Record<'compressed' | 'index' | 'data' | 'offsets' | 'cells' | 'classMap', GPUBuffer>;

const align4 = (n: number) => Math.ceil(n / 4) * 4;

/**
 * Verifies every count of an archived acquisition against its source on the GPU. The source must be
 * bitshuffle/LZ4 with one frame per chunk (`storedCodec.gpu`); otherwise use the CPU verifier.
 */
export async function verifyAcquisitionGpu(
  device: GPUDevice,
  acq: ArchiveAcquisition,
  src: AcquisitionSource,
  options: GpuVerifyOptions = {},
): Promise<GpuVerifyReport> {
  const { info, geometry } = acq;
  const { signal } = options;
  if (!src.storedCodec.gpu)
    throw new StemflowError('unsupported', `GPU verification: ${src.storedCodec.reason}`);
  const frameCount = info.scan[0] * info.scan[1];
  if (
    src.frameCount !== frameCount ||
    src.summary.dtype !== info.dtype ||
    src.summary.detector.join() !== info.detector.join()
  ) {
    throw new StemflowError(
      'mismatch',
      'The source is not the archived acquisition (frames, detector or dtype differ).',
    );
  }
  const t0 = performance.now();
  const bits = DTYPE_BITS[info.dtype];
  const elem = (bits / 8) as 1 | 2 | 4;
  const pixels = geometry.pixels;
  const wordsPerFrame = Math.ceil((pixels * elem) / 4);
  const pieces = planVerifyPieces(acq.records, {
    slices: geometry.slices,
    blockFrames: info.blockFrames,
    pieceFrames: options.pieceFrames ?? VERIFY_PIECE_FRAMES,
    storedSizes: src.storedSizes(),
  });
  let [maxFrames, maxStored, maxDataWords] = [1, 4, 1];
  for (const p of pieces) {
    maxFrames = Math.max(maxFrames, p.frames);
    maxStored = Math.max(maxStored, p.storedBytes);
    maxDataWords = Math.max(maxDataWords, p.to - p.from);
  }
  const tPieces = performance.now();
  const overlap = options.overlap ?? true;
  // One dispatch a piece (the walk decode by default: the list decode was no faster; performance.md, 19th session).
  // Of the decode's audit only the failed frames are read (the source errors), so its histogram's bins 1..255 (a
  // workgroup atomic a value) are left out.
  const decode = createBslz4DecodePass(device, {
    elemSize: elem,
    variant: options.decodeVariant,
    auditBins: false,
    wordsPerFrame,
  });
  const plan = planGpuVerify({
    frameCount,
    maxFrames,
    pixels,
    wordsPerFrame,
    slices: geometry.slices,
    classes: info.classes,
    tableLog: info.tableLog,
    blocks: acq.records.reduce((n, r) => n + Math.ceil(r.frames / info.blockFrames), 0),
    maxStoredBytes: maxStored,
    maxDataWords,
    maxRecordFrames: Math.max(1, ...acq.records.map((r) => r.frames)),
    slots: Math.max(1, Math.min(Math.floor(options.slots ?? VERIFY_SLOTS), pieces.length)),
    sets: overlap && pieces.length > 1 ? 2 : 1,
    decodeScratchBytes: decodeScratchBytes(decode.variant, maxFrames, {
      maxWorkgroups: device.limits.maxComputeWorkgroupsPerDimension,
      maxFramesPerDispatch: maxFrames,
      pixels,
      elemSize: elem,
    }),
    budgetBytes: options.budgetBytes,
    limits: device.limits,
  });
  const buffers: GPUBuffer[] = [];
  const bytesOf = (label: string) => plan.buffers.find((b) => b.label === label)?.bytes ?? 4;
  const make = (label: string, usage: number, mappedAtCreation = false) => {
    const b = device.createBuffer({
      label: `verify ${label}`,
      size: bytesOf(label),
      usage,
      mappedAtCreation,
    });
    buffers.push(b);
    return b;
  };
  const STORAGE_IN = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST;
  const STORAGE_OUT = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC;
  const slots: Slot[] = [];
  /** The slots' staging, taken from options.staging (else from a pool that keeps nothing) and given back. */
  const staging = options.staging ?? createStagingPool(0);
  const pooled: GPUBuffer[] = [];
  const staged: Promise<{ piece: VerifyPiece; slot: Slot; stored: StoredBatch }>[] = [];
  const budgetError = (oom: GPUError) =>
    new StemflowError(
      'budget',
      `GPU verification: ${plan.totalBytes} bytes planned (${plan.slots} staging slot(s), ${plan.sets} input set(s)) do not fit this GPU's memory (${oom.message}).`,
    );
  // Compiled while the first pieces are read and the buffers created.
  const comparing = createTansComparePassAsync(device, {
    bits,
    tableLog: info.tableLog,
    tokens: acq.records[0].tables.tokens,
    lanesPerDispatch: options.compareLanes,
  });
  comparing.catch(() => undefined); // awaited below
  try {
    const timings = newTimings(pieces.length, tPieces - t0);
    const profiled = async (what: 'copyMs' | 'decodeMs' | 'compareMs', t: number) => {
      await device.queue.onSubmittedWorkDone();
      timings[what] += performance.now() - t;
    };

    /** Reads piece i's chunks and lanes into its slot's mapped staging buffers (after the slot is free). */
    const stage = async (i: number) => {
      const piece = pieces[i];
      const slot = slots[i % slots.length];
      const line = timings.pieces[i];
      let t = performance.now();
      await slot.ready;
      timings.stagingWaitMs += performance.now() - t;
      t = performance.now();
      line.ready = t - t0;
      const chunkRange = new Uint8Array(slot.chunks.getMappedRange());
      const dataRange = new Uint8Array(slot.data.getMappedRange());
      line.readStart = performance.now() - t0;
      // Both reads end before a failure is reported: neither may write into staging that is being freed.
      const [read, words] = await Promise.allSettled([
        src.readStored(piece.firstFrame, piece.frames, signal, chunkRange),
        piece.to > piece.from
          ? acq.readRecordData(acq.records[piece.record].index, signal, dataRange, piece)
          : Promise.resolve(),
      ]);
      line.readEnd = performance.now() - t0;
      if (read.status === 'rejected') throw read.reason;
      if (words.status === 'rejected') throw words.reason;
      const stored = read.value;
      if (words.value && words.value.buffer !== dataRange.buffer)
        dataRange.set(new Uint8Array(words.value.buffer, words.value.byteOffset, words.value.byteLength));
      if (stored.bytes.buffer !== chunkRange.buffer || stored.bytes.byteOffset !== 0) {
        if (align4(stored.bytes.byteLength) > chunkRange.byteLength) {
          throw new StemflowError(
            'invalid',
            `Frames from ${piece.firstFrame}: the stored chunks exceed the planned staging.`,
          );
        }
        chunkRange.set(stored.bytes);
      }
      timings.readMs += performance.now() - t;
      return { piece, slot, stored };
    };
    const stageNext = () => {
      const i = staged.length;
      if (i >= pieces.length) return;
      const p = stage(i);
      p.catch(() => undefined); // awaited in order below
      staged.push(p);
    };
    /**
     * A 4-byte clear of every buffer of a set that its next piece writes: their last use becomes a transfer
     * (see the header). The record's tables and lane offsets are written only when the set's record changes.
     */
    const tag = (set: InputSet, tables: boolean, label: string) => {
      const encoder = device.createCommandEncoder({ label });
      for (const [name, b] of Object.entries(set)) {
        if (tables || !['offsets', 'cells', 'classMap'].includes(name)) encoder.clearBuffer(b, 0, 4);
      }
      device.queue.submit([encoder.finish()]);
    };

    // The first slot's staging first: its piece is read (on other threads) while the GPU buffers and then the
    // other slots are created (mapped staging costs ~0.2 ms a MB to create on the H200), so the first piece
    // is on the GPU before the last slot exists.
    const addSlot = async () => {
      const t = performance.now();
      device.pushErrorScope('out-of-memory');
      const take = (label: string) => {
        const b = staging.take(device, bytesOf(label), `verify ${label}`);
        pooled.push(b);
        return b;
      };
      const chunks = take('chunks staging');
      const data = take('record data staging');
      const oom = await device.popErrorScope();
      if (oom) throw budgetError(oom);
      slots.push({ chunks, data, ready: Promise.resolve() });
      stageNext();
      timings.setupStagingMs += performance.now() - t;
    };
    timings.setupPrepareMs = performance.now() - t0;
    await addSlot();
    await new Promise((resolve) => setTimeout(resolve, 0)); // the reads are issued before the buffers below
    const tBuffers = performance.now();
    device.pushErrorScope('out-of-memory');
    const decoded = make('decoded', GPUBufferUsage.STORAGE);
    const flags = make('pixel flags', STORAGE_IN);
    const frameErrors = make('frame errors', STORAGE_OUT);
    const totals = make('frame totals', GPUBufferUsage.STORAGE);
    const mismatches = make('mismatches', STORAGE_OUT | GPUBufferUsage.COPY_DST);
    const laneErrors = make('lane errors', STORAGE_OUT);
    const audit = createAuditBuffer(device, 'verify audit');
    buffers.push(audit);
    const sets: InputSet[] = [];
    for (let k = 0; k < plan.sets; k++) {
      sets.push({
        compressed: make('compressed', STORAGE_IN),
        index: make('index', STORAGE_IN),
        data: make('record data', STORAGE_IN),
        offsets: make('lane offsets', STORAGE_IN),
        cells: make('decode cells', STORAGE_IN),
        classMap: make('class map', STORAGE_IN),
      });
    }
    decode.reserve(maxFrames, { pixels, maxFramesPerDispatch: maxFrames });
    const oom = await device.popErrorScope();
    if (oom) throw budgetError(oom);
    timings.setupBuffersMs = performance.now() - tBuffers;
    while (slots.length < plan.slots) await addSlot();
    const tPipeline = performance.now();
    const compare = await comparing;
    timings.setupPipelineMs = performance.now() - tPipeline;
    timings.setupMs = performance.now() - t0;
    /** The record whose tables each set holds. */
    const setRecord = sets.map(() => -1);
    for (let i = 0; i < pieces.length; i++) {
      throwIfAborted(signal);
      let t = performance.now();
      const { piece, slot, stored } = await staged[i];
      timings.gpuWaitMs += performance.now() - t;
      t = performance.now();
      const rec = acq.records[piece.record];
      const set = sets[i % sets.length];
      const storedBytes = align4(stored.bytes.byteLength);
      const dataWords = piece.to - piece.from;
      slot.chunks.unmap();
      slot.data.unmap();
      timings.unmapMs += performance.now() - t;
      // The staging copies first, in their own submission, so the slot is mapped again (and the piece after
      // the next ones read into it) as soon as they are done; the host's work for this piece follows.
      const label = `verify record ${rec.index} from frame ${piece.start}`;
      const copies = device.createCommandEncoder({ label: `${label}: staging` });
      if (storedBytes > 0) copies.copyBufferToBuffer(slot.chunks, 0, set.compressed, 0, storedBytes);
      if (dataWords > 0) copies.copyBufferToBuffer(slot.data, 0, set.data, 0, dataWords * 4);
      device.queue.submit([copies.finish()]);
      slot.ready = Promise.all([
        slot.chunks.mapAsync(GPUMapMode.WRITE),
        slot.data.mapAsync(GPUMapMode.WRITE),
      ]).then(() => undefined);
      slot.ready.catch(() => undefined); // awaited by the next read into this slot, or at the end
      stageNext();
      if (options.profile) await profiled('copyMs', t);
      t = performance.now();
      // Queue writes go with the next submission (the tag, else the passes): transfers into this piece's set,
      // whose last use was its own copies or tag. The record's lane offsets go with its tables: the compare
      // pass reads the piece's from offsetBase, less wordBase.
      device.queue.writeBuffer(set.index, 0, chunkIndex(stored));
      if (setRecord[i % sets.length] !== piece.record) {
        device.queue.writeBuffer(set.offsets, 0, rec.offsets);
        device.queue.writeBuffer(set.cells, 0, rec.tables.decodeCells);
        device.queue.writeBuffer(set.classMap, 0, new Uint32Array(rec.tables.classMap));
        setRecord[i % sets.length] = piece.record;
      }
      timings.uploadMs += performance.now() - t;
      if (sets.length > 1 && i + 1 < pieces.length) {
        const next = (i + 1) % sets.length;
        tag(sets[next], setRecord[next] !== pieces[i + 1].record, `verify: tag set ${next}`);
      }
      t = performance.now();
      let encoder = device.createCommandEncoder({ label });
      const p1 = decode.encode(encoder, {
        compressed: set.compressed,
        compressedBytes: storedBytes,
        index: set.index,
        flags,
        decoded,
        errors: frameErrors,
        totals,
        audit,
        frameCount: piece.frames,
        pixels,
        firstFrame: piece.firstFrame,
        wordsPerFrame,
        maxFramesPerDispatch: maxFrames,
        // `flags` (all zero: every value is compared) is the same for every piece: packed into bits once.
        flagsPacked: i > 0,
      });
      if (options.profile) {
        device.queue.submit([encoder.finish()]);
        await profiled('decodeMs', t);
        t = performance.now();
        encoder = device.createCommandEncoder({ label: `${label}: compare` });
      }
      const p2 = compare.encode(encoder, {
        data: set.data,
        dataWords,
        offsets: set.offsets,
        cells: set.cells,
        classMap: set.classMap,
        reference: decoded,
        mismatches,
        errors: laneErrors,
        frames: piece.frames,
        slices: geometry.slices,
        slicePixels: geometry.slicePixels,
        pixels,
        wordsPerFrame,
        blockFrames: info.blockFrames,
        blockBase: piece.blockBase,
        offsetBase: piece.start * geometry.slices,
        wordBase: piece.from,
        cols: info.detector[1],
      });
      device.queue.submit([encoder.finish()]);
      timings.pieces[i].submitted = performance.now() - t0;
      p1.destroy();
      p2.destroy();
      if (options.profile) await profiled('compareMs', t);
      options.onProgress?.(piece.firstFrame + piece.frames, frameCount);
    }
    const t = performance.now();
    const counts = await readVerifyCounts(device, { mismatches, laneErrors, audit }, plan.blocks);
    timings.gpuWaitMs += performance.now() - t;
    timings.totalMs = performance.now() - t0;
    return { ...tally(acq, counts), ms: timings.totalMs, timings, plan, decodeVariant: decode.variant.name };
  } finally {
    // Reads may still be writing into mapped staging after a failure: let them finish first.
    await Promise.allSettled(staged);
    await Promise.allSettled(slots.map((s) => s.ready));
    for (const b of buffers) b.destroy();
    // The staging goes back to its pool, which keeps only buffers that are mapped again and destroys the rest.
    for (const b of pooled) staging.give(b);
    decode.destroy();
  }
}
