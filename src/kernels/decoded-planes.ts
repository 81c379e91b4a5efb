/**
 * The decoded slot as two byte planes a frame ('planes', the load's form for uint16 sources): what the decode
 * passes write with common/bslz4-out-planes.wgsl and what the detector transpose reads with
 * detector-transpose-planes.wgsl. Frame f of a batch starts at word f * wordsPerFrame:
 * - words [0, planeWords): the low byte of every element (element e at byte e), zero after the last;
 * - words [planeWords, 2 planeWords): the high bytes, likewise;
 * - word 2 planeWords: the frame's span mark, bit s set when elements [s spanElems, (s + 1) spanElems) hold a
 *   nonzero high byte (0 for a failed frame); words 2 planeWords + 1..3 zero.
 * A transpose of the packed form reads B x P x 2 bytes a batch; of this form B x P bytes and the high bytes of the
 * marked spans only. The GPU decode stores only nonzero 8-byte pieces of the high plane, so the slot's high plane
 * must be zero before each decode: it is created zeroed and the transpose zeroes what it read
 * (`clearDecodedHighPlanes`, the twin of that).
 */
import { StemflowError } from '../errors.ts';

export interface DecodedPlanesLayout {
  pixels: number;
  /** Words of each plane: the frame's bytes rounded up to 16 (vec4 rows). */
  planeWords: number;
  /** 2 planeWords + 4. */
  wordsPerFrame: number;
  /** Elements a span of the mark: a multiple of 64 (the transpose's pixel block), at most 32 spans a frame. */
  spanElems: number;
  spans: number;
}

/** The planes form of frames of `pixels` elements (any frame of at least one pixel). */
export function decodedPlanesLayout(pixels: number): DecodedPlanesLayout {
  if (!Number.isInteger(pixels) || pixels < 1) {
    throw new StemflowError('invalid', `A decoded frame needs at least one pixel (got ${pixels}).`);
  }
  const planeWords = 4 * Math.ceil(pixels / 16);
  const spanElems = 64 * Math.ceil(pixels / 2048);
  return {
    pixels,
    planeWords,
    wordsPerFrame: 2 * planeWords + 4,
    spanElems,
    spans: Math.ceil(pixels / spanElems),
  };
}

/**
 * The planes form of `frames` frames of packed uint16 values (frame f from word f * packedWordsPerFrame, as the
 * decode twin and `decodedSlot` write them): exactly the words the GPU decode writes in this form.
 */
export function toDecodedPlanes(
  packed: Uint32Array,
  frames: number,
  pixels: number,
  packedWordsPerFrame = Math.ceil(pixels / 2),
): Uint32Array {
  const form = decodedPlanesLayout(pixels);
  if (packedWordsPerFrame < Math.ceil(pixels / 2) || packed.length < frames * packedWordsPerFrame) {
    throw new StemflowError('invalid', `The packed slot does not hold ${frames} frames of ${pixels} pixels.`);
  }
  const out = new Uint32Array(Math.max(1, frames * form.wordsPerFrame));
  const bytes = new Uint8Array(out.buffer);
  const values = new Uint16Array(packed.buffer, packed.byteOffset, packed.length * 2);
  for (let f = 0; f < frames; f++) {
    const base = f * form.wordsPerFrame * 4;
    const high = base + form.planeWords * 4;
    let mark = 0;
    for (let e = 0; e < pixels; e++) {
      const v = values[f * packedWordsPerFrame * 2 + e];
      bytes[base + e] = v & 0xff;
      bytes[high + e] = v >>> 8;
      if (v > 0xff) mark |= 1 << Math.floor(e / form.spanElems);
    }
    out[f * form.wordsPerFrame + 2 * form.planeWords] = mark >>> 0;
  }
  return out;
}

/**
 * The packed uint16 frames (ceil(pixels / 2) words a frame, as the decode twin writes them) of `frames` frames in
 * the planes form.
 */
export function fromDecodedPlanes(planes: Uint32Array, frames: number, pixels: number): Uint32Array {
  const form = decodedPlanesLayout(pixels);
  checkPlanesSlot(planes, frames, form);
  const words = Math.ceil(pixels / 2);
  const out = new Uint32Array(Math.max(1, frames * words));
  const values = new Uint16Array(out.buffer);
  const bytes = new Uint8Array(planes.buffer, planes.byteOffset, planes.byteLength);
  for (let f = 0; f < frames; f++) {
    const base = f * form.wordsPerFrame * 4;
    const high = base + form.planeWords * 4;
    for (let e = 0; e < pixels; e++) values[f * words * 2 + e] = bytes[base + e] | (bytes[high + e] << 8);
  }
  return out;
}

/** What the planes transpose leaves in the slot: the high planes of frames [0, frames) zeroed. */
export function clearDecodedHighPlanes(planes: Uint32Array, frames: number, pixels: number): void {
  const form = decodedPlanesLayout(pixels);
  checkPlanesSlot(planes, frames, form);
  for (let f = 0; f < frames; f++) {
    const at = f * form.wordsPerFrame + form.planeWords;
    planes.fill(0, at, at + form.planeWords);
  }
}

function checkPlanesSlot(planes: Uint32Array, frames: number, form: DecodedPlanesLayout): void {
  if (planes.length < frames * form.wordsPerFrame) {
    throw new StemflowError(
      'invalid',
      `The decoded slot does not hold ${frames} frames of ${form.pixels} pixels as byte planes.`,
    );
  }
}
