/**
 * A series: acquisitions of an archive kept encoded on the GPU and queried without a decoded 4D tensor.
 *
 * - Admission: the encoded records, their tables and the query scratch are counted before anything is
 *   allocated; a series that does not fit the budget or the adapter's limits is refused with the numbers
 *   (load a subset instead).
 * - Queries (all exact integers): the virtual image of a binary detector mask for every loaded acquisition
 *   or a subset in a chosen order (flagged pixels of each acquisition are always left out); the diffraction
 *   frames at one scan position; the summed diffraction pattern of each acquisition (stored in the archive).
 * - Live masks: a query after a previous one decodes, per acquisition, whichever is cheaper: the new mask
 *   from scratch, or only the pixels it adds and removes (delta, exact); `rebase` recomputes from scratch.
 * - Calls are serialised; results are the caller's copies; after `release` every call fails clearly.
 */
import { NEIGHBOUR_BUCKETS } from '../archive/hybrid-uint';
import { DTYPE_BITS, type LaneGeometry } from '../archive/lanes';
import type { Archive, ArchiveAcquisition } from '../archive/reader';
import type { Values } from '../archive/tans-stats';
import { StemflowError, throwIfAborted } from '../errors';
import { checkBindable, type DispatchChunk, encodeChunks } from '../gpu/chunked-dispatch';
import type { GpuTimer } from '../gpu/gpu-timer';
import { structLayout } from '../gpu/uniform-layout';
import source from '../shaders/tans-query.wgsl?raw';
import { neededPixels } from './tans-query';

const layout = structLayout(source, 'Params');
const WORKGROUP = 64;
/**
 * Invocations of one dispatch: 1,048,576 lanes (16,384 workgroups; at most ~2,304 values each, ~15 ms of ADF
 * work on an H200, below the ~50 ms single dispatches on which Dawn failed, ../shared/gpu-kit). Dispatches of a
 * data buffer write one sums buffer, so each waits for the one before; fewer, larger ones lose less to their
 * tails: H200, 2 acquisitions, interleaved rounds (`bench series --tune`): BF 32.1 ms against 34.6 at 262,144
 * lanes, ADF 118.6 against 122.6 (docs/bench/series-tune-2026-11-30.json).
 */
const LANES_PER_DISPATCH = 1 << 20;
/** u32 words of a record entry (`struct Record` in tans-query.wgsl). */
const RECORD_WORDS = 16;
/** Staging buffers (one record each) between the files and the GPU while a series loads. */
const LOAD_STAGING_SLOTS = 4;

export interface SeriesPlan {
  acquisitions: number[];
  /** Encoded lane words of every record. */
  dataBytes: number;
  /** Lane offsets, decoder tables and class maps. */
  indexBytes: number;
  /** Mask bits, slice needs, per-frame sums and their readback staging. */
  scratchBytes: number;
  totalBytes: number;
  dataBuffers: number;
  lines: string[];
}

const MiB = 1024 * 1024;
const fmt = (b: number) => `${(b / MiB).toFixed(1)} MiB`;

interface Placement {
  acquisition: number;
  record: number;
  buffer: number;
  dataBase: number;
  offsetsBase: number;
  cellsBase: number;
  classBase: number;
  frameBase: number;
  /** First frame of the record in its data buffer's sums buffer. */
  sumsBase: number;
}

