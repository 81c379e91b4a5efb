import { describe, expect, it } from 'vitest';
import { planResidentLayout } from '../gpu/resident-layout.ts';
import { compactResident, residentFromScan, residentValueAt } from './detector-transpose.ts';
import { residentReads, residentVirtualImage } from './resident-virtual-image.ts';
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

  it('uint16 planes: reads the high plane only in hot segments; residentReads counts the bytes', () => {
    const frames = 300; // segments 128, 128, 44
    const pixels = 5;
    const values = new Uint16Array(frames * pixels).fill(7);
    values[10 * pixels + 1] = 256; // pixel 1, segment 0
    values[299 * pixels + 3] = 65535; // pixel 3, segment 2 (partial)
    const layout = planResidentLayout({
      frames,
      pixels,
      elemSize: 2,
      maxBindingBytes: 2 ** 20,
      segmentFrames: 128,
    });
    const resident = residentFromScan(layout, values);
    // Nonzero high bytes in a cold segment must be ignored (the load never writes them).
    new Uint8Array(resident[1].buffer)[0 * layout.wordsPerPixel * 4 + 5] = 0xff;
    const list = [0, 1, 3];
    const mask = new Uint32Array(pixels);
    for (const p of list) mask[p] = 1;
    expect(residentVirtualImage(layout, resident, list)).toEqual(virtualDetectorSums(values, frames, mask));
    expect(residentReads(layout, resident[2], list)).toEqual({
      pixels: 3,
      hotSegments: 2,
      segments: 9,
      loBytes: 3 * 304,
      hiBytes: 128 + (304 - 256),
    });
    const packed = planResidentLayout({ frames, pixels, elemSize: 1, maxBindingBytes: 2 ** 20 });
    expect(residentReads(packed, null, list)).toMatchObject({ loBytes: 3 * 304, hiBytes: 0 });
  });

  it('a compact high plane (hot segments only) reads the same values and images', () => {
    const frames = 4500; // 36 segments of 128 (2 bitmap words per pixel), the last partial
    const pixels = 9;
    const values = new Uint16Array(frames * pixels);
    for (let i = 0; i < values.length; i++) values[i] = (i * 2654435761) % 97;
    for (let p = 0; p < pixels; p++)
      for (let g = 0; g < 36; g++)
        if ((g * 5 + p) % 4 === 0) values[Math.min(frames - 1, g * 128 + p) * pixels + p] = 256 + 1000 * g;
    const layout = planResidentLayout({
      frames,
      pixels,
      elemSize: 2,
      maxBindingBytes: 2 ** 20,
      pixelsPerBufferLimit: 4,
      segmentFrames: 128,
    });
    const full = residentFromScan(layout, values);
    const { layout: compact, resident } = compactResident(layout, full);
    expect(compact.high).toBe('slots');
    const hot = full[2 * layout.rowBuffers];
    let hotCount = 0;
    for (const w of hot) for (let b = 0; b < 32; b++) hotCount += (w >>> b) & 1;
    expect(compact.hotSlots.reduce((a, b) => a + b)).toBe(hotCount);
    // Low plane, the hot slots, the bitmap (2 words per pixel) and the slot table (36 segments per pixel).
    expect(compact.totalBytes).toBe(4512 * 9 + hotCount * 128 + 9 * 8 + 9 * 36 * 4);
    for (let p = 0; p < pixels; p++)
      for (let s = 0; s < frames; s++)
        if (residentValueAt(compact, resident, p, s) !== values[s * pixels + p])
          expect.unreachable(`${p} ${s}`);
    for (const list of [[0, 1, 2, 3, 4, 5, 6, 7, 8], [1, 4, 8], [5]]) {
      const mask = new Uint32Array(pixels);
      for (const p of list) mask[p] = 1;
      expect(residentVirtualImage(compact, resident, list)).toEqual(
        virtualDetectorSums(values, frames, mask),
      );
    }
  });
});
