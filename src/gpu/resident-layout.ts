/**
 * The resident layout: where every value of a loaded scan lives on the GPU (docs/pass-graph.md, "Resident").
 * Detector-major: pixel p's scan image (frame s at element s, packed little-endian like the decoded slot) is
 * one row of `wordsPerPixel` u32 words; rows are spread over several GPUBuffers because one storage binding
 * is limited (2 GiB on the H200, 1 GiB on SwiftShader). Pixel p lives in buffer `floor(p / pixelsPerBuffer)`
 * at word `(p mod pixelsPerBuffer) * wordsPerPixel`. Pure TypeScript: the plan exists before any allocation.
 */
import { StemflowError } from '../errors.ts';

export type ElemSize = 1 | 2 | 4;

/** Rows are padded to 16 bytes so that readers can load vec4<u32> (resident-virtual-image). */
export const ROW_ALIGN_BYTES = 16;

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
}

export interface ResidentLayout {
  frames: number;
  pixels: number;
  elemSize: ElemSize;
  /** Values packed in one u32 word: 4, 2 or 1. */
  valuesPerWord: 1 | 2 | 4;
  /** `frames` rounded up so that each row is a whole number of 16-byte groups (zeros beyond `frames`). */
  framesPadded: number;
  /** u32 words per pixel row = framesPadded * elemSize / 4 (a multiple of 4). */
  wordsPerPixel: number;
  /** A multiple of valuesPerWord (so a buffer's first pixel starts a word of the decoded slot). */
  pixelsPerBuffer: number;
  bufferCount: number;
  /** Bytes of each buffer; the last may be smaller. */
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
  const valuesPerWord = (4 / elemSize) as 1 | 2 | 4;
  const framesPerGroup = ROW_ALIGN_BYTES / elemSize;
  const framesPadded = Math.ceil(frames / framesPerGroup) * framesPerGroup;
  const wordsPerPixel = (framesPadded * elemSize) / 4;
  const bytesPerPixel = wordsPerPixel * 4;
  const limitBytes = Math.min(maxBindingBytes, req.maxBufferBytes ?? Number.POSITIVE_INFINITY);
  const fit = Math.floor(limitBytes / bytesPerPixel);
  const limit = req.pixelsPerBufferLimit ?? Number.POSITIVE_INFINITY;
  if (!(limit >= valuesPerWord)) {
    throw new StemflowError(
      'invalid',
      `pixelsPerBufferLimit ${limit} is below ${valuesPerWord} pixels (one word of ${elemSize}-byte values).`,
    );
  }
  let pixelsPerBuffer = Math.min(fit, limit, pixels);
  if (pixelsPerBuffer < pixels) pixelsPerBuffer -= pixelsPerBuffer % valuesPerWord;
  if (pixelsPerBuffer <= 0) {
    throw new StemflowError(
      'budget',
      `One detector pixel's scan image needs ${bytesPerPixel} bytes (${frames} frames x ${elemSize} B, ` +
        `padded to ${framesPadded}); a resident buffer must hold ${Math.min(valuesPerWord, pixels)} such ` +
        `row(s) (${Math.min(valuesPerWord, pixels) * bytesPerPixel} bytes), but this GPU binds at most ` +
        `${limitBytes} bytes.`,
    );
  }
  const bufferCount = Math.ceil(pixels / pixelsPerBuffer);
  const bufferBytes = Array.from(
    { length: bufferCount },
    (_, b) => Math.min(pixelsPerBuffer, pixels - b * pixelsPerBuffer) * bytesPerPixel,
  );
  return {
    frames,
    pixels,
    elemSize,
    valuesPerWord,
    framesPadded,
    wordsPerPixel,
    pixelsPerBuffer,
    bufferCount,
    bufferBytes,
    totalBytes: pixels * bytesPerPixel,
  };
}

/** The buffer holding pixel `p` and the word where its row starts. */
export function locatePixel(layout: ResidentLayout, p: number): { buffer: number; wordOffset: number } {
  if (!Number.isInteger(p) || p < 0 || p >= layout.pixels) {
    throw new StemflowError('invalid', `Pixel ${p} is outside the detector's ${layout.pixels} pixels.`);
  }
  const buffer = Math.floor(p / layout.pixelsPerBuffer);
  return { buffer, wordOffset: (p - buffer * layout.pixelsPerBuffer) * layout.wordsPerPixel };
}

/** Global pixels [first, end) held by buffer `b`. */
export function bufferPixelRange(layout: ResidentLayout, b: number): { first: number; end: number } {
  const first = b * layout.pixelsPerBuffer;
  return { first, end: Math.min(layout.pixels, first + layout.pixelsPerBuffer) };
}

/** A run of a sorted pixel list that lies in one resident buffer: list entries [start, start + count). */
export interface PixelGroup {
  buffer: number;
  start: number;
  count: number;
}

/**
 * Splits a strictly increasing list of pixel indices into one group per resident buffer that it touches
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
