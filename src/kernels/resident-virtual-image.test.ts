import { describe, expect, it } from 'vitest';
import { planResidentLayout } from '../gpu/resident-layout.ts';
import { residentFromScan } from './detector-transpose.ts';
import { residentVirtualImage } from './resident-virtual-image.ts';
import { virtualDetectorSums } from './virtual-detector.ts';

describe('residentVirtualImage (CPU twin)', () => {
  it('equals the frame-major virtual detector for uint8/uint16/uint32 over several buffers', () => {
    for (const Type of [Uint8Array, Uint16Array, Uint32Array]) {
      const frames = 13;
      const pixels = 22;
      const values = new Type(frames * pixels);
      for (let i = 0; i < values.length; i++) values[i] = (i * 2654435761) >>> 0;
      const layout = planResidentLayout({
        frames,
        pixels,
        elemSize: Type.BYTES_PER_ELEMENT as 1 | 2 | 4,
        maxBindingBytes: 2 ** 20,
        pixelsPerBufferLimit: 4,
      });
      const resident = residentFromScan(layout, values);
      for (const list of [[], [0], [1, 5, 6, 7, 20, 21], Array.from({ length: pixels }, (_, i) => i)]) {
        const mask = new Uint32Array(pixels);
        for (const p of list) mask[p] = 1;
        expect(residentVirtualImage(layout, resident, list)).toEqual(
          virtualDetectorSums(values, frames, mask),
        );
      }
    }
  });

  it('is exact past 2^53 (2^21 + 1 rows of 2^32 - 1)', () => {
    const pixels = 2 ** 21 + 1;
    const layout = planResidentLayout({ frames: 1, pixels, elemSize: 4, maxBindingBytes: 2 ** 30 });
    const resident = [new Uint32Array(pixels * layout.wordsPerPixel)];
    for (let p = 0; p < pixels; p++) resident[0][p * layout.wordsPerPixel] = 0xffffffff;
    const list = Uint32Array.from({ length: pixels }, (_, i) => i);
    expect(residentVirtualImage(layout, resident, list)[0]).toBe(BigInt(pixels) * 0xffffffffn);
  });
});
