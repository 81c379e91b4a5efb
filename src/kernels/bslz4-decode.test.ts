/**
 * The CPU twin of the bitshuffle/LZ4 decode pass against the codec (src/codec): identical bytes on random valid
 * chunks of every element size and block size, and random byte mutations classified (never thrown) with a
 * verdict that agrees with the codec on whether the chunk is valid.
 */
import { describe, expect, it } from 'vitest';
import { bslz4Decode, bslz4Encode } from '../codec/index.ts';
import { rng } from '../gpu/test-data.ts';
import {
  AUDIT_LAYOUT,
  auditFromWords,
  bslz4DecodeBatch,
  type ElemSize,
  emptyAudit,
  MAX_BLOCK_BYTES,
} from './bslz4-decode.ts';
import { DECODE_OK, DecodeError, decodeErrorMessage, decodeErrorName } from './decode-errors.ts';

/** Random detector-like values: runs of zeros, small counts, some full-range values. */
function randomValues(n: number, elemSize: ElemSize, next: () => number): Uint8Array {
  const max = elemSize === 4 ? 2 ** 32 : 2 ** (8 * elemSize);
  const vals = elemSize === 1 ? new Uint8Array(n) : elemSize === 2 ? new Uint16Array(n) : new Uint32Array(n);
  const style = next() % 4;
  for (let i = 0; i < n; i++) {
    const r = next() % 100;
    if (style === 0) vals[i] = next() % max;
    else if (style === 1) vals[i] = r < 90 ? 0 : r < 99 ? 1 + (r % 3) : next() % max;
    else if (style === 2) vals[i] = i % 7 === 0 ? 300 % max : 0;
    else vals[i] = r < 50 ? 0 : next() % 256;
  }
  return new Uint8Array(vals.buffer);
}

interface Batch {
  slot: Uint8Array;
  index: Uint32Array;
  chunks: Uint8Array[];
  raws: Uint8Array[];
}

/** Chunks back to back at odd offsets with junk bytes between them. */
function makeBatch(chunks: Uint8Array[], raws: Uint8Array[], next: () => number): Batch {
  const gaps = chunks.map(() => next() % 5);
  const total = chunks.reduce((s, c, i) => s + c.length + gaps[i], 0);
  const slot = new Uint8Array(total);
  for (let i = 0; i < total; i++) slot[i] = next() & 0xff;
  const index = new Uint32Array(2 * chunks.length);
  let pos = 0;
  chunks.forEach((c, i) => {
    pos += gaps[i];
    slot.set(c, pos);
    index[2 * i] = pos;
    index[2 * i + 1] = c.length;
    pos += c.length;
  });
  return { slot, index, chunks, raws };
}

function codecVerdict(chunk: Uint8Array, elemSize: number, expected: number): Uint8Array | undefined {
  try {
    return bslz4Decode(chunk, elemSize, expected);
  } catch {
    return undefined;
  }
}

