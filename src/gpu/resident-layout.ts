/**
 * The resident layout: where every value of a loaded scan lives on the GPU (docs/pass-graph.md, "Resident").
 * Detector-major: pixel p's scan image (frame s at element s) is one row of `wordsPerPixel` u32 words; rows are
 * spread over several GPUBuffers because one storage binding is limited (2 GiB on the H200, 1 GiB on
 * SwiftShader). Pixel p lives in row buffer `floor(p / pixelsPerBuffer)` at word
 * `(p mod pixelsPerBuffer) * wordsPerPixel`. Pure TypeScript: the plan exists before any allocation.
 *
 * Two forms (`form`):
 * - 'packed' (uint8, uint32): one plane, values packed little-endian like the decoded slot (4 or 1 per word).
 * - 'planes' (uint16): value = lo + 256 x hi, held as two byte planes of the same row geometry (4 scan
 *   positions per word, like uint8): the low plane holds every low byte, the high plane the high bytes, and a
 *   hot bitmap has one bit per (pixel, segment of `segmentFrames` positions), set iff a value of that segment
 *   is above 255. High-plane words of cold segments are zero and never need to be read: counts above 255 are
 *   rare outside the bright-field disk, so a virtual image reads about half the bytes of the packed form.
 * Row tiles (`tileFrames`): a row buffer holds its rows' positions [0, tileFrames) first, row after row, then
 * positions [tileFrames, 2 tileFrames), and so on (the last tile may be shorter): word w of row r of a buffer of
 * R rows is at t0 x R + r x min(tileWords, wordsPerPixel - t0) + (w - t0), t0 = w - w mod tileWords
 * (`residentWordIndex` in src/gpu/resident-index.ts; WGSL `resident_index` in shaders/common/resident-tile.wgsl). Each pixel's scan image is
 * then contiguous per tile (tileFrames consecutive positions) instead of over the whole scan. The load tiles
 * its rows by its batch (src/gpu/load-plan.ts), so a batch writes one contiguous region of each row buffer
 * (tileFrames x R bytes a plane) instead of a short run in every row 256 KiB apart: the transpose's stores
 * are bound by how much address range they spread over (docs/performance.md). tileFrames >= framesPadded
 * is the untiled layout (one tile: tileWords = wordsPerPixel).
 * The buffers of a resident set, in order (`bufferBytes`): the low (or only) plane's row buffers, then for
 * 'planes' the high plane's buffers and the hot bitmap, and for a slotted high plane its slot table
 * (`residentParts` splits them).
 *
 * The high plane is 'full' (rows like the low plane) or 'slots': one slot pool per row buffer holds only hot
 * segments, slotFrames bytes each, and the slot table has one u32 per (pixel, segment): 0 for a segment without
 * a slot, else its slot in its row buffer's pool + 1. The load fills slots as segments turn hot
 * (gpu/passes/high-pool-place.ts; `slottedResidentLayout`), or a full plane is compacted into them after a load
 * (`compactResidentLayout`). Slots are in no particular order.
 */
import { StemflowError } from '../errors.ts';
import { bufferPixelRange } from './resident-index.ts';

export type ElemSize = 1 | 2 | 4;
export type ResidentForm = 'packed' | 'planes';

/** Rows are padded to 16 bytes so that readers can load vec4<u32> (resident-virtual-image). */
export const ROW_ALIGN_BYTES = 16;
/** Scan positions per hot-bitmap segment by default (a multiple of SEGMENT_ALIGN). */
export const DEFAULT_SEGMENT_FRAMES = 4096;
/** Segments are whole transpose tiles (128 positions), so a workgroup span touches at most 17 of them. */
export const SEGMENT_ALIGN = 128;

export interface ResidentLayoutRequest {
  /** Scan positions (frames), N. */
  frames: number;
  /** Detector pixels per frame, P. */
  pixels: number;
  /** Bytes per stored value (uint8, uint16, uint32). */
  elemSize: ElemSize;
  /** maxStorageBufferBindingSize of the device. */
  maxBindingBytes: number;
  /** maxBufferSize of the device (default: no further limit). */
  maxBufferBytes?: number;
  /** Caps pixels per buffer (tests force several buffers with it). */
  pixelsPerBufferLimit?: number;
  /** uint16: scan positions per hot segment (a multiple of 128; default 4,096). */
  segmentFrames?: number;
  /**
   * Scan positions per row tile (above): a multiple of 16 (uint8, uint16; 4 for uint32) and, for uint16, of
   * segmentFrames. Default (or any value >= the padded row): untiled.
   */
  tileFrames?: number;
}

