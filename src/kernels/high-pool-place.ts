/**
 * CPU twin of the `high-pool-place` GPU pass (src/shaders/high-pool-place.wgsl): one batch of a slotted uint16
 * high plane (src/gpu/resident-layout.ts, 'slots'), from the batch's high scratch (detector-transpose with a
 * highScratch: nonzero words only, the rest zero) into the slots of the (pixel, segment) pairs whose bit the
 * transpose set in the batch's own hot bits; the words copied are zeroed and the bit cleared. A pair without a
 * slot claims the next one of its row buffer's pool (zeros outside the batch's words); past the pool's capacity
 * the pair keeps no slot, its bit and words stay, and it counts as failed (the host grows the pool and runs the
 * batch again, which places exactly those). Only the slots' numbering may differ from the GPU's, which claims in no
 * fixed order; values, the table's filled entries, used and failed counts are the same.
 */
import { StemflowError } from '../errors.ts';
import { bufferPixelRange } from '../gpu/resident-index.ts';
import type { ResidentLayout } from '../gpu/resident-layout.ts';

export interface HighPoolPlaceJob {
  layout: ResidentLayout;
  /** The batch: global frames [firstFrame, firstFrame + frames); firstFrame a multiple of 16. */
  firstFrame: number;
  frames: number;
  /**
   * The batch's high scratch (one array per row buffer, rows of wordsPerPixel words from word firstFrame / 4)
   * and its own hot bits (batchHotWords a pixel, bit g - the batch's first segment): the transpose twin's
   * highScratch. The words and the bit of every pair placed are zeroed.
   */
  scratch: {
    buffers: readonly Uint32Array[];
    wordsPerPixel: number;
    batchHot: Uint32Array;
    batchHotWords: number;
  };
  /** The slot table (entries filled), the pools (one per row buffer, written). */
  slotTable: Uint32Array;
  pools: readonly Uint32Array[];
  /** Used slots per row buffer (updated); capacity per row buffer (default layout.hotSlots). */
  used: Uint32Array;
  capacity?: readonly number[];
}

/** Sizes of a batch's high scratch, in bytes (GPU buffers or host arrays alike). */
export interface HighScratchShape {
  wordsPerPixel: number;
  batchHotWords: number;
  /** One per row buffer. */
  bufferBytes: readonly number[];
  batchHotBytes: number;
}

/**
 * What a batch's high scratch must be for `layout` and frames [firstFrame, firstFrame + frames): checked the
 * same way by both transposes and both place passes (GPU and CPU twins refuse the same input). A batch starts
 * at a multiple of 16 frames; rows are 16-byte aligned, hold the batch's frames and every pixel of their row
 * buffer; the batch's hot bits hold each segment it touches for every pixel.
 */
export function checkHighScratch(
  layout: ResidentLayout,
  firstFrame: number,
  frames: number,
  s: HighScratchShape,
): void {
  if (firstFrame % 16 !== 0 || s.wordsPerPixel % 4 !== 0 || s.bufferBytes.length !== layout.rowBuffers) {
    throw new StemflowError(
      'invalid',
      'The high scratch needs a batch starting at a multiple of 16 frames and one buffer of 16-byte rows per row buffer.',
    );
  }
  const S = layout.segmentFrames;
  const segments = Math.floor((firstFrame + Math.max(frames, 1) - 1) / S) - Math.floor(firstFrame / S) + 1;
  if (s.batchHotWords * 32 < segments || s.batchHotBytes < layout.pixels * s.batchHotWords * 4) {
    throw new StemflowError(
      'invalid',
      `The batch's hot bits do not hold ${segments} segments of every pixel.`,
    );
  }
  if (Math.ceil(frames / 4) > s.wordsPerPixel) {
    throw new StemflowError(
      'invalid',
      `High scratch rows of ${s.wordsPerPixel} words hold fewer than ${frames} frames.`,
    );
  }
  s.bufferBytes.forEach((bytes, b) => {
    const { first, end } = bufferPixelRange(layout, b);
    if (bytes < (end - first) * s.wordsPerPixel * 4) {
      throw new StemflowError('invalid', `High scratch buffer ${b} is smaller than its row buffer's pixels.`);
    }
  });
}

