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
 * The buffers of a resident set, in order (`bufferBytes`): the low (or only) plane's row buffers, then for
 * 'planes' the high plane's row buffers and the hot bitmap (`residentParts` splits them).
 */
import { StemflowError } from '../errors.ts';

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
   * 'planes': the high plane 'full' (rows like the low plane, as the load writes it) or 'compact' (after
   * `compactResidentLayout`: only hot segments, in slots of slotFrames bytes, one buffer per row buffer;
   * pixel p's hot segments are consecutive slots from hotBase[p]); null for 'packed'.
   */
  high: 'full' | 'compact' | null;
  /** 'compact': hot segment slots in each row buffer's compact high buffer. */
  hotSlots: number[];
  /** 'compact': bytes per slot, min(segmentFrames, framesPadded) (a scan of one segment keeps no padding). */
  slotFrames: number;
  /** Every buffer of the resident set: plane 0 rows, [high plane buffers, hot bitmap, ['compact': hot bases]]. */
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
 * `hotBase` (u32 per pixel: its first slot in its row buffer's compact high buffer) for a compact high plane.
 */
export interface ResidentParts<T> {
  lo: T[];
  hi: T[] | null;
  hot: T | null;
  hotBase: T | null;
}

export function residentParts<T>(layout: ResidentLayout, buffers: readonly T[]): ResidentParts<T> {
  if (buffers.length !== layout.bufferBytes.length) {
    throw new StemflowError(
      'invalid',
      `The resident layout has ${layout.bufferBytes.length} buffers, not ${buffers.length}.`,
    );
  }
  const n = layout.rowBuffers;
  if (layout.form === 'packed') return { lo: buffers.slice(0, n), hi: null, hot: null, hotBase: null };
  return {
    lo: buffers.slice(0, n),
    hi: buffers.slice(n, 2 * n),
    hot: buffers[2 * n],
    hotBase: layout.high === 'compact' ? buffers[2 * n + 1] : null,
  };
}

/** Hot segments of pixel p before segment g (its rank among the pixel's hot segments). */
export function hotRank(layout: ResidentLayout, hotBitmap: Uint32Array, p: number, g: number): number {
  const base = p * layout.hotWordsPerPixel;
  let n = 0;
  for (let k = 0; k < g >>> 5; k++) n += popcount(hotBitmap[base + k]);
  return n + popcount(hotBitmap[base + (g >>> 5)] & ((1 << (g & 31)) - 1));
}

function popcount(v: number): number {
  let x = v >>> 0;
  let n = 0;
  while (x) {
    x &= x - 1;
    n++;
  }
  return n;
}

/**
 * The compact high plane of a loaded 'planes' layout: per pixel its first slot in its row buffer's compact
 * buffer (`hotBase`), and the layout whose high buffers hold only the hot segments (slot k at byte
 * k x slotFrames; at least 16 bytes each), followed by the hot bitmap and the hot bases.
 */
export function compactResidentLayout(
  layout: ResidentLayout,
  hotBitmap: Uint32Array,
): { layout: ResidentLayout; hotBase: Uint32Array } {
  if (layout.form !== 'planes' || layout.high !== 'full') {
    throw new StemflowError('invalid', 'Only a full high byte plane can be compacted.');
  }
  if (hotBitmap.length < layout.pixels * layout.hotWordsPerPixel) {
    throw new StemflowError('invalid', `The hot bitmap must hold ${layout.pixels} pixels.`);
  }
  const hotBase = new Uint32Array(layout.pixels);
  const hotSlots = new Array<number>(layout.rowBuffers).fill(0);
  for (let p = 0; p < layout.pixels; p++) {
    const b = Math.floor(p / layout.pixelsPerBuffer);
    hotBase[p] = hotSlots[b];
    for (let k = 0; k < layout.hotWordsPerPixel; k++)
      hotSlots[b] += popcount(hotBitmap[p * layout.hotWordsPerPixel + k]);
  }
  const slotFrames = Math.min(layout.segmentFrames, layout.framesPadded);
  const highBytes = hotSlots.map((n) => Math.max(16, n * slotFrames));
  const bufferBytes = [...layout.rowBufferBytes, ...highBytes, layout.hotBytes, layout.pixels * 4];
  return {
    layout: {
      ...layout,
      high: 'compact',
      hotSlots,
      slotFrames,
      bufferBytes,
      totalBytes: bufferBytes.reduce((a, b) => a + b, 0),
    },
    hotBase,
  };
}

/** The row buffer holding pixel `p` (in each plane) and the word where its row starts. */
export function locatePixel(layout: ResidentLayout, p: number): { buffer: number; wordOffset: number } {
  if (!Number.isInteger(p) || p < 0 || p >= layout.pixels) {
    throw new StemflowError('invalid', `Pixel ${p} is outside the detector's ${layout.pixels} pixels.`);
  }
  const buffer = Math.floor(p / layout.pixelsPerBuffer);
  return { buffer, wordOffset: (p - buffer * layout.pixelsPerBuffer) * layout.wordsPerPixel };
}

/** Global pixels [first, end) held by row buffer `b`. */
export function bufferPixelRange(layout: ResidentLayout, b: number): { first: number; end: number } {
  const first = b * layout.pixelsPerBuffer;
  return { first, end: Math.min(layout.pixels, first + layout.pixelsPerBuffer) };
}

/** A run of a sorted pixel list that lies in one row buffer: list entries [start, start + count). */
export interface PixelGroup {
  buffer: number;
  start: number;
  count: number;
}

/**
 * Splits a strictly increasing list of pixel indices into one group per row buffer that it touches
 * (buffers without pixels are left out).
 */
export function groupPixelsByBuffer(layout: ResidentLayout, sortedPixels: ArrayLike<number>): PixelGroup[] {
  const groups: PixelGroup[] = [];
  let previous = -1;
  for (let i = 0; i < sortedPixels.length; i++) {
    const p = sortedPixels[i];
    if (!Number.isInteger(p) || p <= previous || p >= layout.pixels) {
      throw new StemflowError(
        'invalid',
        `Mask pixel list entry ${i} (${p}) is not strictly increasing within the ${layout.pixels} pixels.`,
      );
    }
    previous = p;
    const buffer = Math.floor(p / layout.pixelsPerBuffer);
    const last = groups[groups.length - 1];
    if (last?.buffer === buffer) last.count++;
    else groups.push({ buffer, start: i, count: 1 });
  }
  return groups;
}
