import { describe, expect, it } from 'vitest';
import { packStruct, structLayout } from './uniform-layout.ts';

const wgsl = `
struct Other { a: f32 }
struct Params {
  count: u32,
  // a comment, with a comma
  delta: i32,
  scale: f32,
}`;

describe('uniform layout reflection', () => {
  it('reads field order and pads to 16 bytes', () => {
    const layout = structLayout(wgsl, 'Params');
    expect(layout.fields.map((f) => f.name)).toEqual(['count', 'delta', 'scale']);
    expect(layout.byteSize).toBe(16);
  });

  it('packs named values at their offsets', () => {
    const layout = structLayout(wgsl, 'Params');
    const view = new DataView(packStruct(layout, { count: 2 ** 32 - 1, delta: -3, scale: 0.5 }));
    expect([view.getUint32(0, true), view.getInt32(4, true), view.getFloat32(8, true)]).toEqual([
      2 ** 32 - 1,
      -3,
      0.5,
    ]);
  });

  it('rejects missing, unknown and out-of-range fields', () => {
    const layout = structLayout(wgsl, 'Params');
    expect(() => packStruct(layout, { count: 1, delta: 0 })).toThrow(/scale is missing/);
    expect(() => packStruct(layout, { count: 1, delta: 0, scale: 0, extra: 1 })).toThrow(/no field extra/);
    expect(() => packStruct(layout, { count: 2 ** 32, delta: 0, scale: 0 })).toThrow(/does not fit/);
    expect(() => structLayout('struct P { v: vec2<u32> }', 'P')).toThrow(/not a 4-byte scalar/);
    expect(() => structLayout(wgsl, 'Missing')).toThrow(/no struct Missing/);
  });
});
