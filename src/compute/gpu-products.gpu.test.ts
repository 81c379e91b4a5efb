import { afterAll, describe, expect } from 'vitest';
import { withGpu } from '../gpu/test-harness';
import { flaggedFromMask, virtualImage } from '../products/frame-stats';
import { openAcquisition } from '../source/hdf5-acquisition';
import type { InputFile } from '../source/input-file';
import { nodeInput } from '../source/node-input';
import { fixture, loadOracle } from '../testing/fixtures';
import { loadToGpu } from './gpu-load';
import { createVirtualImager, defaultDetectors } from './gpu-products';

const arina = loadOracle().acquisitions.arina;
const opened: InputFile[] = [];
afterAll(async () => {
  await Promise.all(opened.map((i) => i.close?.()));
});

describe('virtual images from the resident counts', () => {
  withGpu('default BF/ABF/ADF and arbitrary masks equal the CPU sums over decoded frames', async (ctx) => {
    const inputs = await Promise.all([arina.master, ...arina.shards].map((n) => nodeInput(fixture(n))));
    opened.push(...inputs);
    const source = await openAcquisition(inputs);
    // uint16 byte planes with the full high plane, with only its hot segments kept after the load
    // (compactHigh), and with the slot pools the load fills (the default; pools of 2 slots make them grow).
    let fullBytes = 0;
    const runs = [
      { highPlane: 'full', compactHigh: false },
      { highPlane: 'full', compactHigh: true },
      { highPlane: 'slots', poolShare: 1 / 1000 },
    ] as const;
    for (const options of runs) {
      const load = await loadToGpu(ctx, source, { batchFrames: 64, pixelsPerBufferLimit: 2000, ...options });
      try {
        const full = options.highPlane === 'full' && !options.compactHigh;
        expect(load.plan.resident.high).toBe(full ? 'full' : 'slots');
        if (!full) expect(load.plan.residentBytes).toBeLessThan(0.6 * fullBytes);
        else fullBytes = load.plan.residentBytes;
        if (options.highPlane === 'slots') expect(load.timings.poolGrowths).toBeGreaterThan(0);
        const flagged = flaggedFromMask(source.pixelMask);
        const detectors = defaultDetectors(load.dpSums, [96, 96], flagged);
        expect(detectors.bf.kind).toBe('disk');
        const frames = new Uint16Array((await source.readFrames(0, 60)).buffer);
        const everything = new Uint8Array(9216).fill(1);
        const onePixel = new Uint8Array(9216);
        onePixel[47 * 96 + 47] = 1; // holds the planted 65535 in frame 24
        const flaggedOnly = new Uint8Array(9216);
        flaggedOnly[arina.pixel_mask.flagged_indices[2]] = 1;
        const masks = [
          detectors.masks.bf,
          detectors.masks.abf,
          detectors.masks.adf,
          everything,
          onePixel,
          flaggedOnly,
        ];
        const imager = createVirtualImager(ctx, load, flagged);
        const images = await imager.images(masks);
        masks.forEach((mask, i) => {
          expect(Array.from(images[i], Number)).toEqual(
            Array.from(virtualImage(frames, 9216, mask, flagged)),
          );
        });
        expect(Array.from(images[3], Number)).toEqual(arina.unflagged.frame_sums);
        expect(Number(images[4][24])).toBe(65535);
        expect(images[5].every((v) => v === 0)).toBe(true);
        imager.release();
      } finally {
        load.release();
      }
    }
  });
});
