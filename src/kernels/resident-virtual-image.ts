/**
 * CPU twin of the `resident-virtual-image` GPU pass (src/shaders/resident-virtual-image.wgsl): for every
 * scan position, the exact sum of the resident values of the listed detector pixels (a binary mask whose
 * flagged pixels the caller has already removed). Reads the resident words exactly as the GPU does
 * (src/gpu/resident-layout.ts: the low plane of every listed pixel, the high plane only in its hot segments)
 * and returns a BigUint64Array (exact beyond 2^53; wraps mod 2^64 like the GPU).
 */
import { StemflowError } from '../errors.ts';
import { bufferRows, groupPixelsByBuffer, tiledIndex } from '../gpu/resident-index.ts';
import { type ResidentLayout, residentParts } from '../gpu/resident-layout.ts';
import { highSegmentWord } from './detector-transpose.ts';

/** Sums held in doubles stay exact below 2^53: move them to bigints before they can get there. */
const FLUSH = 2 ** 52;

export function residentVirtualImage(
  layout: ResidentLayout,
  resident: readonly Uint32Array[],
  sortedPixels: ArrayLike<number>,
  /** Add into (or, with `subtract`, subtract from) this image instead of a new zeroed one; it is updated. */
  into?: { image: BigUint64Array; subtract?: boolean },
): BigUint64Array {
  const { frames, elemSize, valuesPerWord: vpw, wordsPerPixel } = layout;
  const groups = groupPixelsByBuffer(layout, sortedPixels);
  resident.forEach((words, b) => {
    if (words.length * 4 < layout.bufferBytes[b]) {
      throw new StemflowError(
        'invalid',
        `Resident buffer ${b} is smaller than ${layout.bufferBytes[b]} bytes.`,
      );
    }
  });
  const { lo, hi, hot, slotTable } = residentParts(layout, resident);
  const acc = new Float64Array(frames);
  const sums = new BigUint64Array(frames);
  const maxValue = 2 ** (elemSize * 8) - 1;
  const rowsPerFlush = Math.max(1, Math.floor(FLUSH / maxValue));
  let rows = 0;
  const { segmentFrames, hotWordsPerPixel } = layout;
  for (const { buffer, start, count } of groups) {
    const words = lo[buffer];
    const bufferRowCount = bufferRows(layout, buffer);
    for (let i = start; i < start + count; i++) {
      const row = sortedPixels[i] - buffer * layout.pixelsPerBuffer;
      // Index of row word w (row tiles: resident-layout.ts), as the GPU computes it.
      const wordAt = (w: number) => tiledIndex(row, w, bufferRowCount, wordsPerPixel, layout.tileWords);
      if (elemSize === 4) {
        for (let s = 0; s < frames; s++) acc[s] += words[wordAt(s)];
      } else {
        for (let s = 0; s < frames; s++)
          acc[s] += (words[wordAt(Math.floor(s / vpw))] >>> ((s % vpw) * 8)) & 0xff;
      }
      if (hi && hot) {
        const high = hi[buffer];
        const p = sortedPixels[i];
        const bits = p * hotWordsPerPixel;
        for (let g = 0; g < layout.segments; g++) {
          if (!((hot[bits + (g >>> 5)] >>> (g & 31)) & 1)) continue;
          const first = g * segmentFrames;
          const end = Math.min(frames, first + segmentFrames);
          // Word of position `first`: in the full high row (tiled like the low plane; a segment lies in one
          // tile), or in the pair's slot of its row buffer's pool.
          const at = slotTable ? highSegmentWord(layout, slotTable, p, g) : wordAt(first / vpw);
          for (let s = first; s < end; s++)
            acc[s] += 256 * ((high[at + Math.floor((s - first) / vpw)] >>> ((s % vpw) * 8)) & 0xff);
        }
      }
      if (++rows === rowsPerFlush) {
        for (let s = 0; s < frames; s++) sums[s] += BigInt(acc[s]);
        acc.fill(0);
        rows = 0;
      }
    }
  }
  for (let s = 0; s < frames; s++) sums[s] += BigInt(acc[s]);
  if (!into) return sums;
  const { image, subtract } = into;
  if (image.length < frames)
    throw new StemflowError('invalid', `The image holds fewer than ${frames} positions.`);
  // BigUint64Array stores wrap mod 2^64, as the GPU's u64 pairs do.
  for (let s = 0; s < frames; s++) image[s] = subtract ? image[s] - sums[s] : image[s] + sums[s];
  return image;
}

/** What a virtual image of a pixel list reads from the resident data (the pass's traffic, rows only). */
export interface ResidentReads {
  pixels: number;
  /** Hot (pixel, segment) pairs among the listed pixels, and all (pixel, segment) pairs. */
  hotSegments: number;
  segments: number;
  /** Bytes of the low (or only) plane, and of the high plane (hot segments only; the last may be partial). */
  loBytes: number;
  hiBytes: number;
}

/** The rows a list reads, given the hot bitmap read back from the load ('planes'; null for 'packed'). */
export function residentReads(
  layout: ResidentLayout,
  hotBitmap: Uint32Array | null,
  sortedPixels: ArrayLike<number>,
): ResidentReads {
  const n = sortedPixels.length;
  const rowBytes = layout.wordsPerPixel * 4;
  const reads = {
    pixels: n,
    hotSegments: 0,
    segments: n * layout.segments,
    loBytes: n * rowBytes,
    hiBytes: 0,
  };
  if (layout.form === 'packed') return reads;
  if (!hotBitmap || hotBitmap.length < layout.pixels * layout.hotWordsPerPixel) {
    throw new StemflowError('invalid', `The hot bitmap must hold ${layout.pixels} pixels.`);
  }
  const lastBytes = layout.framesPadded - (layout.segments - 1) * layout.segmentFrames;
  for (let i = 0; i < n; i++) {
    const base = sortedPixels[i] * layout.hotWordsPerPixel;
    for (let g = 0; g < layout.segments; g++) {
      if ((hotBitmap[base + (g >>> 5)] >>> (g & 31)) & 1) {
        reads.hotSegments++;
        reads.hiBytes += g === layout.segments - 1 ? lastBytes : layout.segmentFrames;
      }
    }
  }
  return reads;
}
