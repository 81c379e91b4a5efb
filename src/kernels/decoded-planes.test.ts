import { describe, expect, it } from 'vitest';
import { isStemflowError } from '../errors.ts';
import {
  clearDecodedHighPlanes,
  decodedPlanesLayout,
  fromDecodedPlanes,
  toDecodedPlanes,
} from './decoded-planes.ts';
import { decodedSlot } from './detector-transpose.ts';

describe("decoded byte planes (the load's uint16 slot form)", () => {
  it('lays out planes of 16-byte rows, a mark vec4, spans of 64-pixel multiples, at most 32', () => {
    expect(decodedPlanesLayout(192 * 192)).toEqual({
      pixels: 36864,
      planeWords: 9216,
      wordsPerFrame: 18436,
      spanElems: 1152,
      spans: 32,
    });
    expect(decodedPlanesLayout(1155)).toMatchObject({ planeWords: 292, spanElems: 64, spans: 19 });
    expect(decodedPlanesLayout(1)).toEqual({
      pixels: 1,
      planeWords: 4,
      wordsPerFrame: 12,
      spanElems: 64,
      spans: 1,
    });
    for (const p of [1, 63, 64, 65, 1155, 2048, 2049, 36864, 65536, 262144, 1028 * 1062]) {
      const f = decodedPlanesLayout(p);
      expect(f.spanElems % 64).toBe(0);
      expect(f.spans).toBeLessThanOrEqual(32);
      expect(f.spans * f.spanElems).toBeGreaterThanOrEqual(p);
      expect(f.planeWords * 4).toBeGreaterThanOrEqual(p);
      expect(f.planeWords % 4).toBe(0);
    }
    let error: unknown;
    try {
      decodedPlanesLayout(0);
    } catch (e) {
      error = e;
    }
    expect(isStemflowError(error, 'invalid')).toBe(true);
  });

  it('splits values into low and high planes with exact marks, and back', () => {
    const pixels = 1155;
    const frames = 3;
    const values = new Uint16Array(frames * pixels);
    for (let i = 0; i < values.length; i++) values[i] = (i * 37) % 256;
    values[0] = 256; // frame 0, span 0
    values[pixels + 1154] = 65535; // frame 1, the last pixel: span 18
    values[pixels + 64] = 0x1234; // frame 1, span 1
    const packed = decodedSlot(values, pixels, 0, frames);
    const planes = toDecodedPlanes(packed, frames, pixels);
    const f = decodedPlanesLayout(pixels);
    expect(planes.length).toBe(frames * f.wordsPerFrame);
    const bytes = new Uint8Array(planes.buffer);
    const mark = (s: number) => planes[s * f.wordsPerFrame + 2 * f.planeWords];
    expect([mark(0), mark(1), mark(2)]).toEqual([1, (1 << 18) | 2, 0]);
    expect(bytes[f.wordsPerFrame * 4 + 64]).toBe(0x34);
    expect(bytes[f.wordsPerFrame * 4 + f.planeWords * 4 + 64]).toBe(0x12);
    // Padding after the values and the mark's other words are zero.
    expect(bytes.subarray(pixels, f.planeWords * 4).every((b) => b === 0)).toBe(true);
    expect(Array.from(planes.subarray(2 * f.planeWords + 1, f.wordsPerFrame))).toEqual([0, 0, 0]);
    expect(fromDecodedPlanes(planes, frames, pixels)).toEqual(decodedSlot(values, pixels, 0, frames));
    clearDecodedHighPlanes(planes, frames, pixels);
    for (let s = 0; s < frames; s++) {
      const high = planes.subarray(
        s * f.wordsPerFrame + f.planeWords,
        s * f.wordsPerFrame + 2 * f.planeWords,
      );
      expect(high.every((w) => w === 0)).toBe(true);
    }
    // The low planes and the marks stay.
    expect(mark(1)).toBe((1 << 18) | 2);
    expect(fromDecodedPlanes(planes, frames, pixels)).toEqual(
      decodedSlot(
        values.map((v) => v & 0xff),
        pixels,
        0,
        frames,
      ),
    );
  });

  it('refuses slots too small for their frames', () => {
    expect(() => toDecodedPlanes(new Uint32Array(10), 1, 1155)).toThrow(/does not hold 1 frames/);
    expect(() => fromDecodedPlanes(new Uint32Array(10), 1, 1155)).toThrow(/as byte planes/);
  });
});
