import { describe, expect, it } from 'vitest';
import {
  bitshuffle,
  bitshuffleBlock,
  bitunshuffle,
  bitunshuffleBlock,
  blockLayout,
  defaultBlockSize,
} from './bitshuffle';
import { expectSameBytes, expectStemflowError, randomBytes, sparseCounts } from './test-support';

/** The layout by definition, one bit at a time (test oracle). */
function referenceShuffleBlock(src: Uint8Array, n: number, elemSize: number): Uint8Array {
  const out = new Uint8Array(n * elemSize);
  const planeBytes = n / 8;
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < elemSize; j++) {
      for (let k = 0; k < 8; k++) {
        const bit = (src[i * elemSize + j] >> k) & 1;
        out[(8 * j + k) * planeBytes + (i >> 3)] |= bit << (i & 7);
      }
    }
  }
  return out;
}

function referenceShuffle(src: Uint8Array, elemSize: number, block: number): Uint8Array {
  const n = src.length / elemSize;
  const out = new Uint8Array(src.length);
  let i = 0;
  while (n - i >= block) {
    out.set(
      referenceShuffleBlock(src.subarray(i * elemSize, (i + block) * elemSize), block, elemSize),
      i * elemSize,
    );
    i += block;
  }
  const last = (n - i) & ~7;
  out.set(
    referenceShuffleBlock(src.subarray(i * elemSize, (i + last) * elemSize), last, elemSize),
    i * elemSize,
  );
  i += last;
  out.set(src.subarray(i * elemSize), i * elemSize);
  return out;
}

describe('bitshuffle', () => {
  it('shuffles 8 uint16 values into the exact planes (hand-computed)', () => {
    const values = Uint16Array.of(0x8001, 2, 3, 4, 5, 6, 7, 8);
    const raw = new Uint8Array(values.buffer);
    const expected = [0x55, 0x66, 0x78, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01];
    const dst = new Uint8Array(16);
    bitshuffleBlock(raw, dst, 8, 2);
    expect(Array.from(dst)).toEqual(expected);
    expect(Array.from(bitshuffle(raw, 2, 8))).toEqual(expected);
    const back = new Uint8Array(16);
    bitunshuffleBlock(dst, back, 8, 2);
    expect(Array.from(new Uint16Array(back.buffer))).toEqual(Array.from(values));
  });

  it('shuffles 16 bytes of elemSize 1 (hand-computed)', () => {
    // Element i = 1 << (i mod 8), elements 8..15 = 0xff: plane k holds byte 1 << k, then 0xff.
    const raw = Uint8Array.of(1, 2, 4, 8, 16, 32, 64, 128, 255, 255, 255, 255, 255, 255, 255, 255);
    const expected = [1, 255, 2, 255, 4, 255, 8, 255, 16, 255, 32, 255, 64, 255, 128, 255];
    expect(Array.from(bitshuffle(raw, 1, 16))).toEqual(expected);
  });

  it('has the default block sizes of bitshuffle', () => {
    expect([1, 2, 3, 4, 8, 10, 64, 100].map(defaultBlockSize)).toEqual([
      8192, 4096, 2728, 2048, 1024, 816, 128, 128,
    ]);
  });

  it('cuts buffers into full blocks, a last block of a multiple of 8 and a raw tail', () => {
    expect(blockLayout(36864, 4096)).toEqual({
      blockElems: 4096,
      fullBlocks: 9,
      lastBlockElems: 0,
      tailElems: 0,
    });
    expect(blockLayout(9216, 4096)).toEqual({
      blockElems: 4096,
      fullBlocks: 2,
      lastBlockElems: 1024,
      tailElems: 0,
    });
    expect(blockLayout(1155, 4096)).toEqual({
      blockElems: 4096,
      fullBlocks: 0,
      lastBlockElems: 1152,
      tailElems: 3,
    });
    expect(blockLayout(7, 128)).toEqual({ blockElems: 128, fullBlocks: 0, lastBlockElems: 0, tailElems: 7 });
  });

  for (const elemSize of [1, 2, 3, 4, 5, 8, 10]) {
    for (const n of [0, 1, 7, 8, 9, 64, 135, 1155, 5003, 20000]) {
      it(`matches the bit-by-bit definition and round-trips: elemSize ${elemSize}, ${n} elements`, () => {
        const raw = randomBytes(n * elemSize, n * 31 + elemSize);
        for (const block of [0, 8, 136]) {
          const resolved = block === 0 ? defaultBlockSize(elemSize) : block;
          const shuffled = bitshuffle(raw, elemSize, block);
          expectSameBytes(shuffled, referenceShuffle(raw, elemSize, resolved), `shuffle block ${block}`);
          expectSameBytes(bitunshuffle(shuffled, elemSize, block), raw, `unshuffle block ${block}`);
        }
      });
    }
  }

  it('round-trips sparse counts over a 192x192 frame in 9 blocks', () => {
    const raw = sparseCounts(192 * 192, 4);
    expectSameBytes(bitunshuffle(bitshuffle(raw, 2), 2), raw);
  });

  it('rejects bad arguments', () => {
    expectStemflowError(() => bitshuffle(new Uint8Array(5), 2), 'invalid');
    expectStemflowError(() => bitshuffle(new Uint8Array(8), 0), 'invalid');
    expectStemflowError(() => bitunshuffle(new Uint8Array(16), 2, 12), 'invalid');
    expectStemflowError(() => bitunshuffle(new Uint8Array(16), 2, -8), 'invalid');
  });
});
