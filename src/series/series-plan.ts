/**
 * The GPU memory plan of a series (src/series/series.ts), made before anything is allocated: where every record's
 * lane words, offsets, decoder tables and class maps go (data buffers within the adapter's binding limit), the
 * query scratch and the load's staging; refused with the numbers when it does not fit.
 */
import { NEIGHBOUR_BUCKETS } from '../archive/hybrid-uint';
import type { Archive } from '../archive/reader';
import { StemflowError } from '../errors';

/** u32 words of a record entry (`struct Record` in tans-query.wgsl). */
export const RECORD_WORDS = 16;
/** Staging buffers (one record each) between the files and the GPU while a series loads. */
export const LOAD_STAGING_SLOTS = 4;

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

export interface Placement {
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
  /**
   * Bytes the chosen acquisitions need besides the series (their exact index, estimated): the longest prefix that
   * fits with them; when not even one does, the longest that fits without.
   */
  extraBytes?: (acquisitions: number[]) => number,
): { acquisitions: number[]; plan: SeriesPlan } {
  if (extraBytes) {
    const alone = fitSeries(archive, acquisitions, limits, budgetBytes, maxBufferBytes, undefined);
    // Bisection over the prefixes the series alone admits, now with the extra bytes.
    const fits = (k: number) =>
      k <= alone.acquisitions.length &&
      planSeries(archive, acquisitions.slice(0, k), limits, Number.MAX_SAFE_INTEGER, maxBufferBytes)
        .totalBytes +
        extraBytes(acquisitions.slice(0, k)) <=
        budgetBytes;
    let lo = 0;
    let hi = alone.acquisitions.length + 1;
    while (lo + 1 < hi) {
      const mid = (lo + hi) >> 1;
      if (fits(mid)) lo = mid;
      else hi = mid;
    }
    if (lo === 0) return alone;
    const chosen = acquisitions.slice(0, lo);
    return { acquisitions: chosen, plan: planSeries(archive, chosen, limits, budgetBytes, maxBufferBytes) };
  }
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
  let fits: SeriesPlan | null = null;
  let hi = acquisitions.length;
  while (lo + 1 < hi) {
    const mid = (lo + hi) >> 1;
    const plan = tryPlan(mid);
    if (plan) {
      lo = mid;
      fits = plan;
    } else hi = mid;
  }
  // Not even one fits: the refusal of one acquisition, with its numbers.
  fits ??= planSeries(archive, acquisitions.slice(0, 1), limits, budgetBytes, maxBufferBytes);
  return { acquisitions: acquisitions.slice(0, Math.max(lo, 1)), plan: fits };
}
