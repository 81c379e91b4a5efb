import { describe, expect, it } from 'vitest';
import { planResidentLayout } from '../gpu/resident-layout.ts';
import { decodedSlot, detectorTranspose, residentFromScan, residentValueAt } from './detector-transpose.ts';

describe('detectorTranspose (CPU twin)', () => {
  it('splits uint16 scan images per pixel into byte planes and sums each pixel over the batch', () => {
    // 6 frames of 3 pixels: value = 10 * frame + pixel, and pixel 1 of frame 1 is 0x1234.
    const values = Uint16Array.from({ length: 18 }, (_, i) => 10 * Math.floor(i / 3) + (i % 3));
    values[4] = 0x1234;
    const layout = planResidentLayout({ frames: 6, pixels: 3, elemSize: 2, maxBindingBytes: 2 ** 20 });
    expect(layout.bufferBytes).toEqual([48, 48, 12]);
    const resident = layout.bufferBytes.map((b) => new Uint32Array(b / 4));
    const sums = new BigUint64Array(3);
    detectorTranspose(
      { layout, decoded: decodedSlot(values, 3, 0, 4), firstFrame: 0, frames: 4 },
      resident,
      sums,
    );
    detectorTranspose(
      { layout, decoded: decodedSlot(values, 3, 4, 2), firstFrame: 4, frames: 2 },
      resident,
      sums,
    );
    // Pixel 1 (row words 4..7): frames 1, 0x1234, 21, 31, 41, 51 -> low bytes 01 34 15 1f | 29 33, high 00 12.
    expect([...resident[0].subarray(4, 8)]).toEqual([0x1f153401, 0x3329, 0, 0]);
    expect([...resident[1].subarray(4, 8)]).toEqual([0x1200, 0, 0, 0]);
    expect([...resident[2]]).toEqual([0, 1, 0]);
    expect([...sums]).toEqual([150n, BigInt(156 - 11 + 0x1234), 162n]);
    expect(resident).toEqual(residentFromScan(layout, values));
    for (let p = 0; p < 3; p++)
      for (let s = 0; s < 6; s++) expect(residentValueAt(layout, resident, p, s)).toBe(values[s * 3 + p]);
    expect(() =>
      detectorTranspose(
        { layout, decoded: decodedSlot(values, 3, 2, 1), firstFrame: 2, frames: 1 },
        resident,
        sums,
      ),
    ).toThrow(/multiple of 4/);
  });

  it('uint16 edge values, one outlier per segment, a partial last segment, odd pixels, several buffers', () => {
    const frames = 300; // segments of 128: 128, 128, 44 (partial)
    const pixels = 7;
    const values = new Uint16Array(frames * pixels);
    for (let i = 0; i < values.length; i++) values[i] = (i * 2654435761) % 200;
    const at = (s: number, p: number) => s * pixels + p;
    values[at(0, 0)] = 255; // not hot
    values[at(5, 1)] = 256; // hot: pixel 1 segment 0
    values[at(299, 2)] = 65535; // hot: pixel 2, the partial last segment
    values[at(128, 6)] = 300; // hot: pixel 6 segment 1 (a buffer boundary below)
    const layout = planResidentLayout({
      frames,
      pixels,
      elemSize: 2,
      maxBindingBytes: 2 ** 20,
      pixelsPerBufferLimit: 4,
      segmentFrames: 128,
    });
    expect([layout.rowBuffers, layout.segments]).toEqual([2, 3]);
    const resident = layout.bufferBytes.map((b) => new Uint32Array(b / 4));
    const sums = new BigUint64Array(pixels);
    // Batches of 64 (as the load does); the last one ends inside a word.
    for (let f = 0; f < frames; f += 64) {
      const n = Math.min(64, frames - f);
      detectorTranspose(
        { layout, decoded: decodedSlot(values, pixels, f, n), firstFrame: f, frames: n },
        resident,
        sums,
      );
    }
    const reference = residentFromScan(layout, values);
    expect(resident).toEqual(reference);
    const hot = resident[4];
    expect([...hot]).toEqual([0, 1 << 0, 1 << 2, 0, 0, 0, 1 << 1]);
    for (let p = 0; p < pixels; p++) {
      let sum = 0;
      for (let s = 0; s < frames; s++) {
        sum += values[at(s, p)];
        if (residentValueAt(layout, resident, p, s) !== values[at(s, p)]) expect.unreachable(`${p} ${s}`);
      }
      expect(sums[p]).toBe(BigInt(sum));
    }
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
    expect(layout.rowBuffers).toBe(3);
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
    expect(() => detectorTranspose({ layout: big, decoded: ones, firstFrame: 0, frames }, [], s)).toThrow(
      /1 buffers, not 0/,
    );
    expect(s[0]).toBe(BigInt(frames) * 0xffffffffn);
  });
});
