/**
 * CPU twin of the `detector-transpose` GPU pass (src/shaders/detector-transpose.wgsl): one batch of the
 * decoded slot (frame-major, values packed little-endian in the source dtype) into the resident buffers
 * (detector-major, src/gpu/resident-layout.ts), plus the exact per-pixel sum over the batch's frames added to
 * the DP sums. It writes the same words as the GPU: every word that holds at least one frame of the batch,
 * with zeros for the frames past the batch's end that share its last word.
 */
import { StemflowError } from '../errors.ts';
import type { ResidentLayout } from '../gpu/resident-layout.ts';

export type PackedValues = Uint8Array | Uint16Array | Uint32Array;

export interface TransposeBatch {
  layout: ResidentLayout;
  /** The decoded slot's words: frame f of the batch starts at word f * wordsPerFrame. */
  decoded: Uint32Array;
  /** Default ceil(pixels * elemSize / 4), as the decoder writes. */
  wordsPerFrame?: number;
  /** Global index of the batch's first frame; a multiple of layout.valuesPerWord. */
  firstFrame: number;
  /** Frames in the batch. */
  frames: number;
}

/** Checks a batch against its layout; returns wordsPerFrame. Shared with the GPU pass. */
export function checkTransposeBatch(b: Omit<TransposeBatch, 'decoded'>): number {
  const { layout, firstFrame, frames } = b;
  const minWords = Math.ceil((layout.pixels * layout.elemSize) / 4);
  const wordsPerFrame = b.wordsPerFrame ?? minWords;
  if (!Number.isInteger(wordsPerFrame) || wordsPerFrame < minWords) {
    throw new StemflowError('invalid', `A decoded frame of ${layout.pixels} pixels needs ${minWords} words.`);
  }
  if (!Number.isInteger(firstFrame) || firstFrame < 0 || firstFrame % layout.valuesPerWord !== 0) {
    throw new StemflowError(
      'invalid',
      `A batch must start at a frame that is a multiple of ${layout.valuesPerWord} (got ${firstFrame}).`,
    );
  }
  if (!Number.isInteger(frames) || frames < 0 || firstFrame + frames > layout.frames) {
    throw new StemflowError(
      'invalid',
      `Frames ${firstFrame}..${firstFrame + frames} reach past the scan's ${layout.frames} frames.`,
    );
  }
  return wordsPerFrame;
}

/** Value `index` of the packed values starting at word `base`. */
function valueAt(words: Uint32Array, base: number, index: number, elemSize: number): number {
  if (elemSize === 4) return words[base + index];
  const perWord = 4 / elemSize;
  const shift = (index % perWord) * elemSize * 8;
  return (words[base + Math.floor(index / perWord)] >>> shift) & (elemSize === 2 ? 0xffff : 0xff);
}

/** Transposes one batch into `resident` (one Uint32Array per buffer) and adds its DP sums (u64, wrapping). */
export function detectorTranspose(
  batch: TransposeBatch,
  resident: Uint32Array[],
  dpSums: BigUint64Array,
): void {
  const { layout, decoded, firstFrame, frames } = batch;
  const wordsPerFrame = checkTransposeBatch(batch);
  const { pixels, elemSize, valuesPerWord: vpw, wordsPerPixel, pixelsPerBuffer } = layout;
  if (decoded.length < frames * wordsPerFrame && frames > 0) {
    throw new StemflowError('invalid', `The decoded slot holds fewer than ${frames} frames.`);
  }
  if (dpSums.length < pixels) throw new StemflowError('invalid', `DP sums need ${pixels} entries.`);
  const bits = elemSize * 8;
  const outWords = Math.ceil(frames / vpw);
  const firstWord = firstFrame / vpw;
  for (let p = 0; p < pixels; p++) {
    const buffer = Math.floor(p / pixelsPerBuffer);
    const row = (p - buffer * pixelsPerBuffer) * wordsPerPixel + firstWord;
    const target = resident[buffer];
    let sum = 0;
    let exact = 0n;
    for (let w = 0; w < outWords; w++) {
      let word = 0;
      for (let k = 0; k < vpw; k++) {
        const f = w * vpw + k;
        if (f >= frames) break;
        const v = valueAt(decoded, f * wordsPerFrame, p, elemSize);
        sum += v;
        word = elemSize === 4 ? v : (word | (v << (k * bits))) >>> 0;
      }
      target[row + w] = word;
      if (sum >= 2 ** 52) {
        exact += BigInt(sum);
        sum = 0;
      }
    }
    dpSums[p] += exact + BigInt(sum);
  }
}

/**
 * Reference for round trips (independent of the twin): scan-order values (frame-major, `frames x pixels`)
 * placed element by element into fresh resident buffers (zeros in the padding).
 */
export function residentFromScan(layout: ResidentLayout, values: PackedValues): Uint32Array[] {
  const { frames, pixels, elemSize, wordsPerPixel, pixelsPerBuffer, bufferBytes } = layout;
  if (values.length !== frames * pixels || values.BYTES_PER_ELEMENT !== elemSize) {
    throw new StemflowError('invalid', `Expected ${frames} x ${pixels} values of ${elemSize} bytes.`);
  }
  const buffers = bufferBytes.map((b) => new Uint32Array(b / 4));
  const views = buffers.map((b) => {
    const Type = values.constructor as new (buffer: ArrayBuffer) => PackedValues;
    return new Type(b.buffer);
  });
  const elemsPerPixel = (wordsPerPixel * 4) / elemSize;
  for (let f = 0; f < frames; f++) {
    for (let p = 0; p < pixels; p++) {
      const buffer = Math.floor(p / pixelsPerBuffer);
      views[buffer][(p - buffer * pixelsPerBuffer) * elemsPerPixel + f] = values[f * pixels + p];
    }
  }
  return buffers;
}

/**
 * The decoded-slot words of frames [first, first + count) of scan-order values (little-endian hosts, as
 * every WebGPU platform is): each frame padded to `wordsPerFrame` words.
 */
export function decodedSlot(
  values: PackedValues,
  pixels: number,
  first: number,
  count: number,
  wordsPerFrame = Math.ceil((pixels * values.BYTES_PER_ELEMENT) / 4),
): Uint32Array {
  const slot = new Uint32Array(Math.max(1, count * wordsPerFrame));
  const Type = values.constructor as new (
    buffer: ArrayBuffer,
    offset: number,
    length: number,
  ) => PackedValues;
  for (let f = 0; f < count; f++) {
    const view = new Type(slot.buffer, f * wordsPerFrame * 4, pixels);
    view.set(values.subarray((first + f) * pixels, (first + f + 1) * pixels));
  }
  return slot;
}
