/**
 * CPU twin of the `virtual-detector` GPU pass (src/shaders/virtual-detector.wgsl): for each frame, the exact
 * sum of the values of pixels whose mask entry is nonzero. Results are BigUint64Array, exact for any input
 * (a uint32 frame can exceed 2^32 and, for big enough frames, 2^53, where a Float64Array would round).
 */
import { StemflowError } from '../errors.ts';

export type DetectorValues = Uint8Array | Uint16Array | Uint32Array;

const FLUSH = 2 ** 52;

export function virtualDetectorSums(
  values: DetectorValues,
  frameCount: number,
  mask: Uint32Array,
): BigUint64Array {
  const pixels = mask.length;
  if (values.length < frameCount * pixels) {
    throw new StemflowError(
      'invalid',
      `${values.length} values cannot hold ${frameCount} frames of ${pixels} pixels.`,
    );
  }
  const sums = new BigUint64Array(frameCount);
  for (let f = 0; f < frameCount; f++) {
    let exact = 0n;
    let acc = 0;
    const base = f * pixels;
    for (let p = 0; p < pixels; p++) {
      if (mask[p] === 0) continue;
      acc += values[base + p];
      // Numbers stay exact below 2^53: move the running sum to a bigint before it can get there.
      if (acc >= FLUSH) {
        exact += BigInt(acc);
        acc = 0;
      }
    }
    sums[f] = exact + BigInt(acc);
  }
  return sums;
}
