/**
 * Exhaustive verification on the GPU. Per record: the source's stored chunks and the record's lanes are read
 * (concurrent reads) straight into mapped staging buffers of one of `slots` slots, copied on the GPU,
 * decoded by bslz4-decode.wgsl into a frame-major scratch buffer, and tans-compare.wgsl decodes every lane
 * and compares every value. The next records are read while the GPU works; a slot is reused once its
 * staging buffers are mapped again (the only waits). Mismatch counts per block and lane error codes stay on
 * the GPU until one readback at the end. CPU twin: `cpuVerifier` (verify.ts) over `tansCompare`
 * (tans-decode.ts).
 */
import { readBuffer } from '../compute/readback';
import { StemflowError, throwIfAborted } from '../errors';
import { checkBindable, type DispatchChunk, encodeChunks } from '../gpu/chunked-dispatch';
import { createAuditBuffer, createBslz4DecodePass } from '../gpu/passes/bslz4-decode';
import { structLayout } from '../gpu/uniform-layout';
import source from '../shaders/tans-compare.wgsl?raw';
import type { AcquisitionSource, StoredBatch } from '../source/acquisition-source';
import { NEIGHBOUR_BUCKETS } from './hybrid-uint';
import { DTYPE_BITS } from './lanes';
import type { ArchiveAcquisition, ArchiveRecord } from './reader';
import type { VerifyReport } from './verify';

const layout = structLayout(source, 'Params');
const WORKGROUP = 64;
/**
 * Lanes per compare dispatch (default). Each lane keeps one cache line of its stream and one of its reference
 * frame in use while it walks its slice, and a warp's 32 lanes read 32 different lines. At 65,536 lanes a
 * dispatch an H200 holds ~500 lanes per SM, ~128 KB of lines, which can stay in L1 while a line's values are
 * read; a whole record in one dispatch (262,144 lanes at 16 lanes a frame, ~2,000 resident per SM) needs ~4x that,
 * so most loads go to L2: compare took 18.2 ms a record instead of 8.4 ms (commit 4fd47ce; the L1 footprint is
 * the likely cause). `bench convert` measures 32,768 to 262,144.
 */
export const COMPARE_LANES_PER_DISPATCH = 65536;

export interface TansComparePass {
  encode(
    encoder: GPUCommandEncoder,
    job: {
      data: GPUBuffer;
      dataWords: number;
      offsets: GPUBuffer;
      cells: GPUBuffer;
      classMap: GPUBuffer;
      reference: GPUBuffer;
      mismatches: GPUBuffer;
      errors: GPUBuffer;
      frames: number;
      slices: number;
      slicePixels: number;
      pixels: number;
      wordsPerFrame: number;
      blockFrames: number;
      blockBase: number;
      laneBase: number;
      cols: number;
    },
  ): GPUBuffer;
}

export function createTansComparePass(
  device: GPUDevice,
  {
    bits,
    tableLog,
    tokens,
    lanesPerDispatch = COMPARE_LANES_PER_DISPATCH,
  }: { bits: 8 | 16 | 32; tableLog: number; tokens: number; lanesPerDispatch?: number },
): TansComparePass {
  if (
    !Number.isInteger(lanesPerDispatch) ||
    lanesPerDispatch < WORKGROUP ||
    lanesPerDispatch % WORKGROUP !== 0
  )
    throw new StemflowError(
      'invalid',
      `Compare lanes per dispatch must be a positive multiple of ${WORKGROUP} (got ${lanesPerDispatch}).`,
    );
  const pipeline = device.createComputePipeline({
    label: `tans-compare u${bits}`,
    layout: 'auto',
    compute: {
      module: device.createShaderModule({ label: 'tans-compare.wgsl', code: source }),
      entryPoint: 'main',
      constants: { WORKGROUP_SIZE: WORKGROUP, TABLE_LOG: tableLog, BITS: bits, TOKENS: tokens },
    },
  });
  return {
    encode(encoder, job) {
      for (const [b, what] of [
        [job.data, 'record data'],
        [job.reference, 'reference'],
      ] as const) {
        checkBindable(device, b, what);
      }
      const lanes = job.frames * job.slices;
      const chunks: DispatchChunk[] = [];
      for (let first = 0; first < lanes; first += lanesPerDispatch) {
        const count = Math.min(lanesPerDispatch, lanes - first);
        chunks.push({
          params: {
            lane_first: first,
            lane_count: count,
            frames: job.frames,
            slices: job.slices,
            slice_pixels: job.slicePixels,
            pixels: job.pixels,
            words_per_frame: job.wordsPerFrame,
            block_frames: job.blockFrames,
            block_base: job.blockBase,
            data_words: job.dataWords,
            cols: job.cols,
            lane_base: job.laneBase,
          },
          workgroups: Math.ceil(count / WORKGROUP),
        });
      }
      return encodeChunks(
        encoder,
        {
          device,
          pipeline,
          layout,
          label: 'tans-compare',
          bindings: [
            { binding: 1, resource: { buffer: job.data } },
            { binding: 2, resource: { buffer: job.offsets } },
            { binding: 3, resource: { buffer: job.cells } },
            { binding: 4, resource: { buffer: job.classMap } },
            { binding: 5, resource: { buffer: job.reference } },
            { binding: 6, resource: { buffer: job.mismatches } },
            { binding: 7, resource: { buffer: job.errors } },
          ],
        },
        chunks,
      );
    },
  };
}