export interface ResidentLayout {
  frames: number;
  pixels: number;
  elemSize: ElemSize;
  /** 'planes' for uint16, 'packed' otherwise. */
  form: ResidentForm;
  /** Values in one row word: 4 (uint8, and each byte plane of uint16) or 1 (uint32). */
  valuesPerWord: 1 | 4;
  /** `frames` rounded up so that each row is a whole number of 16-byte groups (zeros beyond `frames`). */
  framesPadded: number;
  /** u32 words per pixel row (per plane) = framesPadded / valuesPerWord (a multiple of 4). */
  wordsPerPixel: number;
  /** Scan positions per row tile, and its row words (a multiple of 4); wordsPerPixel when untiled. */
  tileFrames: number;
  tileWords: number;
  /** A multiple of the decoded slot's values per word (so a buffer's first pixel starts a slot word). */
  pixelsPerBuffer: number;
  /** Row buffers per plane: ceil(pixels / pixelsPerBuffer). */
  rowBuffers: number;
  /** Bytes of each row buffer of a plane; the last may be smaller. */
  rowBufferBytes: number[];
  /** Planes: 1 (packed) or 2 (lo, hi). */
  planes: 1 | 2;
  /** 'planes': positions per hot segment, segments per pixel, bitmap words per pixel; 0 for 'packed'. */
  segmentFrames: number;
  segments: number;
  hotWordsPerPixel: number;
  /** Bytes of the hot bitmap (pixels x hotWordsPerPixel x 4); 0 for 'packed'. */
  hotBytes: number;
  /**
   * 'planes': the high plane 'full' (rows like the low plane) or 'slots' (hot segments only, in slot pools
   * addressed through the slot table, above); null for 'packed'.
   */
  high: 'full' | 'slots' | null;
  /** 'slots': the slots each row buffer's pool holds (its capacity; the load may leave some unused). */
  hotSlots: number[];
  /** 'slots': bytes per slot, min(segmentFrames, framesPadded) (a scan of one segment keeps no padding). */
  slotFrames: number;
  /** Every buffer of the resident set: plane 0 rows, [high plane buffers, hot bitmap, ['slots': slot table]]. */
  bufferBytes: number[];
  totalBytes: number;
}

