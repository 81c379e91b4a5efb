import { afterAll, describe, expect } from 'vitest';
import { rng } from '../gpu/test-data';
import { withGpu } from '../gpu/test-harness';
import { annulus, disk, regionMask } from '../products/detector-geometry';
import { flaggedFromMask, virtualImage } from '../products/frame-stats';
import { openAcquisition } from '../source/hdf5-acquisition';
import type { InputFile } from '../source/input-file';
import { nodeInput } from '../source/node-input';
import { fixture, loadOracle } from '../testing/fixtures';
import { loadToGpu } from './gpu-load';
import { createVirtualImager } from './gpu-products';
import { createMaskSession } from './mask-session';

const arina = loadOracle().acquisitions.arina;
const opened: InputFile[] = [];
afterAll(async () => {
  await Promise.all(opened.map((i) => i.close?.()));
});

describe('live mask updates by exact deltas', () => {
  withGpu(
    'nudges, growth, shrinking, a flagged pixel and a full replacement equal full recomputes; rebase agrees',
    async (ctx) => {
      const inputs = await Promise.all([arina.master, ...arina.shards].map((n) => nodeInput(fixture(n))));
      opened.push(...inputs);
      const source = await openAcquisition(inputs);
      const load = await loadToGpu(ctx, source, { batchFrames: 64, pixelsPerBufferLimit: 3000 });
      try {
        const flagged = flaggedFromMask(source.pixelMask);
        const frames = new Uint16Array((await source.readFrames(0, 60)).buffer);
        const session = createMaskSession(createVirtualImager(ctx, load, flagged), flagged);
        const gestures = [
          regionMask(disk(47.3, 47.8, 16), 96, 96),
          regionMask(disk(48.3, 47.8, 16), 96, 96), // nudge right by one pixel
          regionMask(disk(48.3, 47.8, 19.5), 96, 96), // grow
          regionMask(disk(48.3, 47.8, 17), 96, 96), // shrink a little
          regionMask(disk(48.3, 47.8, 9), 96, 96), // shrink a lot
          regionMask(annulus(47, 48, 20, 44), 96, 96), // replace: more changed than kept
        ];
        const withFlagged = regionMask(disk(47.3, 47.8, 16), 96, 96);
        withFlagged[arina.pixel_mask.flagged_indices[3]] = 1;
        gestures.push(withFlagged);
        // Masks of more than half the detector: the frame totals minus the complement.
        const everything = new Uint8Array(9216).fill(1);
        const allButDisk = everything.map((_, p) => (withFlagged[p] ? 0 : 1));
        const next = rng(4);
        const random = everything.map(() => (next() % 4 === 0 ? 0 : 1));
        gestures.push(everything, random, allButDisk, regionMask(disk(40, 50, 8), 96, 96));
        const modes: string[] = [];
        const reads: number[] = [];
        for (const mask of gestures) {
          const { image, mode, pixelsRead } = await session.update(mask);
          modes.push(mode);
          reads.push(pixelsRead);
          expect(Array.from(image)).toEqual(Array.from(virtualImage(frames, 9216, mask, flagged)));
        }
        // Shrinking to r = 9 and replacing change more pixels than the new mask holds: those recompute. Masks
        // of more than half the detector (the wide annulus, 52 %) read their complement; the whole detector
        // reads nothing.
        expect(modes).toEqual([
          'full',
          'delta',
          'delta',
          'delta',
          'full',
          'complement',
          'full',
          'complement',
          'complement',
          'complement',
          'full',
        ]);
        expect(reads[7]).toBe(0);
        const last = gestures[gestures.length - 1];
        expect(Array.from(await session.rebase())).toEqual(
          Array.from(virtualImage(frames, 9216, last, flagged)),
        );
        // Concurrent updates apply in call order (each is submitted before the next is planned).
        const [a, b] = await Promise.all([session.update(random), session.update(allButDisk)]);
        expect(Array.from(a.image)).toEqual(Array.from(virtualImage(frames, 9216, random, flagged)));
        expect(Array.from(b.image)).toEqual(Array.from(virtualImage(frames, 9216, allButDisk, flagged)));
        // Released while a step reads back (another file opened during a drag): the step still ends exact,
        // a later one fails typed.
        const imager = createVirtualImager(ctx, load, flagged);
        const some = Uint32Array.from([5, 700, 4000, 9000].filter((p) => !flagged?.[p]));
        const none = new Uint32Array(0);
        const inFlight = imager.live.step({ start: 'zero', add: some, subtract: none });
        imager.release();
        const three = new Uint8Array(9216);
        for (const p of some) three[p] = 1;
        expect(Array.from(await inFlight)).toEqual(Array.from(virtualImage(frames, 9216, three, flagged)));
        const late = await imager.live.step({ start: 'zero', add: some, subtract: none }).catch((e) => e);
        expect(late.message).toMatch(/released/);
      } finally {
        load.release();
      }
    },
  );
});
