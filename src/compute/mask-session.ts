/**
 * Live virtual images while a mask is dragged: each update reads only the detector pixels that changed
 * (added and removed), and the image stays an exact integer sum. `rebase` recomputes from scratch and must
 * give the same numbers (tests require it). Sums are held in float64: a position's sum is at most
 * pixels x max count (36,864 x 2^32 for uint32 sources, < 2^53), so every value is an exact integer.
 */
import { unflaggedMask } from '../products/frame-stats.ts';
import type { VirtualImager } from './gpu-products.ts';

export interface MaskUpdate {
  image: Float64Array;
  /** 'delta': the previous image plus the added pixels minus the removed ones; 'full': from scratch. */
  mode: 'delta' | 'full';
  /** Detector pixels whose scan images were read for this update. */
  pixelsRead: number;
}

export interface MaskSession {
  update(mask: Uint8Array): Promise<MaskUpdate>;
  /** Recomputes the current mask's image from scratch (the reference for the deltas). */
  rebase(): Promise<Float64Array>;
}

export function createMaskSession(imager: VirtualImager, flagged: Uint8Array | null): MaskSession {
  let current: Uint8Array | null = null;
  let image: Float64Array | null = null;
  const count = (m: Uint8Array) => m.reduce((n, v) => n + v, 0);
  const full = async (mask: Uint8Array): Promise<MaskUpdate> => {
    const result = await imager.image(mask);
    current = mask;
    image = result;
    return { image: result.slice(), mode: 'full', pixelsRead: count(mask) };
  };
  return {
    async update(next) {
      const mask = unflaggedMask(next, flagged);
      if (!current || !image || current.length !== mask.length) return full(mask);
      const added = new Uint8Array(mask.length);
      const removed = new Uint8Array(mask.length);
      let changed = 0;
      for (let p = 0; p < mask.length; p++) {
        if (mask[p] && !current[p]) {
          added[p] = 1;
          changed++;
        } else if (!mask[p] && current[p]) {
          removed[p] = 1;
          changed++;
        }
      }
      // A delta reads the changed pixels; from scratch reads the new mask. Take the cheaper.
      if (changed >= count(mask)) return full(mask);
      const result = image.slice();
      if (changed > 0) {
        const [plus, minus] = await imager.images([added, removed]);
        for (let i = 0; i < result.length; i++) result[i] += plus[i] - minus[i];
      }
      current = mask;
      image = result;
      return { image: result.slice(), mode: 'delta', pixelsRead: changed };
    },
    async rebase() {
      if (!current) throw new Error('No mask yet');
      return (await full(current)).image;
    },
  };
}