/** Plans the GPU memory of a series before anything is allocated; refuses with the numbers when it does not fit. */
export function planSeries(
  archive: Archive,
  acquisitions: number[],
  limits: { maxStorageBufferBindingSize: number; maxBufferSize: number },
  budgetBytes: number,
  /** Largest data buffer to place records in (capped by the binding limit). */
  maxBufferBytes = Number.POSITIVE_INFINITY,
  /** Staging buffers of one record each while loading (host-visible memory, freed after the load). */
  stagingSlots = LOAD_STAGING_SLOTS,
): SeriesPlan & {
  placements: Placement[];
  bufferBytes: number[];
  bufferFrames: number[];
  bufferIndex: { offsets: number; cells: number; classes: number }[];
  frames: number;
  bitsWords: number;
  needWords: number;
  maxRecordBytes: number;
} {
  const maxBinding = Math.min(limits.maxStorageBufferBindingSize, limits.maxBufferSize);
  const placements: Placement[] = [];
  const bufferBytes: number[] = [];
  /** Frames whose sums each data buffer's records write (one sums buffer per data buffer). */
  const bufferFrames: number[] = [];
  /**
   * Lane offsets, decoder tables and class maps (words) of each data buffer's records: a dispatch binds only
   * its buffer's, so no index buffer grows with the series (75 acquisitions' tables alone are 2.7 GB).
   */
  const bufferIndex: { offsets: number; cells: number; classes: number }[] = [];
  let frames = 0;
  let bitsWords = 0;
  let needWords = 0;
  let maxRecordBytes = 4;
  for (const a of acquisitions) {
    const acq = archive.acquisitions[a];
    if (!acq) throw new StemflowError('invalid', `The archive has no acquisition ${a}.`);
    const L = 1 << acq.info.tableLog;
    for (const rec of acq.records) {
      const bytes = rec.dataWords * 4;
      maxRecordBytes = Math.max(maxRecordBytes, bytes);
      const need = {
        offsets: rec.offsets.length,
        cells: acq.info.classes * NEIGHBOUR_BUCKETS * L,
        classes: Math.ceil(acq.geometry.pixels / 4),
      };
      if (bytes > maxBinding || Math.max(need.offsets, need.cells, need.classes) * 4 > maxBinding) {
        throw new StemflowError(
          'budget',
          `Record ${rec.index} of ${acq.info.name} takes ${fmt(bytes)} (lane offsets ${fmt(need.offsets * 4)}, decoder tables ${fmt(need.cells * 4)}); this GPU binds at most ${fmt(maxBinding)}.`,
        );
      }
      let buffer = bufferBytes.length - 1;
      const index = bufferIndex[buffer];
      if (
        buffer < 0 ||
        bufferBytes[buffer] + bytes > Math.min(maxBinding, maxBufferBytes) ||
        (index.offsets + need.offsets) * 4 > maxBinding ||
        (index.cells + need.cells) * 4 > maxBinding ||
        (index.classes + need.classes) * 4 > maxBinding ||
        (bufferFrames[buffer] + rec.frames) * 16 > maxBinding
      ) {
        bufferBytes.push(0);
        bufferFrames.push(0);
        bufferIndex.push({ offsets: 0, cells: 0, classes: 0 });
        buffer++;
      }
      const at = bufferIndex[buffer];
      placements.push({
        acquisition: a,
        record: rec.index,
        buffer,
        dataBase: bufferBytes[buffer] / 4,
        offsetsBase: at.offsets,
        cellsBase: at.cells,
        classBase: at.classes,
        frameBase: frames + rec.firstFrame,
        sumsBase: bufferFrames[buffer],
      });
      bufferBytes[buffer] += bytes;
      bufferFrames[buffer] += rec.frames;
      at.offsets += need.offsets;
      at.cells += need.cells;
      at.classes += need.classes;
    }
    frames += acq.info.scan[0] * acq.info.scan[1];
    bitsWords += acq.geometry.pixels;
    needWords += 2 * acq.geometry.slices;
  }
  const dataBytes = bufferBytes.reduce((a, b) => a + b, 0);
  const indexBytes = 4 * bufferIndex.reduce((n, b) => n + b.offsets + b.cells + b.classes, 0);
  const scratchBytes = 4 * (bitsWords + needWords) + 2 * frames * 16 + placements.length * RECORD_WORDS * 4;
  const totalBytes = dataBytes + indexBytes + scratchBytes;
  const lines = [
    `${acquisitions.length} acquisition(s), ${frames} frames`,
    `encoded data ${fmt(dataBytes)} in ${bufferBytes.length} buffer(s)`,
    `lane offsets, tables and class maps ${fmt(indexBytes)}`,
    `query scratch ${fmt(scratchBytes)}`,
    `total ${fmt(totalBytes)} of a budget of ${fmt(budgetBytes)}`,
    `while loading: ${stagingSlots} staging buffer(s) of ${fmt(maxRecordBytes)} (host-visible)`,
  ];
  // Mask bits and slice needs are shared by every dispatch: 4 B per pixel and 8 B per slice per acquisition.
  if ((bitsWords + needWords) * 4 > maxBinding) {
    throw new StemflowError(
      'budget',
      `The series' mask bits take ${fmt(bitsWords * 4)}; this GPU binds at most ${fmt(maxBinding)}. Load fewer acquisitions.`,
    );
  }
  if (totalBytes > budgetBytes) {
    throw new StemflowError(
      'budget',
      `The series needs ${fmt(totalBytes)} on the GPU (${lines.slice(1, 4).join('; ')}); the budget is ${fmt(budgetBytes)}. Load fewer acquisitions or raise the budget.`,
    );
  }
  return {
    acquisitions,
    dataBytes,
    indexBytes,
    scratchBytes,
    totalBytes,
    dataBuffers: bufferBytes.length,
    lines,
    placements,
    bufferBytes,
    bufferFrames,
    bufferIndex,
    frames,
    bitsWords,
    needWords,
    maxRecordBytes,
  };
}

