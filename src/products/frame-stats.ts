import type { FrameArray } from '../source/acquisition-source';

/**
 * Exact statistics of decoded frames over unflagged pixels, accumulated batch by batch: the summed
 * diffraction pattern, per-frame totals, the maximum count and the number of counts above 255.
 * Sums are integers held in float64, exact below 2^53 (a 512x512 scan of uint32 counts stays far below).
 */
export class FrameStats {
  readonly sumDiffraction: Float64Array;
  readonly frameTotals: Float64Array;
  maxCount = 0;
  countAbove255 = 0;
  private readonly unflagged: Uint32Array;

  constructor(frameCount: number, pixels: number, flagged: Uint8Array | null) {
    this.sumDiffraction = new Float64Array(pixels);
    this.frameTotals = new Float64Array(frameCount);
    const keep: number[] = [];
    for (let p = 0; p < pixels; p++) if (!flagged || flagged[p] === 0) keep.push(p);
    this.unflagged = Uint32Array.from(keep);
  }

  /** Adds `frames` (count x pixels values, scan order) starting at frame `first`. */
  add(first: number, frames: FrameArray, pixels: number): void {
    const keep = this.unflagged;
    const sum = this.sumDiffraction;
    const count = frames.length / pixels;
    let max = this.maxCount;
    let above = this.countAbove255;
    for (let f = 0; f < count; f++) {
      const base = f * pixels;
      let total = 0;
      for (let k = 0; k < keep.length; k++) {
        const p = keep[k];
        const v = frames[base + p];
        total += v;
        sum[p] += v;
        if (v > 255) {
          above++;
          if (v > max) max = v;
        } else if (v > max) max = v;
      }
      this.frameTotals[first + f] = total;
    }
    this.maxCount = max;
    this.countAbove255 = above;
  }
}

/** Exact virtual image: for each frame, the sum of the values at the mask's pixels (flagged excluded). */
export function virtualImage(
  frames: FrameArray,
  pixels: number,
  mask: Uint8Array,
  flagged: Uint8Array | null,
): Float64Array {
  const indices = maskPixelList(mask.subarray(0, pixels), flagged);
  const count = frames.length / pixels;
  const out = new Float64Array(count);
  for (let f = 0; f < count; f++) {
    const base = f * pixels;
    let s = 0;
    for (let k = 0; k < indices.length; k++) s += frames[base + indices[k]];
    out[f] = s;
  }
  return out;
}

/** The detector pixels a binary mask covers, flagged pixels left out, in increasing order. */
export function maskPixelList(mask: ArrayLike<number>, flagged: ArrayLike<number> | null): Uint32Array {
  const list: number[] = [];
  for (let p = 0; p < mask.length; p++) if (mask[p] && !flagged?.[p]) list.push(p);
  return Uint32Array.from(list);
}

/** The mask with flagged pixels removed (1 = counted). */
export function unflaggedMask(mask: ArrayLike<number>, flagged: ArrayLike<number> | null): Uint8Array {
  const out = new Uint8Array(mask.length);
  for (let p = 0; p < mask.length; p++) out[p] = mask[p] && !flagged?.[p] ? 1 : 0;
  return out;
}

/** 1 where the stored pixel mask flags a pixel. */
export function flaggedFromMask(mask: Uint32Array | null): Uint8Array | null {
  if (!mask) return null;
  const out = new Uint8Array(mask.length);
  for (let i = 0; i < mask.length; i++) out[i] = mask[i] !== 0 ? 1 : 0;
  return out;
}
