import { describe, expect, it } from 'vitest';
import { matchSpares, uniqueBuffers } from './image-spares';

// Each array tagged by its values, so that equal lists hold the same arrays.
let tag = 0;
const image = (n: number) => new Uint32Array(n).fill(++tag);
const detached = (n: number) => {
  const im = image(n);
  structuredClone(im.buffer, { transfer: [im.buffer] });
  return im;
};

describe('series worker spare image arrays', () => {
  it('gives one distinct array per acquisition, each of its length, in order', () => {
    const a = image(6);
    const b = image(4);
    const c = image(6);
    const { into, kept } = matchSpares([a, b, c], [4, 6, 6]);
    expect(into).toHaveLength(3);
    expect(into?.map((im) => im.length)).toEqual([4, 6, 6]);
    expect(into?.[0]).toBe(b);
    expect(new Set(into).size).toBe(3);
    expect(new Set(into)).toEqual(new Set([a, b, c]));
    expect(kept).toEqual([]);
  });

  it('gives none when a length lacks an array, and keeps those a later query can use', () => {
    const a = image(6);
    const b = image(5);
    const { into, kept } = matchSpares([a, b], [6, 6]);
    expect(into).toBeUndefined();
    expect(kept).toEqual([a]);
    // The next query's spares complete the set.
    const c = image(6);
    const next = matchSpares([...kept, c], [6, 6]);
    expect(next.into && new Set(next.into)).toEqual(new Set([a, c]));
  });

  it('counts an array, or a buffer, once', () => {
    const a = image(6);
    expect(matchSpares([a, a], [6, 6]).into).toBeUndefined();
    const buffer = new ArrayBuffer(48);
    const whole = new Uint32Array(buffer);
    expect(matchSpares([whole, new Uint32Array(buffer)], [12, 12]).into).toBeUndefined();
    expect(matchSpares([whole, new Uint32Array(buffer)], [12]).into?.[0]).toBe(whole);
  });

  it('refuses detached arrays, views of part of a buffer and other types', () => {
    const part = new Uint32Array(new ArrayBuffer(32), 0, 6);
    const offset = new Uint32Array(new ArrayBuffer(28), 4, 6);
    const other = new Int32Array(6) as unknown as Uint32Array;
    const spares = [detached(6), part, offset, other];
    expect(matchSpares(spares, [6])).toEqual({ into: undefined, kept: [] });
    expect(matchSpares(spares, [0])).toEqual({ into: undefined, kept: [] });
  });

  it('keeps at most as many of a length as the query needs, and none of other lengths', () => {
    const spares = [4, 4, 4, 7, 9].map(image);
    const { into, kept } = matchSpares(spares, [4, 4, 8]);
    expect(into).toBeUndefined();
    expect(kept).toEqual([spares[0], spares[1]]);
    expect(matchSpares(spares, []).into).toEqual([]);
    expect(matchSpares(spares, []).kept).toEqual([]);
  });

  it('lists each buffer once for a transfer', () => {
    const buffer = new ArrayBuffer(16);
    const other = image(2);
    expect(uniqueBuffers([new Uint32Array(buffer), new Uint8Array(buffer), other])).toEqual([
      buffer,
      other.buffer,
    ]);
  });
});