/**
 * The longest prefix of `acquisitions` (in order) that fits the budget and the adapter, with its plan: what to load
 * when the whole series does not fit. Refuses, with the numbers for one acquisition, when not even the first fits.
 */
export function fitSeries(
  archive: Archive,
  acquisitions: number[],
  limits: { maxStorageBufferBindingSize: number; maxBufferSize: number },
  budgetBytes: number,
  maxBufferBytes?: number,
): { acquisitions: number[]; plan: SeriesPlan } {
  const tryPlan = (k: number) => {
    try {
      return planSeries(archive, acquisitions.slice(0, k), limits, budgetBytes, maxBufferBytes);
    } catch (e) {
      if (e instanceof StemflowError && e.kind === 'budget') return null;
      throw e;
    }
  };
  const all = tryPlan(acquisitions.length);
  if (all) return { acquisitions, plan: all };
  // A plan's bytes grow with every acquisition added: the largest k that fits is found by bisection.
  let lo = 0;
  let hi = acquisitions.length;
  while (lo + 1 < hi) {
    const mid = (lo + hi) >> 1;
    if (tryPlan(mid)) lo = mid;
    else hi = mid;
  }
  if (lo === 0) planSeries(archive, acquisitions.slice(0, 1), limits, budgetBytes, maxBufferBytes);
  return { acquisitions: acquisitions.slice(0, lo), plan: tryPlan(lo) as SeriesPlan };
}

export interface SeriesImages {
  /** Acquisition indices (into the archive), in the order asked for. */
  order: number[];
  /** Exact sums per scan position (row-major), one image per acquisition in `order`. */
  images: Float64Array[];
  /** How each acquisition was computed. */
  modes: ('full' | 'delta')[];
  /** Pixels decoded per frame (summed over lanes), per acquisition: the work of the query. */
  decodedPixels: number[];
  ms: number;
  /**
   * Where the time went (ms): mask bits, needs and dispatches on the host; from submission until the sums are
   * mapped (GPU work and readback); the exact combine into float64 images on the host.
   */
  stages: { prepareMs: number; gpuAndReadbackMs: number; combineMs: number };
}

export interface Series {
  readonly plan: SeriesPlan;
  readonly acquisitions: readonly ArchiveAcquisition[];
  /** Virtual images of a binary mask (1 = include) of detector pixels. */
  virtualImages(
    mask: Uint8Array,
    options?: {
      order?: number[];
      mode?: 'auto' | 'full' | 'delta';
      /** GPU timestamps: marks 'query' (before the passes), 'copy' (before the readback copies) and 'end'. */
      timer?: GpuTimer;
    },
  ): Promise<SeriesImages>;
  /** Recomputes the last mask's images from scratch (must equal what the deltas gave). */
  rebase(): Promise<SeriesImages>;
  /** The diffraction frame at (row, col) of each acquisition in `order` (CPU decode of one frame each). */
  frames(row: number, col: number, order?: number[]): Promise<Values[]>;
  /** The summed diffraction pattern of each acquisition (exact, from the archive's stored sums). */
  sumPatterns(order?: number[]): Float64Array[];
  release(): void;
}