/** The batch's segments [first, end), and the words of each pair to copy. Shared with the GPU pass. */
export function placeGeometry(layout: ResidentLayout, firstFrame: number, frames: number) {
  if (layout.high !== 'slots')
    throw new StemflowError('invalid', 'Only a slotted high plane has slot pools.');
  if (!Number.isInteger(firstFrame) || firstFrame < 0 || firstFrame % 16 !== 0) {
    throw new StemflowError(
      'invalid',
      `A batch of a slotted high plane starts at a multiple of 16 frames, not ${firstFrame}.`,
    );
  }
  if (!Number.isInteger(frames) || frames <= 0 || firstFrame + frames > layout.frames) {
    throw new StemflowError(
      'invalid',
      `Frames ${firstFrame}..${firstFrame + frames} are not in the scan's ${layout.frames}.`,
    );
  }
  const S = layout.segmentFrames;
  return {
    segFirst: Math.floor(firstFrame / S),
    segEnd: Math.floor((firstFrame + frames - 1) / S) + 1,
    batchWord0: firstFrame / 4,
    batchWords: Math.ceil(frames / 4),
    segmentWords: S / 4,
    slotWords: layout.slotFrames / 4,
  };
}

/** Places one batch; returns the pairs that found no slot, per row buffer. */
export function highPoolPlace(job: HighPoolPlaceJob): number[] {
  const { layout, firstFrame, frames, scratch, slotTable, pools, used } = job;
  const g = placeGeometry(layout, firstFrame, frames);
  checkHighScratch(layout, firstFrame, frames, {
    ...scratch,
    bufferBytes: scratch.buffers.map((a) => a.byteLength),
    batchHotBytes: scratch.batchHot.byteLength,
  });
  const capacity = job.capacity ?? layout.hotSlots;
  const failed = new Array<number>(layout.rowBuffers).fill(0);
  for (let b = 0; b < layout.rowBuffers; b++) {
    const { first, end } = bufferPixelRange(layout, b);
    const pool = pools[b];
    if (pool.length < capacity[b] * g.slotWords) {
      throw new StemflowError('invalid', `Pool ${b} holds fewer than ${capacity[b]} slots.`);
    }
    for (let segment = g.segFirst; segment < g.segEnd; segment++) {
      const segWord0 = segment * g.segmentWords;
      const c0 = Math.max(segWord0, g.batchWord0) - segWord0;
      const c1 = Math.min(segWord0 + g.slotWords, g.batchWord0 + g.batchWords) - segWord0;
      const rel = segment - g.segFirst;
      for (let pixel = first; pixel < end; pixel++) {
        const bAt = pixel * scratch.batchHotWords + (rel >>> 5);
        const bit = 1 << (rel & 31);
        if (!(scratch.batchHot[bAt] & bit)) continue;
        const row = (pixel - first) * scratch.wordsPerPixel + segWord0 - g.batchWord0;
        const words = scratch.buffers[b];
        const at = pixel * layout.segments + segment;
        let fresh = false;
        if (slotTable[at] === 0) {
          if (used[b] >= capacity[b]) {
            failed[b]++;
            continue;
          }
          slotTable[at] = ++used[b];
          fresh = true;
        }
        scratch.batchHot[bAt] &= ~bit;
        const slot0 = (slotTable[at] - 1) * g.slotWords;
        for (let j = 0; j < g.slotWords; j++) {
          if (j >= c0 && j < c1) {
            pool[slot0 + j] = words[row + j];
            words[row + j] = 0;
          } else if (fresh) pool[slot0 + j] = 0;
        }
      }
    }
  }
  return failed;
}
