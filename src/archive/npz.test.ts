import { describe, expect, it } from 'vitest';
import { isStemflowError } from '../errors';
import { decodeNpz, encodeNpz, npzMember, npzParts } from './npz';

describe('npz writer (stored members, CRC-32) read back by @zip.js/zip.js', () => {
  const arrays = {
    a_u8: { data: Uint8Array.from({ length: 1000 }, (_, i) => (i * 7) & 0xff), shape: [10, 100] },
    b_u16: { data: Uint16Array.from({ length: 513 }, (_, i) => i * 97), shape: [513] },
    c_f64: { data: Float64Array.from({ length: 64 }, (_, i) => i / 3), shape: [4, 4, 4] },
    d_empty: { data: new Uint32Array(0), shape: [0, 3] },
  };

  it('every array, dtype and shape reads back; members in order; parts are the same bytes', async () => {
    const npz = await encodeNpz(arrays);
    const back = await decodeNpz(npz);
    expect([...back.keys()]).toEqual(Object.keys(arrays));
    for (const [name, a] of Object.entries(arrays)) {
      expect(back.get(name)?.shape).toEqual(a.shape);
      expect(back.get(name)?.data).toEqual(a.data);
    }
    const parts = npzParts(Object.entries(arrays).map(([n, a]) => npzMember(n, a)));
    expect(parts).not.toBeNull();
    const joined = new Uint8Array(npz.byteLength);
    let at = 0;
    for (const p of parts ?? []) {
      joined.set(p, at);
      at += p.byteLength;
    }
    expect(at).toBe(npz.byteLength);
    expect(joined).toEqual(npz);
  });

  it('a changed byte of a member fails its CRC: a corrupt error', async () => {
    const npz = await encodeNpz(arrays);
    const bad = npz.slice();
    bad[200] ^= 1; // inside a_u8's data (after its 30 + 9 byte header and the .npy header)
    const error = await decodeNpz(bad, 'state.npz').catch((e) => e);
    expect(isStemflowError(error) && error.kind).toBe('corrupt');
  });

  it('leaves ZIP64 to zip.js: no stored assembly for 65,535 members or more', () => {
    const member = npzMember('m', { data: new Uint8Array(1), shape: [1] });
    expect(npzParts(Array(65_534).fill(member))).not.toBeNull();
    expect(npzParts(Array(65_535).fill(member))).toBeNull();
  });
});
