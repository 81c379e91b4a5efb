import { deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { describe, it } from 'vitest';
import { inflate } from './deflate';
import { expectSameBytes, expectStemflowErrorAsync, sparseCounts } from './test-support';

const raw = sparseCounts(96 * 96, 8);
const z = new Uint8Array(deflateSync(raw, { level: 6 }));

describe('inflate (HDF5 gzip filter)', () => {
  it('inflates zlib streams of any level', async () => {
    for (const level of [0, 1, 9]) {
      expectSameBytes(await inflate(new Uint8Array(deflateSync(raw, { level })), raw.length), raw);
    }
    expectSameBytes(await inflate(new Uint8Array(deflateSync(new Uint8Array(0))), 0), new Uint8Array(0));
  });

  it('rejects a size mismatch either way', async () => {
    await expectStemflowErrorAsync(() => inflate(z, raw.length - 1), 'corrupt');
    await expectStemflowErrorAsync(() => inflate(z, raw.length + 1), 'corrupt');
  });

  it('rejects corrupt and truncated streams', async () => {
    await expectStemflowErrorAsync(() => inflate(Uint8Array.of(1, 2, 3, 4, 5), raw.length), 'corrupt');
    await expectStemflowErrorAsync(() => inflate(z.subarray(0, z.length - 6), raw.length), 'corrupt');
    const flipped = z.slice();
    flipped[z.length - 1] ^= 0xff; // the Adler-32 checksum
    await expectStemflowErrorAsync(() => inflate(flipped, raw.length), 'corrupt');
    // Raw deflate and gzip framing are not the zlib format the HDF5 filter writes.
    await expectStemflowErrorAsync(() => inflate(new Uint8Array(deflateRawSync(raw)), raw.length), 'corrupt');
    await expectStemflowErrorAsync(() => inflate(new Uint8Array(gzipSync(raw)), raw.length), 'corrupt');
  });
});
