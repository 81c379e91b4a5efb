import { describe, expect, it } from 'vitest';
import { fletcher32, fletcher32Decode, fletcher32Encode } from './fletcher32';
import { expectSameBytes, expectStemflowError, randomBytes } from './test-support';

const ascii = (s: string) => new TextEncoder().encode(s);

describe('fletcher32', () => {
  it('matches the published Fletcher-32 values (HDF5 reads big-endian words, so pairs are swapped)', () => {
    // Published values for little-endian 16-bit words of "abcdef" and "abcdefgh".
    expect(fletcher32(ascii('badcfe'))).toBe(0x56502d2a);
    expect(fletcher32(ascii('badcfehg'))).toBe(0xebe19591);
  });

  it('handles an odd last byte as the high byte of a word', () => {
    expect(fletcher32(Uint8Array.of(0x12))).toBe(fletcher32(Uint8Array.of(0x12, 0)));
    expect(fletcher32(Uint8Array.of(0x12))).toBe(0x12001200);
  });

  it('verifies, strips and rejects', () => {
    const data = randomBytes(5001, 3);
    const chunk = fletcher32Encode(data);
    expectSameBytes(fletcher32Decode(chunk), data);
    // The byte-swapped checksum of HDF5 < 1.6.3 is accepted too.
    const old = chunk.slice();
    [old[5001], old[5002], old[5003], old[5004]] = [chunk[5002], chunk[5001], chunk[5004], chunk[5003]];
    expectSameBytes(fletcher32Decode(old), data);
    const bad = chunk.slice();
    bad[100] ^= 4;
    expectStemflowError(() => fletcher32Decode(bad), 'corrupt');
    expectStemflowError(() => fletcher32Decode(Uint8Array.of(1, 2, 3)), 'truncated');
  });

  it('does not overflow on long runs of 0xff', () => {
    const data = new Uint8Array(100000).fill(0xff);
    const sum = fletcher32(data);
    expect(sum & 0xffff).toBeLessThanOrEqual(0xffff);
    expectSameBytes(fletcher32Decode(fletcher32Encode(data)), data);
  });
});
