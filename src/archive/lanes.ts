/**
 * How a record's values are cut into independent entropy lanes: each frame (scan position) is split into
 * `slices` runs of consecutive detector pixels (row-major); lane = frame * slices + slice. A lane is the unit
 * one GPU invocation encodes or decodes; all lanes of one slice index visit the same pixels in the same
 * order, which keeps a workgroup's lanes in pixel lockstep (uniform context and mask reads).
 */
import { StemflowError } from '../errors';

export type ArchiveDtype = 'uint8' | 'uint16' | 'uint32';

export const DTYPE_BITS: Record<ArchiveDtype, 8 | 16 | 32> = { uint8: 8, uint16: 16, uint32: 32 };

export interface LaneGeometry {
  /** Pixels per frame. */
  pixels: number;
  /** Lanes per frame. */
  slices: number;
  /** Pixels of every slice but possibly the last: ceil(pixels / slices). */
  slicePixels: number;
}

export function laneGeometry(pixels: number, slices: number): LaneGeometry {
  if (!Number.isInteger(pixels) || pixels < 1)
    throw new StemflowError('invalid', `${pixels} pixels per frame.`);
  if (!Number.isInteger(slices) || slices < 1 || slices > pixels) {
    throw new StemflowError('invalid', `${slices} lanes per frame do not fit ${pixels} pixels.`);
  }
  const slicePixels = Math.ceil(pixels / slices);
  if ((slices - 1) * slicePixels >= pixels) {
    throw new StemflowError('invalid', `${slices} lanes per frame leave an empty lane at ${pixels} pixels.`);
  }
  return { pixels, slices, slicePixels };
}

/** First pixel and pixel count of a slice. */
export function sliceRange(g: LaneGeometry, slice: number): { first: number; count: number } {
  const first = slice * g.slicePixels;
  return { first, count: Math.min(g.slicePixels, g.pixels - first) };
}

/** u32 words a lane takes when stored raw (its values packed little-endian at the dtype's width). */
export function rawLaneWords(count: number, dtype: ArchiveDtype): number {
  return Math.ceil((count * DTYPE_BITS[dtype]) / 32);
}
