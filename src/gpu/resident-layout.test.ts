import { describe, expect, it } from 'vitest';
import { isStemflowError } from '../errors.ts';
import {
  bufferPixelRange,
  bufferRows,
  groupPixelsByBuffer,
  locatePixel,
  residentWordIndex,
  tiledIndex,
} from './resident-index.ts';
import { planResidentLayout } from './resident-layout.ts';

const GiB = 2 ** 30;

describe('planResidentLayout', () => {
  it('512x512 x 192x192 uint16 with a 2 GiB binding (Dawn reports 2^31 - 4): 2 byte planes of 5 buffers', () => {
    const l = planResidentLayout({
      frames: 512 * 512,
      pixels: 192 * 192,
      elemSize: 2,
      maxBindingBytes: 2 * GiB - 4,
    });
    expect([l.form, l.planes, l.valuesPerWord]).toEqual(['planes', 2, 4]);
    expect(l.framesPadded).toBe(262144);
    expect(l.wordsPerPixel).toBe(65536);
    expect(l.pixelsPerBuffer).toBe(8190); // 8,191 rows fit; rounded down to whole uint16 slot words
    expect(l.rowBuffers).toBe(5);
    expect(l.rowBufferBytes.slice(0, 4).every((b) => b === 8190 * 262144)).toBe(true);
    expect(l.rowBufferBytes[4]).toBe((36864 - 4 * 8190) * 262144);
    // 64 segments of 4,096 positions per pixel: 2 bitmap words.
    expect([l.segmentFrames, l.segments, l.hotWordsPerPixel, l.hotBytes]).toEqual([4096, 64, 2, 36864 * 8]);
    expect(l.bufferBytes).toEqual([...l.rowBufferBytes, ...l.rowBufferBytes, 36864 * 8]);
    expect(l.totalBytes).toBe(19327352832 + 36864 * 8);
    expect(Math.max(...l.bufferBytes)).toBeLessThanOrEqual(2 * GiB - 4);
  });

  it('exactly 2^31 bytes holds 8,192 rows per plane: 5 buffers', () => {
    const l = planResidentLayout({
      frames: 512 * 512,
      pixels: 192 * 192,
      elemSize: 2,
      maxBindingBytes: 2 * GiB,
    });
    expect([l.pixelsPerBuffer, l.rowBuffers]).toEqual([8192, 5]);
  });

  it('maxBufferSize limits too', () => {
    const l = planResidentLayout({
      frames: 512 * 512,
      pixels: 192 * 192,
      elemSize: 2,
      maxBindingBytes: 4 * GiB,
      maxBufferBytes: GiB,
    });
    expect([l.pixelsPerBuffer, l.rowBuffers]).toEqual([4096, 9]);
  });

  it('uint16 segments: a partial last segment, and more than 32 segments per pixel', () => {
    const l = planResidentLayout({
      frames: 300,
      pixels: 7,
      elemSize: 2,
      maxBindingBytes: GiB,
      segmentFrames: 128,
    });
    expect([l.framesPadded, l.wordsPerPixel, l.segments, l.hotWordsPerPixel]).toEqual([304, 76, 3, 1]);
    expect(l.bufferBytes).toEqual([7 * 304, 7 * 304, 28]);
    const many = planResidentLayout({
      frames: 33 * 128 + 1,
      pixels: 3,
      elemSize: 2,
      maxBindingBytes: GiB,
      segmentFrames: 128,
    });
    expect([many.segments, many.hotWordsPerPixel, many.hotBytes]).toEqual([34, 2, 24]);
    expect(() =>
      planResidentLayout({ frames: 300, pixels: 7, elemSize: 2, maxBindingBytes: GiB, segmentFrames: 100 }),
    ).toThrow(/multiple of 128/);
  });

  it('uint8: 4 frames per word, rows padded to 16 frames, pixels per buffer a multiple of 4', () => {
    const l = planResidentLayout({ frames: 1001, pixels: 1155, elemSize: 1, maxBindingBytes: 1008 * 103 });
    expect(l.valuesPerWord).toBe(4);
    expect(l.framesPadded).toBe(1008);
    expect(l.wordsPerPixel).toBe(252);
    expect(l.pixelsPerBuffer).toBe(100);
    expect(l.rowBuffers).toBe(12);
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
    expect([l.valuesPerWord, l.framesPadded, l.wordsPerPixel, l.pixelsPerBuffer, l.rowBuffers]).toEqual([
      1, 48, 48, 37, 32,
    ]);
    expect(l.bufferBytes[31]).toBe((1155 - 31 * 37) * 192);
  });

  it('one buffer when everything fits; odd pixel counts keep their size', () => {
    const l = planResidentLayout({ frames: 7, pixels: 33, elemSize: 2, maxBindingBytes: GiB });
    expect([l.framesPadded, l.wordsPerPixel, l.pixelsPerBuffer, l.rowBuffers, l.totalBytes]).toEqual([
      16,
      4,
      33,
      1,
      2 * 33 * 16 + 33 * 4,
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
    expect([l.pixelsPerBuffer, l.rowBuffers]).toEqual([100, 12]);
  });

  it('a binding too small for one row is refused as budget with the numbers', () => {
    let error: unknown;
    try {
      planResidentLayout({ frames: 262144, pixels: 36864, elemSize: 2, maxBindingBytes: 400000 });
    } catch (e) {
      error = e;
    }
    expect(isStemflowError(error, 'budget')).toBe(true);
    expect((error as Error).message).toMatch(/262144 bytes per byte plane.*400000 bytes/);
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
    const run = (wordOffset: number) => [{ rowWord: 0, wordOffset, words: 4 }];
    expect(locatePixel(l, 0)).toEqual({ buffer: 0, runs: run(0) });
    expect(locatePixel(l, 99)).toEqual({ buffer: 0, runs: run(99 * 4) });
    expect(locatePixel(l, 100)).toEqual({ buffer: 1, runs: run(0) });
    expect(locatePixel(l, 1154)).toEqual({ buffer: 11, runs: run(54 * 4) });
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

describe('row tiles', () => {
  it('validates and clamps the tile', () => {
    const base = { frames: 1000, pixels: 10, maxBindingBytes: GiB } as const;
    // uint16 byte planes: 16 positions a group, and whole hot segments when tiled.
    expect(planResidentLayout({ ...base, elemSize: 2, segmentFrames: 256, tileFrames: 512 })).toMatchObject({
      framesPadded: 1008,
      wordsPerPixel: 252,
      tileFrames: 512,
      tileWords: 128,
    });
    expect(() => planResidentLayout({ ...base, elemSize: 2, segmentFrames: 256, tileFrames: 384 })).toThrow(
      /not a whole number of hot segments/,
    );
    expect(() => planResidentLayout({ ...base, elemSize: 2, tileFrames: 24 })).toThrow(/multiple of 16/);
    expect(() => planResidentLayout({ ...base, elemSize: 4, tileFrames: 0 })).toThrow(/multiple of 4/);
    // A tile at least the padded row is the untiled layout (and needs no whole segments).
    expect(planResidentLayout({ ...base, elemSize: 2, tileFrames: 8192 })).toMatchObject({
      tileFrames: 1008,
      tileWords: 252,
    });
    // uint32: one value a word.
    expect(planResidentLayout({ ...base, elemSize: 4, tileFrames: 100 })).toMatchObject({
      framesPadded: 1000,
      tileFrames: 100,
      tileWords: 100,
    });
  });

  it('places every word of every row exactly once, tile by tile', () => {
    const l = planResidentLayout({
      frames: 1000,
      pixels: 23,
      elemSize: 2,
      maxBindingBytes: GiB,
      pixelsPerBufferLimit: 8,
      segmentFrames: 256,
      tileFrames: 256,
    });
    expect(l.rowBuffers).toBe(3);
    expect(l.tileWords).toBe(64);
    for (let b = 0; b < l.rowBuffers; b++) {
      const rows = bufferRows(l, b);
      expect(rows).toBe(b < 2 ? 8 : 7);
      const seen = new Uint8Array(rows * l.wordsPerPixel);
      for (let r = 0; r < rows; r++) {
        const p = b * l.pixelsPerBuffer + r;
        for (let w = 0; w < l.wordsPerPixel; w++) {
          const at = residentWordIndex(l, p, w);
          expect(at.buffer).toBe(b);
          seen[at.index]++;
        }
      }
      expect(seen.every((n) => n === 1)).toBe(true);
    }
    // Row 5 of buffer 2 (7 rows): whole tiles of 64 words, then the last tile of 252 - 192 = 60 words.
    expect(locatePixel(l, 21).runs).toEqual([
      { rowWord: 0, wordOffset: 5 * 64, words: 64 },
      { rowWord: 64, wordOffset: 64 * 7 + 5 * 64, words: 64 },
      { rowWord: 128, wordOffset: 128 * 7 + 5 * 64, words: 64 },
      { rowWord: 192, wordOffset: 192 * 7 + 5 * 60, words: 60 },
    ]);
    // Untiled is the plain row-major layout.
    expect(tiledIndex(3, 17, 8, 252, 252)).toBe(3 * 252 + 17);
  });
});
