import { deflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { bitshuffle } from './bitshuffle';
import { bslz4Encode } from './bslz4';
import { chunkDecoderFor, decodeChunk, filterName } from './filters';
import { fletcher32Encode } from './fletcher32';
import { shuffle } from './shuffle';
import { expectSameBytes, expectStemflowErrorAsync, sparseCounts } from './test-support';

const raw = sparseCounts(33 * 35, 9);
const SHUFFLE = { id: 2, cdValues: [2] };
const GZIP = { id: 1, cdValues: [6] };
const FLETCHER = { id: 3, cdValues: [] };
const BSLZ4 = { id: 32008, cdValues: [0, 4, 2, 0, 2] };

describe('decodeChunk (HDF5 filter pipeline)', () => {
  it('applies the filters last one first', async () => {
    const chunk = fletcher32Encode(new Uint8Array(deflateSync(shuffle(raw, 2))));
    expectSameBytes(await decodeChunk(chunk, [SHUFFLE, GZIP, FLETCHER], 2, raw.length), raw);
    const bs = new Uint8Array(deflateSync(bslz4Encode(raw, 2)));
    expect(bs.length).toBeGreaterThan(0);
  });

  it('decodes bitshuffle/LZ4 alone and with no filters', async () => {
    expectSameBytes(await decodeChunk(bslz4Encode(raw, 2), [BSLZ4], 2, raw.length), raw);
    expectSameBytes(await decodeChunk(raw, [], 2, raw.length), raw);
  });

  it('skips the filters whose bit is set in the filter mask', async () => {
    const chunk = shuffle(raw, 2); // gzip (index 1) skipped for this chunk
    expectSameBytes(await decodeChunk(chunk, [SHUFFLE, GZIP], 2, raw.length, 0b10), raw);
    expectSameBytes(await decodeChunk(raw, [SHUFFLE, GZIP], 2, raw.length, 0b11), raw);
    expectSameBytes(await decodeChunk(raw, [BSLZ4], 2, raw.length, 1), raw);
    const decode = chunkDecoderFor(2);
    expectSameBytes(await decode(chunk, [SHUFFLE, GZIP], 0b10, raw.length), raw);
    expectSameBytes(await decode(bitshuffle(raw, 2), [{ id: 32008, cdValues: [] }], 0, raw.length), raw);
  });

  it('reports unknown filters as unsupported, by name', async () => {
    const e = await expectStemflowErrorAsync(
      () => decodeChunk(raw, [{ id: 32001, cdValues: [] }], 2, raw.length),
      'unsupported',
    );
    expect(e.message).toBe(
      'The HDF5 filter 32001 (blosc) is not supported; supported: bitshuffle/LZ4 (32008), gzip (1), shuffle (2), fletcher32 (3).',
    );
    expect([32004, 32015, 307, 4, 99999].map(filterName)).toEqual([
      'lz4',
      'zstd',
      'bzip2',
      'szip',
      'unknown',
    ]);
    // A skipped unknown filter is harmless.
    expectSameBytes(await decodeChunk(raw, [{ id: 32001, cdValues: [] }], 2, raw.length, 1), raw);
  });

  it('rejects a result of the wrong size and a bad checksum', async () => {
    await expectStemflowErrorAsync(() => decodeChunk(raw, [], 2, raw.length + 2), 'corrupt');
    await expectStemflowErrorAsync(() => decodeChunk(raw, [SHUFFLE], 2, raw.length - 2), 'corrupt');
    const chunk = fletcher32Encode(raw);
    chunk[7] ^= 1;
    await expectStemflowErrorAsync(() => decodeChunk(chunk, [FLETCHER], 2, raw.length), 'corrupt');
  });
});

describe('decodeChunk: filter masks', () => {
  it('refuses a mask bit for a filter the dataset does not have (fuzz: source case 1985)', async () => {
    const raw = new Uint8Array([1, 2, 3, 4]);
    await expect(decodeChunk(raw, [], 2, 4, 0x20)).rejects.toThrow(
      /names filters this dataset does not have/,
    );
    expect(await decodeChunk(raw, [], 2, 4, 0)).toEqual(raw);
  });
});
