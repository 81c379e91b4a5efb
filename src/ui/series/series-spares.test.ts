import { describe, expect, it } from 'vitest';
import { SeriesSpares } from './series-spares';

// Each array tagged by its values, so that equal lists hold the same arrays.
let tag = 0;
const image = () => new Uint32Array(4).fill(++tag);

describe('series panel spare image arrays', () => {
  it('retires only the replaced Uint32Arrays not shown any more, handed out once', () => {
    const spares = new SeriesSpares();
    const [a, b, kept] = [image(), image(), image()];
    const wide = new Float64Array(4);
    spares.retire([a, b, kept, wide], [kept, image(), image(), image()]);
    expect(spares.take()).toEqual([a, b]);
    expect(spares.take()).toEqual([]);
  });

  it('keeps the newest, at most as many as the query shown, one per buffer, none detached', () => {
    const spares = new SeriesSpares();
    const first = [image(), image()];
    const second = [image(), image()];
    const third = [image(), image()];
    spares.retire(first, second);
    spares.retire(second, third);
    expect(spares.take()).toEqual(second);
    const shared = image();
    spares.retire([shared, shared, new Uint32Array(shared.buffer)], third);
    const once = spares.take();
    expect(once).toHaveLength(1);
    expect(once[0]).toBe(shared);
    const gone = image();
    spares.retire([gone, gone, new Uint32Array(gone.buffer)], third);
    structuredClone(gone.buffer, { transfer: [gone.buffer] });
    expect(spares.take()).toEqual([]);
    spares.retire(first, third);
    spares.clear();
    expect(spares.take()).toEqual([]);
  });
});