export function planResidentLayout(req: ResidentLayoutRequest): ResidentLayout {
  const { frames, pixels, elemSize, maxBindingBytes } = req;
  if (![1, 2, 4].includes(elemSize)) {
    throw new StemflowError('unsupported', `Values of ${elemSize} bytes cannot be held resident.`);
  }
  for (const [name, v] of [
    ['frames', frames],
    ['pixels', pixels],
    ['maxBindingBytes', maxBindingBytes],
  ] as const) {
    if (!Number.isSafeInteger(v) || v <= 0) {
      throw new StemflowError('invalid', `The resident layout needs a positive integer ${name}, not ${v}.`);
    }
  }
  const form: ResidentForm = elemSize === 2 ? 'planes' : 'packed';
  const planes = form === 'planes' ? 2 : 1;
  // Bytes of one row element: a plane holds one byte per value.
  const rowElem = form === 'planes' ? 1 : elemSize;
  const valuesPerWord = (4 / rowElem) as 1 | 4;
  // The decoded slot's values per word: a row buffer starts at a whole slot word.
  const slotValuesPerWord = 4 / elemSize;
  const framesPerGroup = ROW_ALIGN_BYTES / rowElem;
  const framesPadded = Math.ceil(frames / framesPerGroup) * framesPerGroup;
  const wordsPerPixel = framesPadded / valuesPerWord;
  const bytesPerPixel = wordsPerPixel * 4;
  const limitBytes = Math.min(maxBindingBytes, req.maxBufferBytes ?? Number.POSITIVE_INFINITY);
  const fit = Math.floor(limitBytes / bytesPerPixel);
  const limit = req.pixelsPerBufferLimit ?? Number.POSITIVE_INFINITY;
  if (!(limit >= slotValuesPerWord)) {
    throw new StemflowError(
      'invalid',
      `pixelsPerBufferLimit ${limit} is below ${slotValuesPerWord} pixels (one word of ${elemSize}-byte values).`,
    );
  }
  let pixelsPerBuffer = Math.min(fit, limit, pixels);
  if (pixelsPerBuffer < pixels) pixelsPerBuffer -= pixelsPerBuffer % slotValuesPerWord;
  if (pixelsPerBuffer <= 0) {
    const rows = Math.min(slotValuesPerWord, pixels);
    throw new StemflowError(
      'budget',
      `One detector pixel's scan image needs ${bytesPerPixel} bytes${planes === 2 ? ' per byte plane' : ''} (${frames} frames x ${rowElem} B, ` +
        `padded to ${framesPadded}); a resident buffer must hold ${rows} such row(s) (${rows * bytesPerPixel} bytes), ` +
        `but this GPU binds at most ${limitBytes} bytes.`,
    );
  }
  const rowBuffers = Math.ceil(pixels / pixelsPerBuffer);
  const rowBufferBytes = Array.from(
    { length: rowBuffers },
    (_, b) => Math.min(pixelsPerBuffer, pixels - b * pixelsPerBuffer) * bytesPerPixel,
  );
  let segmentFrames = 0;
  let segments = 0;
  let hotWordsPerPixel = 0;
  if (form === 'planes') {
    segmentFrames = req.segmentFrames ?? DEFAULT_SEGMENT_FRAMES;
    if (!Number.isSafeInteger(segmentFrames) || segmentFrames <= 0 || segmentFrames % SEGMENT_ALIGN !== 0) {
      throw new StemflowError(
        'invalid',
        `A hot segment must be a positive multiple of ${SEGMENT_ALIGN} scan positions, not ${segmentFrames}.`,
      );
    }
    segments = Math.ceil(frames / segmentFrames);
    hotWordsPerPixel = Math.ceil(segments / 32);
  }
  let tileFrames = req.tileFrames ?? framesPadded;
  if (!Number.isSafeInteger(tileFrames) || tileFrames <= 0 || tileFrames % framesPerGroup !== 0) {
    throw new StemflowError(
      'invalid',
      `A row tile must be a positive multiple of ${framesPerGroup} scan positions, not ${req.tileFrames}.`,
    );
  }
  tileFrames = Math.min(tileFrames, framesPadded);
  if (form === 'planes' && tileFrames < framesPadded && tileFrames % segmentFrames !== 0) {
    throw new StemflowError(
      'invalid',
      `A row tile of ${tileFrames} positions is not a whole number of hot segments (${segmentFrames} positions).`,
    );
  }
  const hotBytes = pixels * hotWordsPerPixel * 4;
  if (hotBytes > limitBytes) {
    throw new StemflowError(
      'budget',
      `The hot bitmap needs ${hotBytes} bytes, more than this GPU binds (${limitBytes}); use longer segments.`,
    );
  }
  const bufferBytes = planes === 2 ? [...rowBufferBytes, ...rowBufferBytes, hotBytes] : [...rowBufferBytes];
  return {
    frames,
    pixels,
    elemSize,
    form,
    valuesPerWord,
    framesPadded,
    wordsPerPixel,
    tileFrames,
    tileWords: tileFrames / valuesPerWord,
    pixelsPerBuffer,
    rowBuffers,
    rowBufferBytes,
    planes,
    segmentFrames,
    segments,
    hotWordsPerPixel,
    hotBytes,
    high: form === 'planes' ? 'full' : null,
    hotSlots: [],
    slotFrames: 0,
    bufferBytes,
    totalBytes: bufferBytes.reduce((a, b) => a + b, 0),
  };
}

/**
 * The buffers of a resident set by role: `lo` the low (or only) plane, `hi` and `hot` for 'planes', and
 * `slotTable` (u32 per (pixel, segment): slot + 1, or 0) for a slotted high plane.
 */
export interface ResidentParts<T> {
  lo: T[];
  hi: T[] | null;
  hot: T | null;
  slotTable: T | null;
}