/** Loads acquisitions of an opened archive onto the GPU (encoded). */
export async function loadSeries(
  device: GPUDevice,
  archive: Archive,
  options: {
    acquisitions?: number[];
    budgetBytes: number;
    /** Largest data buffer to place records in (default and cap: the adapter's binding limit). */
    maxBufferBytes?: number;
    /** Staging buffers of one record each between the files and the GPU while loading (default 4). */
    loadStagingSlots?: number;
    /** Query invocations per workgroup (a power of two, 32..256; default 64). */
    queryWorkgroupSize?: number;
    /** Lane invocations per query dispatch (a power of two, 2^14..2^22; default 2^18). */
    lanesPerDispatch?: number;
    signal?: AbortSignal;
    onProgress?: (done: number, total: number) => void;
  },
): Promise<Series> {
  const chosen = options.acquisitions ?? archive.acquisitions.map((_, i) => i);
  if (chosen.length === 0) throw new StemflowError('invalid', 'No acquisitions to load.');
  const first = archive.acquisitions[chosen[0]];
  for (const a of chosen) {
    const acq = archive.acquisitions[a];
    if (!acq) throw new StemflowError('invalid', `The archive has no acquisition ${a}.`);
    if (
      acq.geometry.pixels !== first.geometry.pixels ||
      acq.info.detector.join() !== first.info.detector.join()
    ) {
      throw new StemflowError(
        'mismatch',
        `${acq.info.name} has a ${acq.info.detector.join('x')} detector; ${first.info.name} ${first.info.detector.join('x')}. A series shares one detector.`,
      );
    }
  }
  const workgroupSize = options.queryWorkgroupSize ?? WORKGROUP;
  const lanesPerDispatch = options.lanesPerDispatch ?? LANES_PER_DISPATCH;
  const pow2 = (v: number, lo: number, hi: number) =>
    Number.isInteger(v) && v >= lo && v <= hi && (v & (v - 1)) === 0;
  if (!pow2(workgroupSize, 32, Math.min(256, device.limits.maxComputeInvocationsPerWorkgroup)))
    throw new StemflowError(
      'invalid',
      `A query workgroup of ${workgroupSize} is not a power of two in 32..256.`,
    );
  if (
    !pow2(lanesPerDispatch, 2 ** 14, 2 ** 22) ||
    lanesPerDispatch / workgroupSize > device.limits.maxComputeWorkgroupsPerDimension
  )
    throw new StemflowError(
      'invalid',
      `${lanesPerDispatch} lanes per dispatch is not a power of two in 2^14..2^22 that this GPU dispatches.`,
    );
  const stagingSlots = options.loadStagingSlots ?? LOAD_STAGING_SLOTS;
  if (!Number.isInteger(stagingSlots) || stagingSlots < 1 || stagingSlots > 16)
    throw new StemflowError('invalid', `${stagingSlots} load staging buffers: give 1 to 16.`);
  const plan = planSeries(
    archive,
    chosen,
    device.limits,
    options.budgetBytes,
    options.maxBufferBytes,
    stagingSlots,
  );
  const pixels = first.geometry.pixels;
  const buffers: GPUBuffer[] = [];
  const make = (label: string, size: number, usage: number) => {
    const b = device.createBuffer({
      label: `series ${label}`,
      size: Math.max(16, Math.ceil(size / 16) * 16),
      usage,
    });
    buffers.push(b);
    return b;
  };
  const STORAGE_IN = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST;
  const destroyAll = () => {
    for (const b of buffers) b.destroy();
    buffers.length = 0;
  };
  device.pushErrorScope('out-of-memory');
  const data = plan.bufferBytes.map((bytes, i) => make(`data ${i}`, bytes, STORAGE_IN));
  const offsets = plan.bufferIndex.map((b, i) => make(`lane offsets ${i}`, b.offsets * 4, STORAGE_IN));
  const cells = plan.bufferIndex.map((b, i) => make(`decoder tables ${i}`, b.cells * 4, STORAGE_IN));
  const classMaps = plan.bufferIndex.map((b, i) => make(`class maps ${i}`, b.classes * 4, STORAGE_IN));
  const bits = make('mask bits', plan.bitsWords * 4, STORAGE_IN);
  const need = make('slice needs', plan.needWords * 4, STORAGE_IN);
  // One sums buffer per data buffer: dispatches of different data buffers write different buffers, so the GPU
  // need not wait for one to finish before the next starts.
  const sums = plan.bufferFrames.map((frames, i) =>
    make(
      `frame sums ${i}`,
      frames * 16,
      GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
    ),
  );
  const recordTable = make('record table', plan.placements.length * RECORD_WORDS * 4, STORAGE_IN);
  const staging = make('readback', plan.frames * 16, GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST);
  const recordStaging = Array.from({ length: stagingSlots }, (_, i) =>
    device.createBuffer({
      label: `series load staging ${i}`,
      size: plan.maxRecordBytes,
      usage: GPUBufferUsage.MAP_WRITE | GPUBufferUsage.COPY_SRC,
      mappedAtCreation: true,
    }),
  );
  buffers.push(...recordStaging);
  const oom = await device.popErrorScope();
  // Errors of the writes below (out of memory for their staging, for one) are caught by this scope.
  device.pushErrorScope('out-of-memory');
  if (oom) {
    await device.popErrorScope();
    destroyAll();
    throw new StemflowError(
      'budget',
      `The GPU could not hold the series (${plan.lines.join('; ')}): ${oom.message}`,
    );
  }
  // A device lost while loading (or before) is reported by the load, not by the first query.
  let lost: GPUDeviceLostInfo | null = null;
  void device.lost.then((info) => {
    lost = info;
  });
  let scopeOpen = true;
  const inflight: Promise<unknown>[] = [];
  try {
    let done = 0;
    // Each record's lane words are read straight into a mapped staging buffer of a ring of `slots` (concurrent
    // reads, no host copy), copied on the GPU, and the buffer is mapped again for a later record: at most
    // `slots` records are between the file and the GPU (bounded back-pressure; before, queueing every record
    // with writeBuffer held the whole series in staging memory until the end, and Dawn lost the device past
    // ~25 GB). Records are read as soon as their staging buffer is mapped again, so reads run ahead of copies.
    const ring = recordStaging.map((buffer) => ({ buffer, ready: Promise.resolve() as Promise<unknown> }));
    const reads: (Promise<void> | undefined)[] = [];
    const readAt = (i: number) => {
      const q = plan.placements[i];
      if (!q || reads[i]) return;
      const slot = ring[i % ring.length];
      const ready = slot.ready;
      reads[i] = ready.then(async () => {
        throwIfAborted(options.signal);
        const into = new Uint8Array(slot.buffer.getMappedRange());
        await archive.acquisitions[q.acquisition].readRecordData(q.record, options.signal, into);
      });
      inflight.push(reads[i]);
      reads[i].catch(() => {}); // awaited below in order; a failure is reported there
    };
    for (const [i, p] of plan.placements.entries()) {
      throwIfAborted(options.signal);
      const acq = archive.acquisitions[p.acquisition];
      const rec = acq.records[p.record];
      for (let k = 0; k < ring.length; k++) readAt(i + k);
      await reads[i];
      if (lost) break;
      const slot = ring[i % ring.length];
      slot.buffer.unmap();
      const encoder = device.createCommandEncoder({ label: 'series load' });
      encoder.copyBufferToBuffer(slot.buffer, 0, data[p.buffer], p.dataBase * 4, rec.dataWords * 4);
      device.queue.writeBuffer(offsets[p.buffer], p.offsetsBase * 4, rec.offsets);
      device.queue.writeBuffer(cells[p.buffer], p.cellsBase * 4, rec.tables.decodeCells);
      const packed = new Uint8Array(Math.ceil(pixels / 4) * 4);
      packed.set(rec.tables.classMap);
      device.queue.writeBuffer(classMaps[p.buffer], p.classBase * 4, packed);
      device.queue.submit([encoder.finish()]);
      slot.ready = slot.buffer.mapAsync(GPUMapMode.WRITE);
      inflight.push(slot.ready);
      options.onProgress?.(++done, plan.placements.length);
      readAt(i + ring.length);
    }
    device.queue.submit([]);
    await device.queue.onSubmittedWorkDone();
    scopeOpen = false;
    const failure = await device.popErrorScope();
    if (lost || failure) {
      const reason = lost
        ? `the device was lost: ${(lost as GPUDeviceLostInfo).message || (lost as GPUDeviceLostInfo).reason}`
        : (failure as GPUError).message;
      throw new StemflowError(
        'device',
        `The GPU did not take the series' data (${reason}). Load fewer acquisitions (${plan.lines[0]}).`,
      );
    }
  } catch (error) {
    // Reads still writing into mapped staging must end before the buffers are destroyed.
    await Promise.allSettled(inflight);
    if (scopeOpen) await device.popErrorScope().catch(() => null);
    destroyAll();
    if (lost && !(error instanceof StemflowError)) {
      throw new StemflowError(
        'device',
        `The GPU did not take the series' data (the device was lost: ${(lost as GPUDeviceLostInfo).message || (lost as GPUDeviceLostInfo).reason}). Load fewer acquisitions (${plan.lines[0]}).`,
      );
    }
    throw error;
  }
  for (const b of recordStaging) b.destroy();
  buffers.splice(buffers.length - recordStaging.length, recordStaging.length);

  // One pipeline per (dtype, table log): acquisitions of a series usually share both.
  const pipelines = new Map<string, GPUComputePipeline>();
  const module = device.createShaderModule({ label: 'tans-query.wgsl', code: source });
  const pipelineFor = (acq: ArchiveAcquisition) => {
    const bitsPer = DTYPE_BITS[acq.info.dtype];
    const key = `${bitsPer}/${acq.info.tableLog}`;
    let p = pipelines.get(key);
    if (!p) {
      p = device.createComputePipeline({
        label: `tans-query ${key}`,
        layout: 'auto',
        compute: {
          module,
          entryPoint: 'main',
          constants: {
            WORKGROUP_SIZE: workgroupSize,
            TABLE_LOG: acq.info.tableLog,
            BITS: bitsPer,
            TOKENS: acq.records[0].tables.tokens,
          },
        },
      });
      pipelines.set(key, p);
    }
    return p;
  };
  for (const b of data) checkBindable(device, b, 'series data');

  // Where each loaded acquisition's bits, needs and frames live.
  const slot = new Map<
    number,
    { bitsBase: number; needBase: number; frameBase: number; flagged: Uint8Array }
  >();
  {
    let bitsBase = 0;
    let needBase = 0;
    let frameBase = 0;
    for (const a of chosen) {
      const acq = archive.acquisitions[a];
      const flagged = new Uint8Array(pixels);
      if (acq.pixelMask) for (let i = 0; i < pixels; i++) flagged[i] = acq.pixelMask[i] !== 0 ? 1 : 0;
      slot.set(a, { bitsBase, needBase, frameBase, flagged });
      bitsBase += pixels;
      needBase += 2 * acq.geometry.slices;
      frameBase += acq.info.scan[0] * acq.info.scan[1];
    }
  }

  let released = false;
  let chain: Promise<unknown> = Promise.resolve();
  const serial = <T>(fn: () => Promise<T>): Promise<T> => {
    const next = chain.then(() => {
      if (released) throw new StemflowError('invalid', 'This series was released; load it again.');
      return fn();
    });
    chain = next.catch(() => {});
    return next;
  };
  // The last mask and each acquisition's image for it (for deltas).
  let lastMask: Uint8Array | null = null;
  let lastOrder: number[] = [];
  const lastImages = new Map<number, Float64Array>();

  const run = async (
    mask: Uint8Array,
    order: number[],
    mode: 'auto' | 'full' | 'delta',
    timer?: GpuTimer,
  ): Promise<SeriesImages> => {
    const t0 = performance.now();
    if (mask.length !== pixels)
      throw new StemflowError('invalid', `The mask has ${mask.length} pixels; the detector ${pixels}.`);
    for (const a of order)
      if (!slot.has(a)) throw new StemflowError('invalid', `Acquisition ${a} is not loaded in this series.`);
    if (new Set(order).size !== order.length)
      throw new StemflowError('invalid', `The order ${order.join(', ')} names an acquisition twice.`);
    const bitsAll = new Uint32Array(plan.bitsWords);
    const needAll = new Uint32Array(plan.needWords);
    const modes: ('full' | 'delta')[] = [];
    const decodedPixels: number[] = [];
    for (const a of order) {
      const acq = archive.acquisitions[a];
      const s = slot.get(a) as { bitsBase: number; needBase: number; flagged: Uint8Array };
      const full = new Uint8Array(pixels);
      const delta = new Uint8Array(pixels);
      const previous = mode !== 'full' && lastMask && lastImages.has(a) ? lastMask : null;
      for (let i = 0; i < pixels; i++) {
        if (s.flagged[i]) continue;
        const now = mask[i] !== 0;
        full[i] = now ? 1 : 0;
        if (previous) {
          const before = previous[i] !== 0;
          delta[i] = now && !before ? 1 : !now && before ? 2 : 0;
        }
      }
      const needFull = neededPixels(full, acq.geometry);
      const needDelta = neededPixels(delta, acq.geometry);
      const cost = (n: Uint32Array) => n.reduce((x, y) => x + y, 0);
      // A lane decodes up to the last pixel it needs: the cheaper of the two is the one that ends earlier.
      const useDelta = previous !== null && (mode === 'delta' || cost(needDelta) < cost(needFull));
      const chosenBits = useDelta ? delta : full;
      const chosenNeed = useDelta ? needDelta : needFull;
      modes.push(useDelta ? 'delta' : 'full');
      decodedPixels.push(cost(chosenNeed));
      bitsAll.set(chosenBits, s.bitsBase);
      needAll.set(chosenNeed, s.needBase);
      let k = 0;
      for (let sl = 0; sl < acq.geometry.slices; sl++)
        if (chosenNeed[sl] > 0) needAll[s.needBase + acq.geometry.slices + k++] = sl;
    }
    device.queue.writeBuffer(bits, 0, bitsAll);
    device.queue.writeBuffer(need, 0, needAll);
    const encoder = device.createCommandEncoder({ label: 'series query' });
    const params: GPUBuffer[] = [];
    // Dispatch groups by pipeline and data buffer: one dispatch (or a few of LANES_PER_DISPATCH) covers every
    // asked-for record in the buffer; a record table maps invocations to records.
    const asked = new Set(order);
    interface Group {
      key: string;
      pipeline: GPUComputePipeline;
      buffer: number;
      first: number;
      count: number;
      lanes: number;
    }
    const groups: Group[] = [];
    const table = new Uint32Array(plan.placements.length * RECORD_WORDS);
    const used = new Set<number>();
    let entries = 0;
    // Placements are in buffer order, so a group's records are consecutive entries of the table.
    for (const p of plan.placements) {
      if (!asked.has(p.acquisition)) continue;
      const acq = archive.acquisitions[p.acquisition];
      const s = slot.get(p.acquisition) as { bitsBase: number; needBase: number };
      const g: LaneGeometry = acq.geometry;
      const active = neededPixelsCount(needAll, s.needBase, g.slices);
      if (active === 0) continue;
      const rec = acq.records[p.record];
      const pipeline = pipelineFor(acq);
      const key = `${pipeline.label}|${p.buffer}`;
      let group = groups.at(-1);
      if (!group || group.key !== key) {
        group = { key, pipeline, buffer: p.buffer, first: entries, count: 0, lanes: 0 };
        groups.push(group);
      }
      table.set(
        [
          group.lanes,
          rec.frames,
          g.slices,
          g.slicePixels,
          g.pixels,
          p.dataBase,
          p.offsetsBase,
          p.cellsBase,
          p.classBase,
          p.sumsBase,
          rec.dataWords,
          acq.info.detector[1],
          s.bitsBase,
          s.needBase,
          2 * plan.bufferFrames[p.buffer],
          0,
        ],
        entries * RECORD_WORDS,
      );
      group.lanes += rec.frames * active;
      group.count++;
      entries++;
      used.add(p.buffer);
    }
    device.queue.writeBuffer(recordTable, 0, table, 0, Math.max(4, entries * RECORD_WORDS));
    for (const b of used) encoder.clearBuffer(sums[b]);
    timer?.mark(encoder, 'query');
    for (const group of groups) {
      const chunks: DispatchChunk[] = [];
      for (let first = 0; first < group.lanes; first += lanesPerDispatch) {
        const count = Math.min(lanesPerDispatch, group.lanes - first);
        chunks.push({
          params: {
            lane_first: first,
            lane_count: count,
            record_first: group.first,
            record_count: group.count,
          },
          workgroups: Math.ceil(count / workgroupSize),
        });
      }
      params.push(
        encodeChunks(
          encoder,
          {
            device,
            pipeline: group.pipeline,
            layout,
            label: 'tans-query',
            bindings: [
              { binding: 1, resource: { buffer: data[group.buffer] } },
              { binding: 2, resource: { buffer: offsets[group.buffer] } },
              { binding: 3, resource: { buffer: cells[group.buffer] } },
              { binding: 4, resource: { buffer: classMaps[group.buffer] } },
              { binding: 5, resource: { buffer: bits } },
              { binding: 6, resource: { buffer: need } },
              { binding: 7, resource: { buffer: sums[group.buffer] } },
              { binding: 8, resource: { buffer: recordTable } },
            ],
          },
          chunks,
        ),
      );
    }
    timer?.mark(encoder, 'copy');
    // Only the asked-for acquisitions' frames come back, each acquisition's records in frame order: accumulator A
    // (8 B a frame), and for an acquisition computed as a delta accumulator B after it.
    let stagingAt = 0;
    const stagingOffsets = order.map((a, i) => {
      const at = stagingAt;
      const acq = archive.acquisitions[a];
      stagingAt += acq.info.scan[0] * acq.info.scan[1] * (modes[i] === 'delta' ? 16 : 8);
      return at;
    });
    order.forEach((a, i) => {
      const acq = archive.acquisitions[a];
      const n = acq.info.scan[0] * acq.info.scan[1];
      for (const p of plan.placements) {
        if (p.acquisition !== a) continue;
        const rec = acq.records[p.record];
        const planes = modes[i] === 'delta' ? [0, 1] : [0];
        for (const plane of planes) {
          const at = stagingOffsets[i] + (plane * n + rec.firstFrame) * 8;
          if (used.has(p.buffer)) {
            const from = (plane * plan.bufferFrames[p.buffer] + p.sumsBase) * 8;
            encoder.copyBufferToBuffer(sums[p.buffer], from, staging, at, rec.frames * 8);
          } else {
            // No lane of this buffer ran (the mask needs no pixel): the sums are zero.
            encoder.clearBuffer(staging, at, rec.frames * 8);
          }
        }
      }
    });
    timer?.mark(encoder, 'end');
    device.queue.submit([encoder.finish()]);
    for (const p of params) p.destroy();
    const tSubmit = performance.now();
    const mapped = Math.max(16, Math.ceil(stagingAt / 16) * 16);
    try {
      await staging.mapAsync(GPUMapMode.READ, 0, mapped);
    } catch (e) {
      // A lost device (or a destroyed buffer) aborts the mapping: say so, typed.
      throw new StemflowError(
        'device',
        `The GPU did not finish the series query (${e instanceof Error ? e.message || e.name : String(e)}); the device may have been lost. Release the series and load it again, or load fewer acquisitions.`,
      );
    }
    const tMapped = performance.now();
    // The exact images, straight from the mapped words (u64 sums as (lo, hi); every image fits 2^53).
    let images: Float64Array[];
    try {
      images = combine(new Uint32Array(staging.getMappedRange(0, mapped)));
    } finally {
      staging.unmap();
    }
    function combine(words: Uint32Array): Float64Array[] {
      return order.map((a, i) => {
        const acq = archive.acquisitions[a];
        const n = acq.info.scan[0] * acq.info.scan[1];
        const base = stagingOffsets[i] / 4;
        const out = new Float64Array(n);
        if (modes[i] === 'full') {
          for (let f = 0; f < n; f++) out[f] = words[base + 2 * f] + words[base + 2 * f + 1] * 2 ** 32;
          return out;
        }
        const before = lastImages.get(a) as Float64Array;
        const removedBase = base + 2 * n;
        for (let f = 0; f < n; f++) {
          const added = words[base + 2 * f] + words[base + 2 * f + 1] * 2 ** 32;
          const removed = words[removedBase + 2 * f] + words[removedBase + 2 * f + 1] * 2 ** 32;
          out[f] = before[f] + added - removed;
        }
        return out;
      });
    }
    // Deltas build on these images; acquisitions not asked for keep an image of an older mask: drop them.
    if (!lastMask || !sameMask(lastMask, mask)) {
      for (const a of [...lastImages.keys()]) if (!order.includes(a)) lastImages.delete(a);
    }
    lastMask = mask.slice();
    lastOrder = order.slice();
    order.forEach((a, i) => {
      lastImages.set(a, images[i]);
    });
    const out = images.map((im) => im.slice());
    const tEnd = performance.now();
    return {
      order,
      images: out,
      modes,
      decodedPixels,
      ms: tEnd - t0,
      stages: {
        prepareMs: tSubmit - t0,
        gpuAndReadbackMs: tMapped - tSubmit,
        combineMs: tEnd - tMapped,
      },
    };
  };

  return {
    plan,
    acquisitions: chosen.map((a) => archive.acquisitions[a]),
    virtualImages: (mask, o = {}) =>
      serial(() => run(mask.slice(), o.order ?? chosen, o.mode ?? 'auto', o.timer)),
    rebase: () =>
      serial(() => {
        if (!lastMask) throw new StemflowError('invalid', 'No mask has been queried yet.');
        return run(lastMask, lastOrder, 'full');
      }),
    frames: (row, col, order = chosen) =>
      serial(async () => {
        const out: Values[] = [];
        for (const a of order) {
          const acq = archive.acquisitions[a];
          const [rows, cols] = acq.info.scan;
          if (
            !Number.isInteger(row) ||
            !Number.isInteger(col) ||
            row < 0 ||
            col < 0 ||
            row >= rows ||
            col >= cols
          ) {
            throw new StemflowError(
              'invalid',
              `(${row}, ${col}) is outside the ${rows}x${cols} scan of ${acq.info.name}.`,
            );
          }
          out.push(await acq.readFrames(row * cols + col, 1));
        }
        return out;
      }),
    sumPatterns: (order = chosen) => {
      if (released) throw new StemflowError('invalid', 'This series was released; load it again.');
      return order.map((a) => {
        const p = archive.acquisitions[a]?.sumPattern;
        if (!p)
          throw new StemflowError('unsupported', `The archive stores no pixel sums for acquisition ${a}.`);
        return p.slice();
      });
    },
    release() {
      released = true;
      destroyAll();
    },
  };
}

function neededPixelsCount(needAll: Uint32Array, base: number, slices: number): number {
  let n = 0;
  for (let s = 0; s < slices; s++) if (needAll[base + s] > 0) n++;
  return n;
}

function sameMask(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if ((a[i] !== 0) !== (b[i] !== 0)) return false;
  return true;
}
