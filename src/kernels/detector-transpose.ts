/**
 * CPU twin of the `detector-transpose` GPU pass (src/shaders/detector-transpose.wgsl): one batch of the
 * decoded slot (frame-major, values packed little-endian in the source dtype) into the resident buffers
 * (detector-major, src/gpu/resident-layout.ts), plus the exact per-pixel sum over the batch's frames added to
 * the DP sums. It writes the same words as the GPU: every row word that holds at least one frame of the batch,
 * with zeros for the frames past the batch's end that share its last word. 'planes' (uint16): every low-plane
 * word; a high-plane word only where it is nonzero (the buffers start zeroed), and then the hot bit of its
 * (pixel, segment).
 */
import { StemflowError } from '../errors.ts';
import { bufferRows, locatePixel, residentWordIndex, tiledIndex } from '../gpu/resident-index.ts';
import { compactResidentLayout, type ResidentLayout, residentParts } from '../gpu/resident-layout.ts';
import { clearDecodedHighPlanes, decodedPlanesLayout, fromDecodedPlanes } from './decoded-planes.ts';
import { checkHighScratch } from './high-pool-place.ts';

export type PackedValues = Uint8Array | Uint16Array | Uint32Array;

export interface TransposeBatch {
  layout: ResidentLayout;
  /** The decoded slot's words: frame f of the batch starts at word f * wordsPerFrame. */
  decoded: Uint32Array;
  /** Default ceil(pixels * elemSize / 4), as the decoder writes; with `planes`, the planes form's. */
  wordsPerFrame?: number;
  /**
   * uint16: the slot holds the decode's planes form (src/kernels/decoded-planes.ts), whose high planes the pass
   * zeroes after reading them (as the GPU pass does: the decode stores only nonzero high bytes).
   */
  planes?: boolean;
  /** Global index of the batch's first frame; a multiple of layout.valuesPerWord. */
  firstFrame: number;
  /** Frames in the batch. */
  frames: number;
  /**
   * A slotted high plane: the batch's high scratch (one array per row buffer, rows of `wordsPerPixel` words
   * from global row word firstFrame / 4), which gets the batch's nonzero high words (the GPU pass's highScratch).
   */
  highScratch?: {
    buffers: Uint32Array[];
    wordsPerPixel: number;
    batchHot: Uint32Array;
    batchHotWords: number;
  };
  /**
   * The histogram's bins 1..255 of the batch's unflagged values, added to `bins` (the decode's audit histogram,
   * 257 u64 bins; the GPU pass's `audit`). The load's decode leaves these bins to the transpose
   * (Bslz4DecodeParams.auditBins); a failed frame is zeros in the slot, so it adds nothing here.
   */
  histogram?: {
    /** Per pixel, nonzero = flagged (left out). */
    flags: Uint32Array;
    bins: BigUint64Array;
  };
}

