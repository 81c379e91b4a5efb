import { describe, expect, it } from 'vitest';
import { isStemflowError } from '../errors';
import { blobSource } from '../io/byte-source';
import { failingBlob } from './faults';

describe('fault injection', () => {
  it('fails reads of a blob after the first ones, as an unreadable file, with a typed error', async () => {
    const blob = new Blob([new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8])]);
    const source = blobSource(failingBlob(blob, 2), 'x.h5');
    expect(Array.from(await source.read(0, 4))).toEqual([1, 2, 3, 4]);
    expect(Array.from(await source.read(4, 4))).toEqual([5, 6, 7, 8]);
    const e = await source.read(0, 2).catch((x) => x);
    expect(isStemflowError(e)).toBe(true);
    expect(e.message).toMatch(/x\.h5|could not be read/);
  });
});
