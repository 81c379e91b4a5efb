/**
 * Where a pixel's row lies in a resident set (src/gpu/resident-layout.ts describes the layout): its row buffer,
 * the index of each row word under row tiles (WGSL `resident_index` in shaders/common/resident-tile.wgsl), the
 * runs of a row one per tile, and the grouping of a sorted pixel list by row buffer. Pure TypeScript.
 */
import { StemflowError } from '../errors.ts';
import type { ResidentLayout } from './resident-layout.ts';

/**
 * Index of word `w` of row `row` in a buffer of `rows` rows of `rowWords` words stored in tiles of `tileWords`
 * (the header; WGSL `resident_index`). Any unit (words, vec4) where all four are in it.
 */
export function tiledIndex(
  row: number,
  w: number,
  rows: number,
  rowWords: number,
  tileWords: number,
): number {
  const t0 = w - (w % tileWords);
  return t0 * rows + row * Math.min(tileWords, rowWords - t0) + (w - t0);
}

/** Rows (pixels) of row buffer `b`. */
export function bufferRows(layout: ResidentLayout, b: number): number {
  const { first, end } = bufferPixelRange(layout, b);
  return end - first;
}

/** Word `w` of pixel `p`'s row (in each plane): its row buffer and the word's index there. */
export function residentWordIndex(
  layout: ResidentLayout,
  p: number,
  w: number,
): { buffer: number; index: number } {
  const buffer = Math.floor(p / layout.pixelsPerBuffer);
  const row = p - buffer * layout.pixelsPerBuffer;
  return {
    buffer,
    index: tiledIndex(row, w, bufferRows(layout, buffer), layout.wordsPerPixel, layout.tileWords),
  };
}

/**
 * The row buffer holding pixel `p` (in each plane) and its row's runs: one per row tile, each `words` row words
 * from row word `rowWord` at buffer word `wordOffset` (a single run when untiled).
 */
export function locatePixel(
  layout: ResidentLayout,
  p: number,
): { buffer: number; runs: { rowWord: number; wordOffset: number; words: number }[] } {
  if (!Number.isInteger(p) || p < 0 || p >= layout.pixels) {
    throw new StemflowError('invalid', `Pixel ${p} is outside the detector's ${layout.pixels} pixels.`);
  }
  const runs: { rowWord: number; wordOffset: number; words: number }[] = [];
  let buffer = 0;
  for (let w = 0; w < layout.wordsPerPixel; w += layout.tileWords) {
    const at = residentWordIndex(layout, p, w);
    buffer = at.buffer;
    runs.push({
      rowWord: w,
      wordOffset: at.index,
      words: Math.min(layout.tileWords, layout.wordsPerPixel - w),
    });
  }
  return { buffer, runs };
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
