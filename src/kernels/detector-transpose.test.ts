import { describe, expect, it } from 'vitest';
import { planResidentLayout } from '../gpu/resident-layout.ts';
import { decodedSlot, detectorTranspose, residentFromScan } from './detector-transpose.ts';

describe('detectorTranspose (CPU twin)', () => {
  it('packs uint16 scan images per pixel and sums each pixel over the batch', () => {
    // 3 frames of 3 pixels: value = 10 * frame + pixel.
    const values = Uint16Array.from({ length: 9 }, (_, i) => 10 * Math.floor(i / 3) + (i % 3));
    const layout = planResidentLayout({ frames: 3, pixels: 3, elemSize: 2, maxBindingBytes: 2 ** 20 });
    const resident = [new Uint32Array(layout.bufferBytes[0] / 4)];
    const sums = new BigUint64Array(3);
    detectorTranspose(
      { layout, decoded: decodedSlot(values, 3, 0, 2), firstFrame: 0, frames: 2 },
      resident,
      sums,
    );
    detectorTranspose(
      { layout, decoded: decodedSlot(values, 3, 2, 1), firstFrame: 2, frames: 1 },
      resident,
      sums,
    );
    // Pixel 1: frames 1, 11, 21 -> words (11 << 16 | 1), 21.
    expect([...resident[0].subarray(4, 8)]).toEqual([(11 << 16) | 1, 21, 0, 0]);
    expect([...sums]).toEqual([30n, 33n, 36n]);
    expect(resident).toEqual(residentFromScan(layout, values));
  });

  it('uint8 over two buffers, and uint32 sums past 2^53', () => {
    const values = Uint8Array.from({ length: 9 * 10 }, (_, i) => (i * 37) & 255);
    const layout = planResidentLayout({
      frames: 9,
      pixels: 10,
      elemSize: 1,
      maxBindingBytes: 2 ** 20,
      pixelsPerBufferLimit: 4,
    });
    expect(layout.bufferCount).toBe(3);
    const resident = layout.bufferBytes.map((b) => new Uint32Array(b / 4));
    const sums = new BigUint64Array(10);
    detectorTranspose(
      { layout, decoded: decodedSlot(values, 10, 0, 4), firstFrame: 0, frames: 4 },
      resident,
      sums,
    );
    detectorTranspose(
      { layout, decoded: decodedSlot(values, 10, 4, 5), firstFrame: 4, frames: 5 },
      resident,
      sums,
    );
    expect(resident).toEqual(residentFromScan(layout, values));
    expect(() =>
      detectorTranspose(
        { layout, decoded: decodedSlot(values, 10, 1, 4), firstFrame: 1, frames: 4 },
        resident,
        sums,
      ),
    ).toThrow(/multiple of 4/);

    const frames = 2 ** 22;
    const big = planResidentLayout({ frames, pixels: 1, elemSize: 4, maxBindingBytes: 2 ** 30 });
    const ones = new Uint32Array(frames).fill(0xffffffff);
    const s = new BigUint64Array(1);
    detectorTranspose({ layout: big, decoded: ones, firstFrame: 0, frames }, [new Uint32Array(frames)], s);
    expect(s[0]).toBe(BigInt(frames) * 0xffffffffn);
  });
});
