import { describe, expect, it } from 'vitest';
import { isStemflowError } from '../errors.ts';
import { bufferPixelRange, groupPixelsByBuffer, locatePixel, planResidentLayout } from './resident-layout.ts';

const GiB = 2 ** 30;

describe('planResidentLayout', () => {
  it('512x512 x 192x192 uint16 with a 2 GiB binding (Dawn reports 2^31 - 4): 10 buffers of 4,094 pixels', () => {
    const l = planResidentLayout({
      frames: 512 * 512,
      pixels: 192 * 192,
      elemSize: 2,
      maxBindingBytes: 2 * GiB - 4,
    });
    expect(l.valuesPerWord).toBe(2);
    expect(l.framesPadded).toBe(262144);
    expect(l.wordsPerPixel).toBe(131072);
    expect(l.pixelsPerBuffer).toBe(4094);
    expect(l.bufferCount).toBe(10);
    expect(l.bufferBytes.slice(0, 9).every((b) => b === 4094 * 524288)).toBe(true);
    expect(l.bufferBytes[9]).toBe((36864 - 9 * 4094) * 524288);
    expect(l.totalBytes).toBe(19327352832);
    expect(l.bufferBytes.reduce((a, b) => a + b)).toBe(l.totalBytes);
    expect(Math.max(...l.bufferBytes)).toBeLessThanOrEqual(2 * GiB - 4);
  });

  it('exactly 2^31 bytes holds 4,096 rows: 9 buffers', () => {
    const l = planResidentLayout({
      frames: 512 * 512,
      pixels: 192 * 192,
      elemSize: 2,
      maxBindingBytes: 2 * GiB,
    });
    expect([l.pixelsPerBuffer, l.bufferCount]).toEqual([4096, 9]);
  });

  it('maxBufferSize limits too', () => {
    const l = planResidentLayout({
      frames: 512 * 512,
      pixels: 192 * 192,
      elemSize: 2,
      maxBindingBytes: 4 * GiB,
      maxBufferBytes: GiB,
    });
    expect([l.pixelsPerBuffer, l.bufferCount]).toEqual([2048, 18]);
  });

  it('uint8: 4 frames per word, rows padded to 16 frames, pixels per buffer a multiple of 4', () => {
    const l = planResidentLayout({ frames: 1001, pixels: 1155, elemSize: 1, maxBindingBytes: 1008 * 103 });
    expect(l.valuesPerWord).toBe(4);
    expect(l.framesPadded).toBe(1008);
    expect(l.wordsPerPixel).toBe(252);
    expect(l.pixelsPerBuffer).toBe(100);
    expect(l.bufferCount).toBe(12);
    expect(l.bufferBytes[11]).toBe(55 * 1008);
  });

  it('uint32: 1 frame per word, rows padded to 4 frames, any pixel count per buffer', () => {
    const l = planResidentLayout({
      frames: 45,
      pixels: 1155,
      elemSize: 4,
      maxBindingBytes: GiB,
      pixelsPerBufferLimit: 37,
    });
    expect([l.valuesPerWord, l.framesPadded, l.wordsPerPixel, l.pixelsPerBuffer, l.bufferCount]).toEqual([
      1, 48, 48, 37, 32,
    ]);
    expect(l.bufferBytes[31]).toBe((1155 - 31 * 37) * 192);
  });

  it('one buffer when everything fits; odd pixel counts keep their size', () => {
    const l = planResidentLayout({ frames: 7, pixels: 33, elemSize: 2, maxBindingBytes: GiB });
    expect([l.framesPadded, l.wordsPerPixel, l.pixelsPerBuffer, l.bufferCount, l.totalBytes]).toEqual([
      8,
      4,
      33,
      1,
      33 * 16,
    ]);
  });

  it('forced small buffers round down to whole words of the decoded slot', () => {
    const l = planResidentLayout({
      frames: 8,
      pixels: 1155,
      elemSize: 2,
      maxBindingBytes: GiB,
      pixelsPerBufferLimit: 101,
    });
    expect([l.pixelsPerBuffer, l.bufferCount]).toEqual([100, 12]);
  });

  it('a binding too small for one row is refused as budget with the numbers', () => {
    let error: unknown;
    try {
      planResidentLayout({ frames: 262144, pixels: 36864, elemSize: 2, maxBindingBytes: 500000 });
    } catch (e) {
      error = e;
    }
    expect(isStemflowError(error, 'budget')).toBe(true);
    expect((error as Error).message).toMatch(/524288 bytes.*500000 bytes/);
    // uint8 needs 4 rows per buffer (one decoded word), so 3 rows are not enough.
    expect(() => planResidentLayout({ frames: 16, pixels: 100, elemSize: 1, maxBindingBytes: 48 })).toThrow(
      /4 such/,
    );
  });

  it('rejects nonsense', () => {
    expect(() => planResidentLayout({ frames: 0, pixels: 1, elemSize: 2, maxBindingBytes: 1 })).toThrow(
      /frames/,
    );
    expect(() =>
      planResidentLayout({ frames: 1, pixels: 1, elemSize: 3 as 2, maxBindingBytes: 1 }),
    ).toThrow();
  });
});

describe('locatePixel, bufferPixelRange, groupPixelsByBuffer', () => {
  const l = planResidentLayout({
    frames: 8,
    pixels: 1155,
    elemSize: 2,
    maxBindingBytes: GiB,
    pixelsPerBufferLimit: 100,
  });

  it('locates rows', () => {
    expect(locatePixel(l, 0)).toEqual({ buffer: 0, wordOffset: 0 });
    expect(locatePixel(l, 99)).toEqual({ buffer: 0, wordOffset: 99 * 4 });
    expect(locatePixel(l, 100)).toEqual({ buffer: 1, wordOffset: 0 });
    expect(locatePixel(l, 1154)).toEqual({ buffer: 11, wordOffset: 54 * 4 });
    expect(() => locatePixel(l, 1155)).toThrow(/outside/);
    expect(bufferPixelRange(l, 11)).toEqual({ first: 1100, end: 1155 });
  });

  it('groups a sorted list per buffer, skipping empty buffers', () => {
    expect(groupPixelsByBuffer(l, [])).toEqual([]);
    expect(groupPixelsByBuffer(l, [3, 99, 100, 550, 551, 1154])).toEqual([
      { buffer: 0, start: 0, count: 2 },
      { buffer: 1, start: 2, count: 1 },
      { buffer: 5, start: 3, count: 2 },
      { buffer: 11, start: 5, count: 1 },
    ]);
    expect(() => groupPixelsByBuffer(l, [5, 5])).toThrow(/strictly increasing/);
    expect(() => groupPixelsByBuffer(l, [1155])).toThrow();
  });
});