/** Checks a batch against its layout; returns wordsPerFrame. Shared with the GPU pass. */
export function checkTransposeBatch(b: Omit<TransposeBatch, 'decoded' | 'highScratch'>): number {
  const { layout, firstFrame, frames } = b;
  const minWords = Math.ceil((layout.pixels * layout.elemSize) / 4);
  if (b.planes) {
    const form = decodedPlanesLayout(layout.pixels);
    if (layout.elemSize !== 2 || layout.form !== 'planes' || b.histogram) {
      throw new StemflowError(
        'invalid',
        'A decoded slot of byte planes is for uint16 values into byte-plane rows, without the histogram.',
      );
    }
    if ((b.wordsPerFrame ?? form.wordsPerFrame) !== form.wordsPerFrame) {
      throw new StemflowError(
        'invalid',
        `A decoded frame of ${layout.pixels} pixels as byte planes is ${form.wordsPerFrame} words.`,
      );
    }
  }
  const wordsPerFrame =
    b.wordsPerFrame ?? (b.planes ? decodedPlanesLayout(layout.pixels).wordsPerFrame : minWords);
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

/**
 * Transposes one batch into `resident` (one Uint32Array per buffer of the layout, `bufferBytes` order) and adds
 * its DP sums (u64, wrapping).
 */
export function detectorTranspose(
  batch: TransposeBatch,
  resident: Uint32Array[],
  dpSums: BigUint64Array,
): void {
  if (batch.planes) {
    checkTransposeBatch(batch);
    // (fromDecodedPlanes checks that the slot holds the batch's frames.)
    const packed = fromDecodedPlanes(batch.decoded, batch.frames, batch.layout.pixels);
    detectorTranspose(
      { ...batch, planes: false, decoded: packed, wordsPerFrame: undefined },
      resident,
      dpSums,
    );
    clearDecodedHighPlanes(batch.decoded, batch.frames, batch.layout.pixels);
    return;
  }
  const { layout, decoded, firstFrame, frames } = batch;
  const wordsPerFrame = checkTransposeBatch(batch);
  const { pixels, elemSize, valuesPerWord: vpw, wordsPerPixel, pixelsPerBuffer } = layout;
  if (decoded.length < frames * wordsPerFrame && frames > 0) {
    throw new StemflowError('invalid', `The decoded slot holds fewer than ${frames} frames.`);
  }
  if (dpSums.length < pixels) throw new StemflowError('invalid', `DP sums need ${pixels} entries.`);
  const { lo, hi, hot } = residentParts(layout, resident);
  const scratch = batch.highScratch;
  if ((layout.high === 'slots') !== (scratch !== undefined)) {
    throw new StemflowError(
      'invalid',
      'A slotted high plane takes the batch high words through a high scratch (highScratch), a full one not.',
    );
  }
  if (scratch) {
    checkHighScratch(layout, firstFrame, frames, {
      ...scratch,
      bufferBytes: scratch.buffers.map((a) => a.byteLength),
      batchHotBytes: scratch.batchHot.byteLength,
    });
  }
  const histogram = batch.histogram;
  if (histogram && (histogram.flags.length < pixels || histogram.bins.length < 256)) {
    throw new StemflowError('invalid', `The histogram needs flags for ${pixels} pixels and 256 bins.`);
  }
  const counts = histogram ? new Float64Array(256) : null;
  const planes = layout.form === 'planes';
  const bits = planes ? 8 : elemSize * 8;
  const outWords = Math.ceil(frames / vpw);
  const firstWord = firstFrame / vpw;
  for (let p = 0; p < pixels; p++) {
    const binned = counts !== null && histogram!.flags[p] === 0 ? counts : null;
    const buffer = Math.floor(p / pixelsPerBuffer);
    const rows = bufferRows(layout, buffer);
    const at = (w: number) =>
      tiledIndex(p - buffer * pixelsPerBuffer, firstWord + w, rows, wordsPerPixel, layout.tileWords);
    let sum = 0;
    let exact = 0n;
    for (let w = 0; w < outWords; w++) {
      let word = 0;
      let high = 0;
      for (let k = 0; k < vpw; k++) {
        const f = w * vpw + k;
        if (f >= frames) break;
        const v = valueAt(decoded, f * wordsPerFrame, p, elemSize);
        sum += v;
        if (binned && v !== 0 && v < 256) binned[v]++;
        if (elemSize === 4) word = v;
        else {
          word = (word | ((v & 0xff) << (k * bits))) >>> 0;
          high = (high | ((v >>> 8) << (k * bits))) >>> 0;
        }
      }
      lo[buffer][at(w)] = word;
      if (planes && high !== 0) {
        const segment = Math.floor((firstFrame + w * vpw) / layout.segmentFrames);
        hot![p * layout.hotWordsPerPixel + (segment >>> 5)] |= 1 << (segment & 31);
        if (scratch) {
          scratch.buffers[buffer][(p - buffer * pixelsPerBuffer) * scratch.wordsPerPixel + w] = high;
          const rel = segment - Math.floor(firstFrame / layout.segmentFrames);
          scratch.batchHot[p * scratch.batchHotWords + (rel >>> 5)] |= 1 << (rel & 31);
        } else hi![buffer][at(w)] = high;
      }
      if (sum >= 2 ** 52) {
        exact += BigInt(sum);
        sum = 0;
      }
    }
    dpSums[p] += exact + BigInt(sum);
  }
  if (counts) for (let v = 1; v < 256; v++) histogram!.bins[v] += BigInt(counts[v]);
}

/**
 * Reference for round trips (independent of the twin): scan-order values (frame-major, `frames x pixels`)
 * placed element by element into fresh resident buffers (zeros in the padding): for 'planes' the low and high
 * bytes into their planes and the hot bit of every (pixel, segment) holding a value above 255.
 */
export function residentFromScan(layout: ResidentLayout, values: PackedValues): Uint32Array[] {
  const { frames, pixels, elemSize, valuesPerWord: vpw, bufferBytes } = layout;
  if (values.length !== frames * pixels || values.BYTES_PER_ELEMENT !== elemSize) {
    throw new StemflowError('invalid', `Expected ${frames} x ${pixels} values of ${elemSize} bytes.`);
  }
  const buffers = bufferBytes.map((b) => new Uint32Array(b / 4));
  const { lo, hi, hot } = residentParts(layout, buffers);
  const Type = (layout.form === 'planes' ? Uint8Array : values.constructor) as new (
    buffer: ArrayBuffer,
  ) => PackedValues;
  const loViews = lo.map((b) => new Type(b.buffer));
  const hiViews = hi?.map((b) => new Uint8Array(b.buffer));
  for (let f = 0; f < frames; f++) {
    for (let p = 0; p < pixels; p++) {
      const { buffer, index } = residentWordIndex(layout, p, Math.floor(f / vpw));
      const at = index * vpw + (f % vpw);
      const v = values[f * pixels + p];
      if (!hiViews) {
        loViews[buffer][at] = v;
        continue;
      }
      loViews[buffer][at] = v & 0xff;
      hiViews[buffer][at] = v >>> 8;
      if (v > 255) {
        const segment = Math.floor(f / layout.segmentFrames);
        hot![p * layout.hotWordsPerPixel + (segment >>> 5)] |= 1 << (segment & 31);
      }
    }
  }
  return buffers;
}

/**
 * Value of pixel p at frame s from resident buffers on the host (`bufferBytes` order); uint16 reads the high
 * byte only where the hot bit is set, as the GPU passes do (from the full high row, or from the pixel's slot in
 * the compact high buffer).
 */
export function residentValueAt(
  layout: ResidentLayout,
  resident: readonly Uint32Array[],
  p: number,
  s: number,
): number {
  const { buffer: b, index: word } = residentWordIndex(layout, p, Math.floor(s / layout.valuesPerWord));
  const v = resident[b][word];
  if (layout.elemSize === 4) return v;
  const shift = (s % 4) * 8;
  const low = (v >>> shift) & 0xff;
  if (layout.form === 'packed') return low;
  const g = Math.floor(s / layout.segmentFrames);
  const hot = resident[2 * layout.rowBuffers];
  if (!((hot[p * layout.hotWordsPerPixel + (g >>> 5)] >>> (g & 31)) & 1)) return low;
  const high = resident[layout.rowBuffers + b];
  const at =
    layout.high === 'slots'
      ? highSegmentWord(layout, resident[2 * layout.rowBuffers + 1], p, g) +
        Math.floor((s - g * layout.segmentFrames) / 4)
      : word;
  return low + 256 * ((high[at] >>> shift) & 0xff);
}

/** Word of position g x segmentFrames of pixel p's hot segment g in its row buffer's slot pool. */
export function highSegmentWord(
  layout: ResidentLayout,
  slotTable: Uint32Array,
  p: number,
  g: number,
): number {
  const entry = slotTable[p * layout.segments + g];
  if (entry === 0) {
    throw new StemflowError('invalid', `Hot segment ${g} of pixel ${p} has no slot in the slot table.`);
  }
  return (entry - 1) * (layout.slotFrames / 4);
}

/**
 * The compact high plane on the host (the reference for the GPU compaction, which copies the same bytes): the
 * hot segments of each row buffer's full high rows into consecutive slots, pixel by pixel. Returns the compact
 * layout and its buffers (the low plane and bitmap shared with the input).
 */
export function compactResident(
  layout: ResidentLayout,
  resident: readonly Uint32Array[],
): { layout: ResidentLayout; resident: Uint32Array[] } {
  const parts = residentParts(layout, resident);
  if (!parts.hi || !parts.hot)
    throw new StemflowError('invalid', 'Only uint16 byte planes have a high plane.');
  const { layout: compact, slotTable } = compactResidentLayout(layout, parts.hot);
  const high = compact.bufferBytes
    .slice(layout.rowBuffers, 2 * layout.rowBuffers)
    .map((n) => new Uint32Array(n / 4));
  const segWords = layout.segmentFrames / 4;
  for (let p = 0; p < layout.pixels; p++) {
    for (let g = 0; g < layout.segments; g++) {
      const entry = slotTable[p * layout.segments + g];
      if (entry === 0) continue;
      // A segment lies in one row tile (tiles are whole segments).
      const { buffer: b, index } = residentWordIndex(layout, p, g * segWords);
      const words = Math.min(layout.wordsPerPixel, (g + 1) * segWords) - g * segWords;
      high[b].set(parts.hi[b].subarray(index, index + words), ((entry - 1) * compact.slotFrames) / 4);
    }
  }
  return { layout: compact, resident: [...parts.lo, ...high, parts.hot, slotTable] };
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

/**
 * Pixel p's row (its scan image, `layout.frames` values) in the words of each resident buffer it touches, for
 * writing a synthetic resident set from the host: runs of words per buffer index (`bufferBytes` order, word
 * offset; one run per row tile and plane) and the hot bits to OR into the bitmap ('planes'; high-plane words
 * only where nonzero are needed, but the whole row is given). Rows are zero-padded to wordsPerPixel.
 */
export function residentRow(
  layout: ResidentLayout,
  p: number,
  values: PackedValues,
  hotBitmap: Uint32Array | null,
): { buffer: number; wordOffset: number; words: Uint32Array }[] {
  if (values.length !== layout.frames || values.BYTES_PER_ELEMENT !== layout.elemSize) {
    throw new StemflowError('invalid', `A row holds ${layout.frames} values of ${layout.elemSize} bytes.`);
  }
  const { buffer: b, runs } = locatePixel(layout, p);
  const lo = new Uint32Array(layout.wordsPerPixel);
  const split = (buffer: number, row: Uint32Array) =>
    runs.map((r) => ({
      buffer,
      wordOffset: r.wordOffset,
      words: row.subarray(r.rowWord, r.rowWord + r.words),
    }));
  if (layout.form === 'packed') {
    new (values.constructor as new (b: ArrayBuffer) => PackedValues)(lo.buffer).set(values);
    return split(b, lo);
  }
  if (!hotBitmap) throw new StemflowError('invalid', 'A uint16 row needs the hot bitmap.');
  const hi = new Uint32Array(layout.wordsPerPixel);
  const loBytes = new Uint8Array(lo.buffer);
  const hiBytes = new Uint8Array(hi.buffer);
  for (let s = 0; s < values.length; s++) {
    loBytes[s] = values[s] & 0xff;
    hiBytes[s] = values[s] >>> 8;
    if (values[s] > 255) {
      const segment = Math.floor(s / layout.segmentFrames);
      hotBitmap[p * layout.hotWordsPerPixel + (segment >>> 5)] |= 1 << (segment & 31);
    }
  }
  return [...split(b, lo), ...split(layout.rowBuffers + b, hi)];
}