/** Staging for one record in flight. */
interface Slot {
  chunks: GPUBuffer;
  data: GPUBuffer;
  /** Resolves when both are mapped for writing again. */
  ready: Promise<void>;
}

const align4 = (n: number) => Math.ceil(n / 4) * 4;

export interface GpuVerifyTimings {
  /** Reading the stored chunks and the lanes into mapped staging (summed over records; overlapped). */
  readMs: number;
  /** Host: unmapping, small uploads, encoding the passes. */
  uploadMs: number;
  /** Waiting for a record's staging to be read (or for its slot), and for the final readback. */
  gpuWaitMs: number;
  totalMs: number;
  /**
   * Profile mode only (each step waited for), summed over records: staging copies with the small uploads,
   * decode, compare.
   */
  copyMs: number;
  decodeMs: number;
  compareMs: number;
}

/**
 * Verifies every count of an archived acquisition against its source on the GPU. The source must be
 * bitshuffle/LZ4 with one frame per chunk (`storedCodec.gpu`); otherwise use the CPU verifier.
 */
export async function verifyAcquisitionGpu(
  device: GPUDevice,
  acq: ArchiveAcquisition,
  src: AcquisitionSource,
  options: {
    signal?: AbortSignal;
    onProgress?: (framesDone: number, frameCount: number) => void;
    /** Records staged at once (default 2). */
    slots?: number;
    /** Wait after each pass so copies, decode and compare are timed apart (slower; default false). */
    profile?: boolean;
    /** Lanes per compare dispatch (default COMPARE_LANES_PER_DISPATCH; a multiple of 64). */
    compareLanes?: number;
  } = {},
): Promise<VerifyReport & { timings: GpuVerifyTimings; sourceErrors: number }> {
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
  const tokens = acq.records[0].tables.tokens;
  const L = 1 << info.tableLog;
  const maxFrames = Math.max(...acq.records.map((r) => r.frames));
  const maxDataWords = Math.max(1, ...acq.records.map((r) => r.dataWords));
  const storedSizes = src.storedSizes();
  let maxStored = 4;
  for (const r of acq.records) {
    let s = 0;
    for (let f = r.firstFrame; f < r.firstFrame + r.frames; f++) s += storedSizes[f];
    maxStored = Math.max(maxStored, s);
  }
  const blocks = acq.records.reduce((n, r) => n + Math.ceil(r.frames / info.blockFrames), 0);
  const buffers: GPUBuffer[] = [];
  const make = (label: string, size: number, usage: number, mappedAtCreation = false) => {
    const b = device.createBuffer({
      label: `verify ${label}`,
      size: align4(Math.max(4, size)),
      usage,
      mappedAtCreation,
    });
    buffers.push(b);
    return b;
  };
  const STORAGE_IN = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST;
  device.pushErrorScope('out-of-memory');
  const compressed = make('compressed', maxStored + 4, STORAGE_IN);
  const index = make('index', maxFrames * 8, STORAGE_IN);
  const flags = make('flags', pixels * 4, STORAGE_IN);
  const decoded = make('decoded', maxFrames * wordsPerFrame * 4, GPUBufferUsage.STORAGE);
  const frameErrors = make('frame errors', frameCount * 4, GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC);
  const totals = make('frame totals', frameCount * 8, GPUBufferUsage.STORAGE);
  const audit = createAuditBuffer(device, 'verify audit');
  buffers.push(audit);
  const data = make('record data', maxDataWords * 4, STORAGE_IN);
  const offsets = make('lane offsets', (maxFrames * geometry.slices + 1) * 4, STORAGE_IN);
  const cells = make('decode cells', info.classes * NEIGHBOUR_BUCKETS * L * 4, STORAGE_IN);
  const classMap = make('class map', pixels * 4, STORAGE_IN);
  const mismatches = make(
    'mismatches',
    blocks * 4,
    GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
  );
  const laneErrors = make(
    'lane errors',
    frameCount * geometry.slices * 4,
    GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC,
  );
  // Staging: the big inputs of `slots` records, mapped for writing on the host.
  const slotCount = Math.max(1, Math.min(options.slots ?? 2, acq.records.length));
  const STAGING = GPUBufferUsage.MAP_WRITE | GPUBufferUsage.COPY_SRC;
  const slots: Slot[] = [];
  for (let k = 0; k < slotCount; k++) {
    const stagedChunks = make(`chunks staging ${k}`, maxStored + 4, STAGING, true);
    const stagedData = make(`record data staging ${k}`, maxDataWords * 4, STAGING, true);
    slots.push({ chunks: stagedChunks, data: stagedData, ready: Promise.resolve() });
  }
  const oom = await device.popErrorScope();
  const staged: Promise<{ rec: ArchiveRecord; slot: Slot; stored: StoredBatch }>[] = [];
  let decode: ReturnType<typeof createBslz4DecodePass> | null = null;
  try {
    if (oom)
      throw new StemflowError('budget', `GPU verification: the GPU ran out of memory (${oom.message}).`);
    decode = createBslz4DecodePass(device, { elemSize: elem });
    const compare = createTansComparePass(device, {
      bits,
      tableLog: info.tableLog,
      tokens,
      lanesPerDispatch: options.compareLanes,
    });
    const timings: GpuVerifyTimings = {
      readMs: 0,
      uploadMs: 0,
      gpuWaitMs: 0,
      totalMs: 0,
      copyMs: 0,
      decodeMs: 0,
      compareMs: 0,
    };
    const profiled = async (what: 'copyMs' | 'decodeMs' | 'compareMs', t: number) => {
      await device.queue.onSubmittedWorkDone();
      timings[what] += performance.now() - t;
    };

    /** Reads record i's chunks and lanes into its slot's mapped staging buffers (after the slot is free). */
    const stage = async (i: number) => {
      const rec = acq.records[i];
      const slot = slots[i % slotCount];
      await slot.ready;
      const t = performance.now();
      const chunkRange = new Uint8Array(slot.chunks.getMappedRange());
      const dataRange = new Uint8Array(slot.data.getMappedRange());
      // Both reads end before a failure is reported: neither may write into staging that is being freed.
      const [read, words] = await Promise.allSettled([
        src.readStored(rec.firstFrame, rec.frames, signal, chunkRange),
        rec.dataWords > 0 ? acq.readRecordData(rec.index, signal, dataRange) : Promise.resolve(),
      ]);
      if (read.status === 'rejected') throw read.reason;
      if (words.status === 'rejected') throw words.reason;
      const stored = read.value;
      if (words.value && words.value.buffer !== dataRange.buffer)
        dataRange.set(new Uint8Array(words.value.buffer, words.value.byteOffset, words.value.byteLength));
      if (stored.bytes.buffer !== chunkRange.buffer || stored.bytes.byteOffset !== 0) {
        if (align4(stored.bytes.byteLength) > chunkRange.byteLength) {
          throw new StemflowError(
            'invalid',
            `Record ${rec.index}: the stored chunks exceed the planned staging.`,
          );
        }
        chunkRange.set(stored.bytes);
      }
      timings.readMs += performance.now() - t;
      return { rec, slot, stored };
    };

    let blockBase = 0;
    const stageNext = () => {
      const i = staged.length;
      if (i >= acq.records.length) return;
      const p = stage(i);
      p.catch(() => undefined); // awaited in order below
      staged.push(p);
    };
    for (let k = 0; k < slotCount; k++) stageNext();
    for (let i = 0; i < acq.records.length; i++) {
      throwIfAborted(signal);
      let t = performance.now();
      const { rec, slot, stored } = await staged[i];
      timings.gpuWaitMs += performance.now() - t;
      t = performance.now();
      const storedBytes = align4(stored.bytes.byteLength);
      slot.chunks.unmap();
      slot.data.unmap();
      const idx = new Uint32Array(rec.frames * 2);
      for (let f = 0; f < rec.frames; f++) {
        idx[2 * f] = stored.offsets[f];
        idx[2 * f + 1] = stored.sizes[f];
      }
      device.queue.writeBuffer(index, 0, idx);
      device.queue.writeBuffer(offsets, 0, rec.offsets);
      device.queue.writeBuffer(cells, 0, rec.tables.decodeCells);
      device.queue.writeBuffer(classMap, 0, Uint32Array.from(rec.tables.classMap));
      // The staging copies go in their own submission, so the slot is mapped again (and the record after the
      // next one read into it) as soon as they are done, while this record is decoded and compared.
      const copies = device.createCommandEncoder({ label: `verify record ${rec.index}: staging` });
      if (storedBytes > 0) copies.copyBufferToBuffer(slot.chunks, 0, compressed, 0, storedBytes);
      if (rec.dataWords > 0) copies.copyBufferToBuffer(slot.data, 0, data, 0, rec.dataWords * 4);
      timings.uploadMs += performance.now() - t;
      t = performance.now();
      device.queue.submit([copies.finish()]);
      slot.ready = Promise.all([
        slot.chunks.mapAsync(GPUMapMode.WRITE),
        slot.data.mapAsync(GPUMapMode.WRITE),
      ]).then(() => undefined);
      if (options.profile) await profiled('copyMs', t);
      t = performance.now();
      let encoder = device.createCommandEncoder({ label: `verify record ${rec.index}` });
      const p1 = decode.encode(encoder, {
        compressed,
        compressedBytes: storedBytes,
        index,
        flags,
        decoded,
        errors: frameErrors,
        totals,
        audit,
        frameCount: rec.frames,
        pixels,
        firstFrame: rec.firstFrame,
        wordsPerFrame,
      });
      if (options.profile) {
        device.queue.submit([encoder.finish()]);
        await profiled('decodeMs', t);
        t = performance.now();
        encoder = device.createCommandEncoder({ label: `verify record ${rec.index}: compare` });
      }
      const p2 = compare.encode(encoder, {
        data,
        dataWords: rec.dataWords,
        offsets,
        cells,
        classMap,
        reference: decoded,
        mismatches,
        errors: laneErrors,
        frames: rec.frames,
        slices: geometry.slices,
        slicePixels: geometry.slicePixels,
        pixels,
        wordsPerFrame,
        blockFrames: info.blockFrames,
        blockBase,
        laneBase: rec.firstFrame * geometry.slices,
        cols: info.detector[1],
      });
      device.queue.submit([encoder.finish()]);
      p1.destroy();
      p2.destroy();
      if (options.profile) await profiled('compareMs', t);
      stageNext();
      blockBase += Math.ceil(rec.frames / info.blockFrames);
      options.onProgress?.(rec.firstFrame + rec.frames, frameCount);
    }
    const t = performance.now();
    const [mm, le, fe] = await Promise.all([
      readU32(device, mismatches, blocks),
      readU32(device, laneErrors, frameCount * geometry.slices),
      readU32(device, frameErrors, frameCount),
    ]);
    timings.gpuWaitMs += performance.now() - t;
    timings.totalMs = performance.now() - t0;
    const badBlocks: VerifyReport['badBlocks'] = [];
    let total = 0;
    let b = 0;
    for (const rec of acq.records) {
      for (let first = 0; first < rec.frames; first += info.blockFrames, b++) {
        if (mm[b] === 0) continue;
        total += mm[b];
        badBlocks.push({
          firstFrame: rec.firstFrame + first,
          frames: Math.min(info.blockFrames, rec.frames - first),
          mismatches: mm[b],
        });
      }
    }
    return {
      acquisition: info.name,
      compared: frameCount * pixels,
      mismatches: total,
      badBlocks,
      laneErrors: le.reduce((n, e) => n + (e === 0 ? 0 : 1), 0),
      sourceErrors: fe.reduce((n, e) => n + (e === 0 ? 0 : 1), 0),
      ms: timings.totalMs,
      timings,
    };
  } finally {
    // Reads may still be writing into mapped staging after a failure: let them finish first.
    await Promise.allSettled(staged);
    await Promise.allSettled(slots.map((s) => s.ready));
    for (const b of buffers) b.destroy();
    decode?.destroy();
  }
}

/** `count` u32 words of a buffer (COPY_SRC), through the project's one readback helper. */
async function readU32(device: GPUDevice, buffer: GPUBuffer, count: number): Promise<Uint32Array> {
  const bytes = await readBuffer(device, buffer, 0, count * 4);
  return new Uint32Array(bytes.buffer, bytes.byteOffset, count);
}
