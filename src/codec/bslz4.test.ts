import { describe, expect, it } from 'vitest';
import { isStemflowError } from '../errors';
import { bitshuffle } from './bitshuffle';
import { bitshuffleFilterDecode, bslz4Decode, bslz4Encode } from './bslz4';
import { bslz4BlockTable } from './bslz4-table';
import { lz4DecodeBlockExact } from './lz4';
import { expectSameBytes, expectStemflowError, randomBytes, sparseCounts } from './test-support';

function u32be(a: Uint8Array, i: number, v: number): void {
  new DataView(a.buffer, a.byteOffset, a.byteLength).setUint32(i, v, false);
}

/** 96x96 uint16: blocks of 8192, 8192, 2048 bytes. */
const frame96 = sparseCounts(96 * 96, 21);
const chunk96 = bslz4Encode(frame96, 2);
/** 33x35 uint16: one block of 1152 elements and a raw tail of 3 elements. */
const frameOdd = sparseCounts(33 * 35, 22);
const chunkOdd = bslz4Encode(frameOdd, 2);

describe('bslz4 encode/decode', () => {
  for (const elemSize of [1, 2, 3, 4, 8]) {
    for (const n of [0, 1, 7, 8, 1155, 9216, 20001]) {
      it(`round-trips elemSize ${elemSize}, ${n} elements, default and 64-element blocks`, () => {
        const raw = elemSize === 2 ? sparseCounts(n, n) : randomBytes(n * elemSize, n + elemSize);
        for (const block of [0, 64]) {
          const chunk = bslz4Encode(raw, elemSize, block);
          expectSameBytes(bslz4Decode(chunk, elemSize, raw.length), raw);
          expectSameBytes(bitshuffleFilterDecode(chunk, [0, 4, elemSize, block, 2], raw.length), raw);
        }
      });
    }
  }

  it('writes the header and block table of the HDF5 filter', () => {
    expect(Array.from(chunk96.subarray(0, 12))).toEqual([0, 0, 0, 0, 0, 0, 0x48, 0, 0, 0, 0x20, 0]);
    const t = bslz4BlockTable(chunk96, 2, 18432);
    expect([t.uncompressedBytes, t.blockBytes, t.blocks.count]).toEqual([18432, 8192, 3]);
    expect(Array.from(t.blocks.dstOffset)).toEqual([0, 8192, 16384]);
    expect(t.srcOffset).toBe(t.blocks.srcOffset);
    expect(t.count).toBe(3);
    expect(Array.from(t.blocks.dstLength)).toEqual([8192, 8192, 2048]);
    expect(t.blocks.srcOffset[0]).toBe(16);
    expect(t.blocks.srcOffset[1]).toBe(16 + t.blocks.srcLength[0] + 4);
    expect(t.tail).toEqual({ srcOffset: chunk96.length, dstOffset: 18432, length: 0 });
    // Each block decodes, then unshuffles, to its slice of the frame.
    const shuffled = bitshuffle(frame96, 2);
    for (let i = 0; i < t.blocks.count; i++) {
      const dst = new Uint8Array(t.blocks.dstLength[i]);
      lz4DecodeBlockExact(
        chunk96.subarray(t.blocks.srcOffset[i], t.blocks.srcOffset[i] + t.blocks.srcLength[i]),
        dst,
      );
      expectSameBytes(
        dst,
        shuffled.subarray(t.blocks.dstOffset[i], t.blocks.dstOffset[i] + t.blocks.dstLength[i]),
        `block ${i}`,
      );
    }
    const odd = bslz4BlockTable(chunkOdd, 2);
    expect(odd.tail).toEqual({ srcOffset: chunkOdd.length - 6, dstOffset: 2304, length: 6 });
    expectSameBytes(chunkOdd.subarray(chunkOdd.length - 6), frameOdd.subarray(2304));
  });

  it('rejects bad encode arguments', () => {
    expectStemflowError(() => bslz4Encode(new Uint8Array(3), 2), 'invalid');
    expectStemflowError(() => bslz4Encode(new Uint8Array(4), 2, 12), 'invalid');
    expectStemflowError(() => bslz4Encode(new Uint8Array(4), 0), 'invalid');
  });
});

