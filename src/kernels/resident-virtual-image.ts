/**
 * CPU twin of the `resident-virtual-image` GPU pass (src/shaders/resident-virtual-image.wgsl): for every
 * scan position, the exact sum of the resident values of the listed detector pixels (a binary mask whose
 * flagged pixels the caller has already removed). Reads the resident words exactly as the GPU does
 * (src/gpu/resident-layout.ts) and returns a BigUint64Array (exact beyond 2^53; wraps mod 2^64 like the GPU).
 */
import { StemflowError } from '../errors.ts';
import { groupPixelsByBuffer, type ResidentLayout } from '../gpu/resident-layout.ts';

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
  const acc = new Float64Array(frames);
  const sums = new BigUint64Array(frames);
  const maxValue = 2 ** (elemSize * 8) - 1;
  const rowsPerFlush = Math.max(1, Math.floor(FLUSH / maxValue));
  let rows = 0;
  const bits = elemSize * 8;
  const mask = maxValue >>> 0;
  for (const { buffer, start, count } of groups) {
    const words = resident[buffer];
    for (let i = start; i < start + count; i++) {
      const base = (sortedPixels[i] - buffer * layout.pixelsPerBuffer) * wordsPerPixel;
      for (let s = 0; s < frames; s++) {
        const word = words[base + Math.floor(s / vpw)];
        acc[s] += elemSize === 4 ? word : (word >>> ((s % vpw) * bits)) & mask;
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