describe('bslz4DecodeBatch (CPU twin) vs src/codec', () => {
  it('decodes random valid chunks exactly as bslz4Decode, with exact totals and audit', () => {
    const next = rng(1234);
    let frames = 0;
    for (let trial = 0; trial < 60; trial++) {
      const elemSize = ([1, 2, 4] as const)[trial % 3];
      const pixels = 1 + (next() % 3000);
      const maxBlockElems = MAX_BLOCK_BYTES / elemSize;
      const blockElems = trial % 4 === 0 ? 0 : 8 * (1 + (next() % (maxBlockElems / 8)));
      const count = 1 + (next() % 4);
      const raws = Array.from({ length: count }, () => randomValues(pixels, elemSize, next));
      const chunks = raws.map((r) => bslz4Encode(r, elemSize, blockElems));
      const { slot, index } = makeBatch(chunks, raws, next);
      const flags = Uint32Array.from({ length: pixels }, () => (next() % 10 === 0 ? 1 : 0));
      const r = bslz4DecodeBatch(slot, index, flags, { frameCount: count, pixels, elemSize });
      const wpf = Math.ceil((pixels * elemSize) / 4);
      const bytes = new Uint8Array(r.words.buffer);
      const expect257 = emptyAudit();
      for (let f = 0; f < count; f++) {
        expect(r.errors[f]).toBe(DECODE_OK);
        const ref = bslz4Decode(chunks[f], elemSize, pixels * elemSize);
        expect(Buffer.compare(bytes.subarray(f * wpf * 4, f * wpf * 4 + ref.length), ref)).toBe(0);
        expect(bytes.subarray(f * wpf * 4 + ref.length, (f + 1) * wpf * 4).every((b) => b === 0)).toBe(true);
        let sum = 0n;
        const dv = new DataView(ref.buffer, ref.byteOffset);
        for (let p = 0; p < pixels; p++) {
          if (flags[p]) continue;
          const v =
            elemSize === 1 ? ref[p] : elemSize === 2 ? dv.getUint16(2 * p, true) : dv.getUint32(4 * p, true);
          sum += BigInt(v);
          expect257.maxValue = Math.max(expect257.maxValue, v);
          expect257.histogram[Math.min(v, 256)]++;
          if (v > 255) expect257.countAbove255++;
        }
        expect(r.totals[f]).toBe(sum);
        frames++;
      }
      expect(r.audit).toEqual(expect257);
    }
    expect(frames).toBeGreaterThan(100);
  });

  it('classifies random mutations without throwing; nonzero exactly when the codec rejects', () => {
    const next = rng(99);
    const seen = new Set<number>();
    let cases = 0;
    for (let trial = 0; trial < 400; trial++) {
      const elemSize = ([1, 2, 4] as const)[trial % 3];
      const pixels = 1 + (next() % 1500);
      const blockElems = trial % 2 ? 0 : 8 * (1 + (next() % 64));
      const raw = randomValues(pixels, elemSize, next);
      const chunk = bslz4Encode(raw, elemSize, blockElems).slice();
      let mutated: Uint8Array = chunk;
      const kind = next() % 4;
      if (kind === 0) {
        for (let m = 0; m < 1 + (next() % 3); m++) mutated[next() % chunk.length] = next() & 0xff;
      } else if (kind === 1) {
        mutated = chunk.subarray(0, next() % chunk.length);
      } else if (kind === 2) {
        mutated = new Uint8Array(chunk.length + 1 + (next() % 3));
        mutated.set(chunk);
      } else {
        const i = 12 + (next() % Math.max(1, chunk.length - 12));
        if (i < chunk.length) mutated[i] ^= 1 << (next() % 8);
      }
      const slot = new Uint8Array(mutated.length + 3);
      slot.set(mutated, 3);
      const flags = new Uint32Array(pixels);
      const r = bslz4DecodeBatch(slot, Uint32Array.of(3, mutated.length), flags, {
        frameCount: 1,
        pixels,
        elemSize,
      });
      const ref = codecVerdict(mutated, elemSize, pixels * elemSize);
      seen.add(r.errors[0]);
      if (ref === undefined) {
        expect(r.errors[0], `trial ${trial}`).not.toBe(DECODE_OK);
        expect(r.words.every((w) => w === 0)).toBe(true);
        expect(r.totals[0]).toBe(0n);
        expect(r.audit.failedFrames).toBe(1);
      } else if (r.errors[0] === DecodeError.UNSUPPORTED_BLOCK_SIZE) {
        // Valid for the codec, but its (mutated) block size is beyond the GPU's 8 KiB.
        expect(new DataView(mutated.buffer, mutated.byteOffset).getUint32(8)).toBeGreaterThan(
          MAX_BLOCK_BYTES,
        );
      } else {
        expect(decodeErrorName(r.errors[0]), `trial ${trial}`).toBe('OK');
        expect(Buffer.compare(new Uint8Array(r.words.buffer).subarray(0, ref.length), ref)).toBe(0);
      }
      cases++;
    }
    expect(cases).toBe(400);
    expect(seen.size).toBeGreaterThan(6);
  });

  it('reports unsupported block sizes (> 8192 bytes) and the index outside the slot', () => {
    const raw = randomValues(5000, 2, rng(5));
    const chunk = bslz4Encode(raw, 2, 4104);
    expect(codecVerdict(chunk, 2, 10000)).toBeDefined();
    const flags = new Uint32Array(5000);
    const params = { frameCount: 1, pixels: 5000, elemSize: 2 as const };
    expect(bslz4DecodeBatch(chunk, Uint32Array.of(0, chunk.length), flags, params).errors[0]).toBe(
      DecodeError.UNSUPPORTED_BLOCK_SIZE,
    );
    expect(bslz4DecodeBatch(chunk, Uint32Array.of(1, chunk.length), flags, params).errors[0]).toBe(
      DecodeError.INDEX_OUT_OF_SLOT,
    );
    expect(bslz4DecodeBatch(chunk, Uint32Array.of(0, 11), flags, params).errors[0]).toBe(
      DecodeError.HEADER_TRUNCATED,
    );
  });

  it('has a sentence for every code and an audit layout that fits', () => {
    for (const code of Object.values(DecodeError)) {
      expect(decodeErrorMessage(code)).toMatch(/\.$/);
      expect(decodeErrorName(code)).not.toMatch(/UNKNOWN/);
    }
    expect(new Set(Object.values(DecodeError)).size).toBe(Object.keys(DecodeError).length);
    const words = new Uint32Array(AUDIT_LAYOUT.words);
    words[AUDIT_LAYOUT.histogram + 2 * 256 + 1] = 1;
    expect(auditFromWords(words).histogram[256]).toBe(2n ** 32n);
  });
});
