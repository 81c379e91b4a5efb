import { describe, expect } from 'vitest';
import { compactResident, decodedSlot, residentFromScan } from '../kernels/detector-transpose.ts';
import { residentVirtualImage } from '../kernels/resident-virtual-image.ts';
import { virtualDetectorSums } from '../kernels/virtual-detector.ts';
import { createDetectorTransposePass, createResidentBuffers } from './passes/detector-transpose.ts';
import { createResidentVirtualImagePass } from './passes/resident-virtual-image.ts';
import { compactHighPlane } from './resident-compact.ts';
import { groupPixelsByBuffer } from './resident-index.ts';
import { planResidentLayout, residentParts } from './resident-layout.ts';
import { rng } from './test-data.ts';
import { trackBuffers, withGpu } from './test-harness.ts';

describe('compacting the uint16 high byte plane', () => {
  withGpu(
    'copies exactly the hot segments (as the host reference), frees the full plane; images stay exact',
    async (ctx) => {
      const frames = 4500; // 36 segments of 128 per pixel: 2 bitmap words, the last segment partial
      const pixels = 1147; // odd; row buffers of 300 pixels
      const values = new Uint16Array(frames * pixels);
      const next = rng(77);
      for (let i = 0; i < values.length; i++) values[i] = next() % 5 === 0 ? next() % 200 : 0;
      const at = (f: number, p: number) => f * pixels + p;
      // A bright disk (hot everywhere: one copy per pixel), lone outliers, a hot last (partial) segment.
      for (let f = 0; f < frames; f++)
        for (let p = 560; p < 590; p++) values[at(f, p)] = 256 + ((f * p) % 4000);
      for (let p = 0; p < pixels; p += 37) values[at((p * 131) % frames, p)] = 255 + (p % 3);
      values[at(frames - 1, 1146)] = 65535;
      values[at(128 * 31, 7)] = 300; // segment 31, the last bit of bitmap word 0
      values[at(128 * 32, 7)] = 300; // segment 32, the first of word 1: one run across words
      const layout = planResidentLayout({
        frames,
        pixels,
        elemSize: 2,
        maxBindingBytes: ctx.device.limits.maxStorageBufferBindingSize,
        pixelsPerBufferLimit: 300,
        segmentFrames: 128,
      });
      const tracked = trackBuffers(ctx.device);
      const resident = createResidentBuffers(ctx.device, layout, 'test resident');
      try {
        const transpose = createDetectorTransposePass(ctx.device, { elemSize: 2 });
        const dpSums = ctx.storage(pixels * 8);
        for (let f = 0; f < frames; f += 1024) {
          const n = Math.min(1024, frames - f);
          transpose.run({
            layout,
            decoded: ctx.upload(decodedSlot(values, pixels, f, n)),
            firstFrame: f,
            frames: n,
            resident,
            dpSums,
          });
        }
        const hot = await ctx.readBack(residentParts(layout, resident).hot!, Uint32Array);
        const fullHigh = residentParts(layout, resident).hi!;
        const aliveBefore = tracked.alive();
        const c = await compactHighPlane(ctx.device, layout, resident, hot);
        // Each full high buffer destroyed for its compact one, plus the hot bases.
        expect(tracked.alive()).toBe(aliveBefore + 1);
        expect(c.layout.high).toBe('slots');
        expect(c.bytesAfter).toBeLessThan(0.6 * c.bytesBefore);
        // The disk's 30 pixels take one copy each; the rest are lone segments or short runs.
        expect(c.copies).toBeLessThan(30 + 40);
        // Byte for byte the host reference's buffers.
        const reference = compactResident(layout, residentFromScan(layout, values));
        expect(reference.layout).toEqual(c.layout);
        const got = await Promise.all(c.resident.map((b) => ctx.readBack(b, Uint32Array)));
        expect(got.length).toBe(reference.resident.length);
        got.forEach((words, i) => {
          const want = reference.resident[i];
          const bad = want.findIndex((v, k) => v !== words[k]);
          expect(
            `buffer ${i}: ${bad === -1 ? 'identical' : `word ${bad}: ${words[bad]} != ${want[bad]}`}`,
          ).toBe(`buffer ${i}: identical`);
        });
        for (const b of fullHigh) expect(c.resident.includes(b)).toBe(false);
        const pass = createResidentVirtualImagePass(ctx.device, { elemSize: 2 });
        const all = Uint32Array.from({ length: pixels }, (_, p) => p);
        const half = all.filter((p) => (p * 2654435761) % 5 < 2);
        for (const list of [all, half, Uint32Array.of(7, 575, 1146)]) {
          const mask = new Uint32Array(pixels);
          for (const p of list) mask[p] = 1;
          const oracle = virtualDetectorSums(values, frames, mask);
          expect(residentVirtualImage(c.layout, reference.resident, list)).toEqual(oracle);
          const image = ctx.storage(frames * 8);
          pass.run({
            layout: c.layout,
            resident: c.resident,
            pixelList: ctx.upload(list),
            groups: groupPixelsByBuffer(c.layout, list),
            image,
          });
          const gpu = await ctx.readBack(image, BigUint64Array, frames * 8);
          const bad = gpu.findIndex((v, s) => v !== oracle[s]);
          expect(bad === -1 ? 'identical' : `position ${bad}: ${gpu[bad]} != ${oracle[bad]}`).toBe(
            'identical',
          );
        }
        for (const b of c.resident) b.destroy();
      } finally {
        tracked.stop();
        for (const b of resident) b.destroy();
      }
    },
    300_000,
  );
});