export function residentParts<T>(layout: ResidentLayout, buffers: readonly T[]): ResidentParts<T> {
  if (buffers.length !== layout.bufferBytes.length) {
    throw new StemflowError(
      'invalid',
      `The resident layout has ${layout.bufferBytes.length} buffers, not ${buffers.length}.`,
    );
  }
  const n = layout.rowBuffers;
  if (layout.form === 'packed') return { lo: buffers.slice(0, n), hi: null, hot: null, slotTable: null };
  return {
    lo: buffers.slice(0, n),
    hi: buffers.slice(n, 2 * n),
    hot: buffers[2 * n],
    slotTable: layout.high === 'slots' ? buffers[2 * n + 1] : null,
  };
}

/** Bytes of a slot table: one u32 per (pixel, segment). */
export function slotTableBytes(layout: ResidentLayout): number {
  return layout.pixels * layout.segments * 4;
}

/**
 * A 'planes' layout whose high plane is slotted, with `capacity[b]` slots in row buffer b's pool (each pool at
 * least 16 bytes; the load plan keeps every pool within one binding, `maxPoolSlots` and the binding limit).
 */
export function slottedResidentLayout(layout: ResidentLayout, capacity: readonly number[]): ResidentLayout {
  if (layout.form !== 'planes')
    throw new StemflowError('invalid', 'Only uint16 byte planes have a high plane.');
  if (capacity.length !== layout.rowBuffers) {
    throw new StemflowError('invalid', `A slotted high plane needs ${layout.rowBuffers} pool capacities.`);
  }
  const slotFrames = Math.min(layout.segmentFrames, layout.framesPadded);
  const highBytes = capacity.map((n) => Math.max(16, n * slotFrames));
  const bufferBytes = [
    ...layout.rowBufferBytes,
    ...highBytes,
    layout.hotBytes,
    Math.max(16, slotTableBytes(layout)),
  ];
  return {
    ...layout,
    high: 'slots',
    hotSlots: [...capacity],
    slotFrames,
    bufferBytes,
    totalBytes: bufferBytes.reduce((a, b) => a + b, 0),
  };
}

/**
 * u32 words per pixel row of a batch's high scratch (a slotted high plane's transpose target): the batch's
 * frames, 4 a word, rounded up to 16-byte rows, and never more than a resident row.
 */
export function highScratchWordsPerPixel(layout: ResidentLayout, batchFrames: number): number {
  return Math.min(Math.ceil(batchFrames / 16) * 4, layout.wordsPerPixel);
}

/**
 * u32 words per pixel of a batch's own hot bits (a slotted high plane): one bit for each segment a batch of
 * `batchFrames` frames starting at any multiple of 16 can touch.
 */
export function batchHotWordsPerPixel(layout: ResidentLayout, batchFrames: number): number {
  return Math.ceil((Math.floor((batchFrames - 1) / layout.segmentFrames) + 2) / 32);
}

/** The most slots row buffer b's pool can need: every segment of each of its pixels. */
export function maxPoolSlots(layout: ResidentLayout, b: number): number {
  const { first, end } = bufferPixelRange(layout, b);
  return (end - first) * layout.segments;
}

/**
 * The slotted layout of a loaded full high plane (`compactResidentLayout`): row buffer b's hot segments in
 * consecutive slots of its pool, pixel by pixel, and the slot table that addresses them.
 */
export function compactResidentLayout(
  layout: ResidentLayout,
  hotBitmap: Uint32Array,
): { layout: ResidentLayout; slotTable: Uint32Array } {
  if (layout.form !== 'planes' || layout.high !== 'full') {
    throw new StemflowError('invalid', 'Only a full high byte plane can be compacted.');
  }
  if (hotBitmap.length < layout.pixels * layout.hotWordsPerPixel) {
    throw new StemflowError('invalid', `The hot bitmap must hold ${layout.pixels} pixels.`);
  }
  const slotTable = new Uint32Array(Math.max(4, layout.pixels * layout.segments));
  const hotSlots = new Array<number>(layout.rowBuffers).fill(0);
  for (let p = 0; p < layout.pixels; p++) {
    const b = Math.floor(p / layout.pixelsPerBuffer);
    for (let g = 0; g < layout.segments; g++) {
      if ((hotBitmap[p * layout.hotWordsPerPixel + (g >>> 5)] >>> (g & 31)) & 1) {
        slotTable[p * layout.segments + g] = ++hotSlots[b];
      }
    }
  }
  return { layout: slottedResidentLayout(layout, hotSlots), slotTable };
}