describe('bslz4 planted faults', () => {
  function planted(base: Uint8Array, edit: (c: Uint8Array) => void): Uint8Array {
    const c = base.slice();
    edit(c);
    return c;
  }

  it('rejects a header size that differs from the expected size', () => {
    const lie = planted(chunk96, (c) => u32be(c, 4, 18432 + 2));
    expectStemflowError(() => bslz4Decode(lie, 2, 18432), 'corrupt');
    expectStemflowError(() => bslz4BlockTable(lie, 2, 18432), 'corrupt');
    expectStemflowError(() => bslz4Decode(chunk96, 2, 18430), 'corrupt');
  });

  it('rejects a header size that lies without an expected size', () => {
    expectStemflowError(
      () =>
        bslz4Decode(
          planted(chunk96, (c) => u32be(c, 4, 18433)),
          2,
        ),
      'corrupt',
    );
    expectStemflowError(
      () =>
        bslz4Decode(
          planted(chunk96, (c) => u32be(c, 4, 18432 - 16)),
          2,
        ),
      'corrupt',
    );
    expectStemflowError(
      () =>
        bslz4Decode(
          planted(chunk96, (c) => u32be(c, 0, 1)),
          2,
        ),
      'corrupt',
    );
    // A huge claimed size is rejected before any allocation.
    expectStemflowError(
      () =>
        bslz4Decode(
          planted(chunk96, (c) => u32be(c, 4, 0xfffffff0)),
          2,
        ),
      'truncated',
    );
  });

  it('rejects a block size of 0 or not a multiple of 8 elements', () => {
    for (const bytes of [0, 2, 8, 18, 8190, 8200]) {
      expectStemflowError(
        () =>
          bslz4Decode(
            planted(chunk96, (c) => u32be(c, 8, bytes)),
            2,
            18432,
          ),
        'corrupt',
      );
    }
    // A valid but different block size changes the layout: the table no longer fits the chunk, or the
    // blocks no longer decode to their sizes.
    const other = (bytes: number) => () =>
      bslz4Decode(
        planted(chunk96, (c) => u32be(c, 8, bytes)),
        2,
        18432,
      );
    expectStemflowError(other(4096), 'truncated');
    expectStemflowError(other(16384), 'corrupt');
  });

  it('rejects compressed lengths that point past the end, are zero or are off by one', () => {
    expectStemflowError(
      () =>
        bslz4Decode(
          planted(chunk96, (c) => u32be(c, 12, 0xfffffff0)),
          2,
        ),
      'truncated',
    );
    expectStemflowError(
      () =>
        bslz4Decode(
          planted(chunk96, (c) => u32be(c, 12, chunk96.length)),
          2,
        ),
      'truncated',
    );
    expectStemflowError(
      () =>
        bslz4Decode(
          planted(chunk96, (c) => u32be(c, 12, 0)),
          2,
        ),
      'corrupt',
    );
    const len0 = bslz4BlockTable(chunk96, 2).blocks.srcLength[0];
    for (const delta of [-1, 1]) {
      expect(() =>
        bslz4Decode(
          planted(chunk96, (c) => u32be(c, 12, len0 + delta)),
          2,
          18432,
        ),
      ).toThrow(/bitshuffle\/LZ4/);
    }
  });

  it('rejects every truncation of a chunk', () => {
    for (const chunk of [chunk96, chunkOdd]) {
      for (let cut = 0; cut < chunk.length; cut++) {
        let err: unknown;
        try {
          bslz4Decode(chunk.subarray(0, cut), 2);
        } catch (e) {
          err = e;
        }
        expect(isStemflowError(err, 'truncated') || isStemflowError(err, 'corrupt'), `cut at ${cut}`).toBe(
          true,
        );
      }
    }
    expectStemflowError(() => bslz4Decode(chunk96.subarray(0, 11), 2), 'truncated');
    expectStemflowError(() => bslz4Decode(chunkOdd.subarray(0, chunkOdd.length - 1), 2), 'truncated');
    expectStemflowError(() => bslz4BlockTable(chunk96.subarray(0, 20), 2), 'truncated');
  });

  it('rejects trailing bytes', () => {
    for (const chunk of [chunk96, chunkOdd]) {
      const longer = new Uint8Array(chunk.length + 1);
      longer.set(chunk);
      const e = expectStemflowError(() => bslz4Decode(longer, 2), 'corrupt');
      expect(e.message).toMatch(/1 unexpected byte/);
      expectStemflowError(() => bslz4BlockTable(longer, 2), 'corrupt');
    }
  });

  it('names the block whose LZ4 data is corrupt', () => {
    const t = bslz4BlockTable(chunk96, 2);
    // The second block's first token claims 15+ literals and a huge extra length.
    const bad = planted(chunk96, (c) => {
      c[t.blocks.srcOffset[1]] = 0xf0;
      c[t.blocks.srcOffset[1] + 1] = 0xff;
    });
    const e = expectStemflowError(() => bslz4Decode(bad, 2), 'corrupt');
    expect(e.message).toMatch(/block 1 of 3/);
  });
});

describe('bitshuffleFilterDecode dispatch', () => {
  it('decodes plain bitshuffle with the cd_values block size', () => {
    const raw = sparseCounts(1155, 5);
    expectSameBytes(bitshuffleFilterDecode(bitshuffle(raw, 2, 64), [0, 4, 2, 64, 0], raw.length), raw);
    expectSameBytes(bitshuffleFilterDecode(bitshuffle(raw, 2), [0, 4, 2], raw.length), raw);
    expectStemflowError(() => bitshuffleFilterDecode(bitshuffle(raw, 2), [0, 4, 2, 0, 0], 2308), 'corrupt');
  });

  it('uses the dataset element size when cd_values lacks it', () => {
    const raw = sparseCounts(100, 6);
    expectSameBytes(bitshuffleFilterDecode(bitshuffle(raw, 2), [], raw.length, 2), raw);
    expectStemflowError(() => bitshuffleFilterDecode(bitshuffle(raw, 2), [], raw.length), 'corrupt');
  });

  it('reports zstd and unknown compressions as unsupported', () => {
    expect(
      expectStemflowError(() => bitshuffleFilterDecode(chunk96, [0, 4, 2, 0, 3], 18432), 'unsupported')
        .message,
    ).toMatch(/zstd/);
    expectStemflowError(() => bitshuffleFilterDecode(chunk96, [0, 4, 2, 0, 1], 18432), 'unsupported');
  });
});
