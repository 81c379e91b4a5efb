/**
 * Live virtual images while a mask is dragged. The image lives on the GPU (live-image.ts) as exact u64 sums;
 * each update reads the fewest detector rows among three exact ways to get it:
 * - 'delta': the current image plus the pixels the mask gained minus those it lost;
 * - 'full': from zero, plus the mask's pixels;
 * - 'complement': the exact frame totals over the unflagged pixels minus the pixels the mask leaves out, so
 *   no mask from scratch reads more than half of the unflagged detector.
 * `rebase` recomputes from zero plus the mask's pixels (the direct sum) and must give the same numbers (tests
 * require it). Images arrive as float64: a position's sum is at most pixels x max count (36,864 x 2^32 for
 * uint32 sources, < 2^53), so every value is an exact integer.
 */
import type { GpuTimer } from '../gpu/gpu-timer.ts';
import { unflaggedMask } from '../products/frame-stats.ts';
import type { VirtualImager } from './gpu-products.ts';
import type { LiveStart } from './live-image.ts';

export type MaskUpdateMode = 'delta' | 'full' | 'complement';

export interface MaskUpdate {
  image: Float64Array;
  mode: MaskUpdateMode;
  /** Detector pixels whose scan images were read for this update. */
  pixelsRead: number;
  /** Those pixels: added to, and subtracted from, the image (for the bytes read, `residentReads`). */
  added: Uint32Array;
  subtracted: Uint32Array;
}

export interface MaskSession {
  /** `timer` (benchmarks) marks the GPU work of the update. */
  update(mask: Uint8Array, options?: { timer?: GpuTimer }): Promise<MaskUpdate>;
  /** Recomputes the current mask's image from scratch (the reference for the deltas). */
  rebase(): Promise<Float64Array>;
}

export interface MaskStep {
  mode: MaskUpdateMode;
  start: LiveStart;
  add: Uint32Array;
  subtract: Uint32Array;
  pixelsRead: number;
}

/**
 * The cheapest exact step from `current` (the mask the image holds, or null) to `mask` (flagged pixels already
 * removed): fewest rows read; ties keep the simpler way (full before complement before delta).
 * `counted` marks the unflagged pixels; `complement` says whether exact frame totals over them exist.
 */
export function planMaskStep(
  current: Uint8Array | null,
  mask: Uint8Array,
  counted: Uint8Array,
  complement: boolean,
): MaskStep {
  const inMask: number[] = [];
  const outside: number[] = [];
  for (let p = 0; p < mask.length; p++) {
    if (mask[p]) inMask.push(p);
    else if (counted[p]) outside.push(p);
  }
  const none = new Uint32Array(0);
  let best: MaskStep =
    complement && outside.length < inMask.length
      ? {
          mode: 'complement',
          start: 'totals',
          add: none,
          subtract: Uint32Array.from(outside),
          pixelsRead: outside.length,
        }
      : {
          mode: 'full',
          start: 'zero',
          add: Uint32Array.from(inMask),
          subtract: none,
          pixelsRead: inMask.length,
        };
  if (current && current.length === mask.length) {
    const added: number[] = [];
    const removed: number[] = [];
    for (let p = 0; p < mask.length; p++) {
      if (mask[p] && !current[p]) added.push(p);
      else if (!mask[p] && current[p]) removed.push(p);
    }
    const changed = added.length + removed.length;
    if (changed < best.pixelsRead) {
      best = {
        mode: 'delta',
        start: 'current',
        add: Uint32Array.from(added),
        subtract: Uint32Array.from(removed),
        pixelsRead: changed,
      };
    }
  }
  return best;
}

export function createMaskSession(imager: VirtualImager, flagged: Uint8Array | null): MaskSession {
  // The mask the GPU image holds once the submitted steps complete (null: unknown, start afresh).
  let current: Uint8Array | null = null;
  let counted: Uint8Array | null = null;
  const apply = async (mask: Uint8Array, step: MaskStep, timer?: GpuTimer): Promise<MaskUpdate> => {
    // The step is submitted before `step()` first awaits: later updates plan from this mask.
    const pending = imager.live.step({ start: step.start, add: step.add, subtract: step.subtract, timer });
    current = mask;
    try {
      return {
        image: await pending,
        mode: step.mode,
        pixelsRead: step.pixelsRead,
        added: step.add,
        subtracted: step.subtract,
      };
    } catch (e) {
      if (current === mask) current = null;
      throw e;
    }
  };
  return {
    update(next, options = {}) {
      const mask = unflaggedMask(next, flagged);
      if (!counted || counted.length !== mask.length)
        counted = unflaggedMask(new Uint8Array(mask.length).fill(1), flagged);
      return apply(mask, planMaskStep(current, mask, counted, imager.live.hasTotals), options.timer);
    },
    async rebase() {
      if (!current) throw new Error('No mask yet');
      return (await apply(current, planMaskStep(null, current, current, false))).image;
    },
  };
}
