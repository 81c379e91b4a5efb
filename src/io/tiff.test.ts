import { describe, expect, it } from 'vitest';
import { encodeTiff } from './tiff';

/** A minimal baseline TIFF reader for the test: little-endian, first IFD, one strip. */
function readTiff(bytes: Uint8Array) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  expect(String.fromCharCode(bytes[0], bytes[1])).toBe('II');
  expect(view.getUint16(2, true)).toBe(42);
  const ifd = view.getUint32(4, true);
  const n = view.getUint16(ifd, true);
  const tags = new Map<number, { type: number; count: number; at: number }>();
  let previous = -1;
  for (let i = 0; i < n; i++) {
    const at = ifd + 2 + i * 12;
    const tag = view.getUint16(at, true);
    expect(tag).toBeGreaterThan(previous); // tags ascend
    previous = tag;
    tags.set(tag, { type: view.getUint16(at + 2, true), count: view.getUint32(at + 4, true), at: at + 8 });
  }
  expect(view.getUint32(ifd + 2 + n * 12, true)).toBe(0);
  const value = (tag: number) => {
    const t = tags.get(tag)!;
    return t.type === 3 ? view.getUint16(t.at, true) : view.getUint32(t.at, true);
  };
  const text = (tag: number) => {
    const t = tags.get(tag);
    if (!t) return null;
    const offset = t.count > 4 ? view.getUint32(t.at, true) : t.at;
    return new TextDecoder().decode(bytes.subarray(offset, offset + t.count - 1));
  };
  const rational = (tag: number) => {
    const offset = view.getUint32(tags.get(tag)!.at, true);
    return [view.getUint32(offset, true), view.getUint32(offset + 4, true)];
  };
  const width = value(256);
  const height = value(257);
  const format = value(339);
  const offset = value(273);
  expect(value(279)).toBe(width * height * 4);
  expect(value(278)).toBe(height);
  const pixels = Array.from({ length: width * height }, (_, i) =>
    format === 3 ? view.getFloat32(offset + i * 4, true) : view.getUint32(offset + i * 4, true),
  );
  return {
    width,
    height,
    bits: value(258),
    compression: value(259),
    photometric: value(262),
    samples: value(277),
    planar: value(284),
    unit: value(296),
    resolution: [rational(282), rational(283)],
    format,
    description: text(270),
    pixels,
    offset,
    tags: [...tags.keys()],
  };
}

describe('TIFF writer', () => {
  it('writes uint32 images exactly, read back from the IFD', () => {
    const data = Uint32Array.from({ length: 12 }, (_, i) => i * 357913941);
    data[11] = 4294967295;
    const t = readTiff(encodeTiff(data, 3, 4, 'stemflow BF {"r": 4.5}'));
    expect([t.width, t.height, t.bits, t.compression, t.photometric, t.samples, t.planar, t.format]).toEqual([
      4, 3, 32, 1, 1, 1, 1, 1,
    ]);
    expect(t.pixels).toEqual(Array.from(data));
    expect(t.description).toBe('stemflow BF {"r": 4.5}');
    expect(t.resolution).toEqual([
      [1, 1],
      [1, 1],
    ]);
    expect(t.unit).toBe(1);
  });

  it('writes float32 images (SampleFormat 3), 8-byte aligned pixel data, without a description', () => {
    const data = Float32Array.from([0, 1.5, -2, 16777216, Number.NaN, 3.25]);
    const bytes = encodeTiff(data, 2, 3);
    const t = readTiff(bytes);
    expect(t.format).toBe(3);
    expect(t.description).toBeNull();
    expect(t.tags).not.toContain(270);
    expect(t.pixels.slice(0, 4)).toEqual([0, 1.5, -2, 16777216]);
    expect(Number.isNaN(t.pixels[4])).toBe(true);
    expect(t.pixels[5]).toBe(3.25);
    expect(t.offset % 8).toBe(0);
    expect(bytes.length).toBe(t.offset + 24);
  });

  it('refuses a shape that does not hold the values, and replaces non-ASCII text', () => {
    expect(() => encodeTiff(new Float32Array(5), 2, 3)).toThrow(/2x3/);
    expect(readTiff(encodeTiff(new Uint32Array(1), 1, 1, 'r ≤ 4')).description).toBe('r ? 4');
  });
});
