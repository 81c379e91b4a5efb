import { describe, expect, it } from 'vitest';
import { isStemflowError } from '../../errors';
import { memorySource } from '../byte-source';
import { openHdf5 } from './index';
import { writeU } from './test-support/mutate';

const UNDEF = 2 ** 53; // written as all-ones below

/** Little-endian byte builder for hand-made structures the h5py writer cannot produce (superblock v1 ...). */
class Bytes {
  readonly b = new Uint8Array(512);
  pos = 0;
  at(p: number): this {
    this.pos = p;
    return this;
  }
  u(n: number, v: number): this {
    if (v === UNDEF) this.b.fill(0xff, this.pos, this.pos + n);
    else writeU(this.b, this.pos, n, v);
    this.pos += n;
    return this;
  }
  s(text: string): this {
    for (const ch of text) this.b[this.pos++] = ch.charCodeAt(0);
    return this;
  }
}

/** A v1 link message body padded to 8 bytes: hard (address) or soft (target). */
function link(w: Bytes, name: string, to: number | string): void {
  const body = new Bytes();
  body.u(1, 1).u(1, typeof to === 'number' ? 0 : 0x08);
  if (typeof to === 'string') body.u(1, 1);
  body.u(1, name.length).s(name);
  if (typeof to === 'number') body.u(8, to);
  else body.u(2, to.length).s(to);
  const size = Math.ceil(body.pos / 8) * 8;
  w.u(2, 6).u(2, size).u(1, 0).u(3, 0);
  w.b.set(body.b.subarray(0, size), w.pos);
  w.pos += size;
}

/**
 * Superblock v1 at 0; root group = v1 object header at 128 with a hard link to itself and a continuation
 * block at 256 holding two soft links (one to itself: a loop).
 */
function build(): Uint8Array {
  const w = new Bytes();
  w.s('\x89HDF\r\n\x1a\n').u(1, 1).u(1, 0).u(1, 0).u(1, 0).u(1, 0).u(1, 8).u(1, 8).u(1, 0);
  w.u(2, 4).u(2, 16).u(4, 0).u(2, 32).u(2, 0);
  w.u(8, 0).u(8, UNDEF).u(8, 400).u(8, UNDEF);
  w.u(8, 0).u(8, 128).u(4, 0).u(4, 0).u(16, 0);
  w.at(128).u(1, 1).u(1, 0).u(2, 3).u(4, 1).u(4, 48).u(4, 0);
  link(w, 'self', 128); // 8 + 16
  w.u(2, 0x10).u(2, 16).u(1, 0).u(3, 0).u(8, 256).u(8, 64);
  w.at(256);
  link(w, 'soft', '/self');
  link(w, 'loop', '/loop');
  return w.b.slice(0, 400);
}

describe('hand-made structures', () => {
  it('reads a version-1 superblock and a v1 object header with a continuation block', async () => {
    const h5 = await openHdf5(memorySource(build(), 'synthetic.h5'));
    expect(h5.superblock).toMatchObject({ version: 1, chunkK: 32, rootObjectAddress: 128, baseAddress: 0 });
    const links = await h5.listLinks('/');
    expect(links).toEqual([
      { name: 'self', kind: 'hard', address: 128 },
      { name: 'soft', kind: 'soft', target: '/self' },
      { name: 'loop', kind: 'soft', target: '/loop' },
    ]);
    expect(await h5.getLink('/self/self/soft')).toEqual({ kind: 'soft', target: '/self' });
    expect((await h5.listLinks('/soft/self')).length).toBe(3);
  });

  it('stops soft-link loops and says what is not a dataset', async () => {
    const h5 = await openHdf5(memorySource(build(), 'synthetic.h5'));
    await expect(h5.dataset('/loop')).rejects.toSatisfy((e) => isStemflowError(e, 'corrupt'));
    await expect(h5.dataset('/self')).rejects.toSatisfy((e) => isStemflowError(e, 'not-found'));
  });

  it('stops object header continuation loops', async () => {
    const bytes = build();
    writeU(bytes, 128 + 16 + 24 + 8, 8, 144); // the continuation points back at the first header chunk
    const h5 = await openHdf5(memorySource(bytes, 'synthetic.h5'));
    await expect(h5.listLinks('/')).rejects.toSatisfy((e) => isStemflowError(e, 'corrupt'));
  });
});
