import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { lz4CompressBound, lz4DecodeBlock, lz4DecodeBlockExact, lz4EncodeBlock } from './lz4';
import { expectSameBytes, expectStemflowError, randomBytes, rng, sparseCounts } from './test-support';

const GUARD = 64;

/** Decodes into a window of a larger buffer filled with a guard pattern; checks the guards afterwards. */
function decodeGuarded(block: Uint8Array, size: number, exact: boolean): { out: Uint8Array; n: number } {
  const big = new Uint8Array(GUARD + size + GUARD).fill(0xa5);
  const dst = big.subarray(GUARD, GUARD + size);
  let n = -1;
  try {
    if (exact) {
      lz4DecodeBlockExact(block, dst);
      n = size;
    } else {
      n = lz4DecodeBlock(block, dst);
    }
  } finally {
    let touched = 0;
    for (let i = 0; i < GUARD; i++) {
      if (big[i] !== 0xa5) touched++;
      if (big[GUARD + size + i] !== 0xa5) touched++;
    }
    expect(touched, 'guard bytes around the output changed').toBe(0);
  }
  return { out: dst.slice(), n };
}

interface Sequence {
  litStart: number;
  litLen: number;
  offset: number;
  matchLen: number;
}

/** Parses a block into sequences (test oracle for the end-of-block rules). */
function parseSequences(block: Uint8Array): Sequence[] {
  const seqs: Sequence[] = [];
  let ip = 0;
  let out = 0;
  for (;;) {
    const token = block[ip++];
    let lit = token >> 4;
    if (lit === 15) for (let b = 255; b === 255; lit += b) b = block[ip++];
    ip += lit;
    if (ip >= block.length) {
      seqs.push({ litStart: out, litLen: lit, offset: 0, matchLen: 0 });
      return seqs;
    }
    const offset = block[ip] | (block[ip + 1] << 8);
    ip += 2;
    let ml = token & 15;
    if (ml === 15) for (let b = 255; b === 255; ml += b) b = block[ip++];
    seqs.push({ litStart: out, litLen: lit, offset, matchLen: ml + 4 });
    out += lit + ml + 4;
  }
}

function inputs(): [string, Uint8Array][] {
  const text = new TextEncoder().encode('the quick brown fox jumps over the lazy dog; '.repeat(300));
  const counting = new Uint8Array(70000);
  for (let i = 0; i < counting.length; i++) counting[i] = (i * 7) % 251;
  const mixed = randomBytes(20000, 5);
  for (let i = 0; i < mixed.length; i += 97) mixed.fill(0, i, i + 40);
  const result: [string, Uint8Array][] = [
    ['text', text],
    ['counting', counting],
    ['random', randomBytes(30000, 1)],
    ['zeros', new Uint8Array(100000)],
    ['sparse counts', sparseCounts(36864, 2)],
    ['mixed', mixed],
    ['long incompressible then zeros', new Uint8Array([...randomBytes(300, 9), ...new Uint8Array(300)])],
  ];
  for (const n of [0, 1, 2, 4, 5, 11, 12, 13, 14, 15, 16, 17, 19, 20, 31, 64, 255, 256, 270]) {
    result.push([`zeros ${n}`, new Uint8Array(n)]);
    result.push([`random ${n}`, randomBytes(n, n + 100)]);
    result.push([`period-3 ${n}`, Uint8Array.from({ length: n }, (_, i) => i % 3)]);
  }
  return result;
}

describe('lz4 round trip', () => {
  for (const [name, data] of inputs()) {
    it(`round-trips ${name} (${data.length} bytes) and obeys the end-of-block rules`, () => {
      const block = lz4EncodeBlock(data);
      expect(block.length).toBeLessThanOrEqual(lz4CompressBound(data.length));
      const { out, n } = decodeGuarded(block, data.length, false);
      expect(n).toBe(data.length);
      expectSameBytes(out, data);
      decodeGuarded(block, data.length, true);

      const seqs = parseSequences(block);
      const last = seqs[seqs.length - 1];
      expect(last.matchLen).toBe(0);
      expect(last.litStart + last.litLen).toBe(data.length);
      if (seqs.length > 1) expect(last.litLen).toBeGreaterThanOrEqual(5);
      const bad = seqs.slice(0, -1).filter((s) => {
        const matchStart = s.litStart + s.litLen;
        return matchStart > data.length - 12 || s.offset <= 0 || s.offset > matchStart;
      });
      expect(bad).toEqual([]);
    });
  }

  it('really compresses', () => {
    expect(lz4EncodeBlock(new Uint8Array(100000)).length).toBeLessThan(500);
    const text = new TextEncoder().encode('the quick brown fox jumps over the lazy dog; '.repeat(300));
    expect(lz4EncodeBlock(text).length).toBeLessThan(200);
    expect(lz4EncodeBlock(sparseCounts(36864, 3)).length).toBeLessThan(36864 * 2 * 0.6);
  });

  it('encodes the empty input as one zero token', () => {
    expect(Array.from(lz4EncodeBlock(new Uint8Array(0)))).toEqual([0]);
    expect(lz4DecodeBlock(Uint8Array.of(0), new Uint8Array(0))).toBe(0);
  });

  it('round-trips many random structured inputs', () => {
    const next = rng(42);
    for (let t = 0; t < 200; t++) {
      const n = next() % 3000;
      const data = new Uint8Array(n);
      const alphabet = 1 + (next() % 8);
      for (let i = 0; i < n; i++) {
        // Runs copied from a random earlier position, else symbols of a small alphabet.
        if (i > 8 && next() % 4 === 0) {
          const from = next() % i;
          const len = Math.min(n - i, next() % 40);
          for (let k = 0; k < len; k++) data[i + k] = data[from + k];
          i += Math.max(len - 1, 0);
        } else {
          data[i] = next() % alphabet;
        }
      }
      const { out } = decodeGuarded(lz4EncodeBlock(data), n, true);
      expectSameBytes(out, data);
    }
  });
});

describe('lz4 decode of hand-made blocks', () => {
  it('decodes an overlapping match with offset 1 (run)', () => {
    // 1 literal 'a', match offset 1 of 15 + 10 + 4 = 29 bytes, then an empty last sequence.
    const block = Uint8Array.of(0x1f, 0x61, 0x01, 0x00, 0x0a, 0x00);
    const { out, n } = decodeGuarded(block, 30, false);
    expect(n).toBe(30);
    expect(out).toEqual(new Uint8Array(30).fill(0x61));
  });

  it('decodes overlapping matches with period 3 and 7 over long lengths', () => {
    for (const [period, matchLen] of [
      [3, 100],
      [7, 1000],
      [2, 5],
    ]) {
      const lits = Array.from({ length: period }, (_, i) => 0x41 + i);
      const extra: number[] = [];
      if (matchLen - 4 >= 15) {
        let r = matchLen - 4 - 15;
        while (r >= 255) {
          extra.push(255);
          r -= 255;
        }
        extra.push(r);
      }
      const token = (period << 4) | Math.min(matchLen - 4, 15);
      const block = Uint8Array.from([token, ...lits, period, 0, ...extra, 0x20, 0x7a, 0x7a]);
      const size = period + matchLen + 2;
      const { out } = decodeGuarded(block, size, true);
      const expected = Uint8Array.from({ length: size }, (_, i) =>
        i < period + matchLen ? 0x41 + (i % period) : 0x7a,
      );
      expect(out).toEqual(expected);
    }
  });

  it('decodes a non-overlapping long match (copyWithin path)', () => {
    const lits = randomBytes(100, 7);
    // 100 literals (15 + 85), match offset 100 of 60 bytes (4 + 15 + 41), last 0 literals.
    const block = Uint8Array.from([0xff, 85, ...lits, 100, 0, 41, 0x00]);
    const { out } = decodeGuarded(block, 160, true);
    expect(out.subarray(0, 100)).toEqual(lits);
    expect(out.subarray(100, 160)).toEqual(lits.subarray(0, 60));
  });
});

describe('lz4 planted faults', () => {
  const cases: [string, number[], number][] = [
    ['offset 0', [0x10, 0x61, 0x00, 0x00, 0x00], 100],
    ['offset before the start of the output', [0x10, 0x61, 0x02, 0x00, 0x00], 100],
    ['offset far before the start', [0x20, 0x61, 0x62, 0xff, 0xff, 0x00], 100],
    ['literal run past the end of the block', [0x50, 1, 2, 3], 100],
    ['extended literal run past the end', [0xf0, 0x10, 1, 2, 3], 100],
    ['literal length bytes cut off', [0xf0, 0xff], 100],
    ['literals past the output', [0x50, 1, 2, 3, 4, 5], 4],
    ['match past the output', [0x1f, 0x61, 0x01, 0x00, 0x0a, 0x00], 20],
    ['match past the output by one byte', [0x10, 0x61, 0x01, 0x00, 0x00], 4],
    ['block ending after a match', [0x10, 0x61, 0x01, 0x00], 100],
    ['block ending inside an offset', [0x10, 0x61, 0x01], 100],
    ['block ending inside a match length', [0x1f, 0x61, 0x01, 0x00, 0xff], 100],
    ['empty block', [], 100],
  ];
  for (const [name, bytes, size] of cases) {
    it(`rejects ${name} as corrupt without writing out of range`, () => {
      const block = Uint8Array.from(bytes);
      expectStemflowError(() => decodeGuarded(block, size, false), 'corrupt');
    });
  }

  it('requires the exact output size', () => {
    const block = lz4EncodeBlock(randomBytes(50, 3));
    expect(lz4DecodeBlock(block, new Uint8Array(60))).toBe(50);
    expectStemflowError(() => decodeGuarded(block, 60, true), 'corrupt');
    expectStemflowError(() => decodeGuarded(block, 49, true), 'corrupt');
  });

  it('rejects every truncation of a real block', () => {
    const data = sparseCounts(4096, 11);
    const block = lz4EncodeBlock(data);
    for (let cut = 0; cut < block.length; cut++) {
      expectStemflowError(() => decodeGuarded(block.subarray(0, cut), data.length, true), 'corrupt');
    }
  });

  it('never writes out of range on random garbage', () => {
    const next = rng(99);
    for (let t = 0; t < 2000; t++) {
      const block = randomBytes(1 + (next() % 64), t);
      try {
        decodeGuarded(block, next() % 200, false);
      } catch (e) {
        if (!(e instanceof Error && e.name === 'StemflowError')) throw e;
      }
    }
  });
});

// The reference LZ4 tool (frame format) as an independent oracle, when installed.
const LZ4_CLI = '/usr/bin/lz4';
const hasCli = (() => {
  try {
    execFileSync(LZ4_CLI, ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/** The larger inputs and a few short ones: each costs a process. */
function cliInputs(): [string, Uint8Array][] {
  return inputs().filter(([name, d]) => d.length > 300 || / (1|5|12|13|20|270)$/.test(name));
}

function xxh32(data: Uint8Array): number {
  const P1 = 2654435761;
  const P2 = 2246822519;
  const P3 = 3266489917;
  const P5 = 374761393;
  if (data.length >= 16) throw new Error('short inputs only');
  let h = (P5 + data.length) >>> 0;
  for (const b of data) {
    h = (h + Math.imul(b, P5)) >>> 0;
    h = Math.imul((h << 11) | (h >>> 21), P1) >>> 0;
  }
  h ^= h >>> 15;
  h = Math.imul(h, P2) >>> 0;
  h ^= h >>> 13;
  h = Math.imul(h, P3) >>> 0;
  h ^= h >>> 16;
  return h >>> 0;
}

describe.runIf(hasCli)('lz4 against the reference lz4 tool', () => {
  const dir = mkdtempSync(join(tmpdir(), 'stemflow-lz4-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('decodes blocks made by the reference compressor (fast and HC)', () => {
    for (const [name, data] of cliInputs()) {
      for (const level of ['-1', '-12']) {
        const input = join(dir, 'in.bin');
        writeFileSync(input, data);
        const frame = new Uint8Array(
          execFileSync(LZ4_CLI, [level, '-B4', '--no-frame-crc', '-c', input], {
            maxBuffer: 1 << 26,
            stdio: ['ignore', 'pipe', 'ignore'],
          }),
        );
        expect(frame[4] & 0x20, 'independent blocks').toBe(0x20);
        let pos = 7 + (frame[4] & 0x08 ? 8 : 0) + (frame[4] & 0x01 ? 4 : 0);
        const parts: Uint8Array[] = [];
        for (;;) {
          const word =
            (frame[pos] | (frame[pos + 1] << 8) | (frame[pos + 2] << 16) | (frame[pos + 3] << 24)) >>> 0;
          pos += 4;
          if (word === 0) break;
          const size = word & 0x7fffffff;
          const body = frame.subarray(pos, pos + size);
          pos += size;
          if (word & 0x80000000) {
            parts.push(body.slice());
          } else {
            const dst = new Uint8Array(65536);
            const n = lz4DecodeBlock(body, dst);
            parts.push(dst.slice(0, n));
          }
        }
        const joined = new Uint8Array(parts.reduce((s, p) => s + p.length, 0));
        let o = 0;
        for (const p of parts) {
          joined.set(p, o);
          o += p.length;
        }
        expectSameBytes(joined, data, `${name} ${level}`);
      }
    }
  });

  it('our blocks are read by the reference decoder', () => {
    for (const [name, data] of cliInputs()) {
      const block = lz4EncodeBlock(data);
      const flg = 0x60;
      const bd = 0x70;
      const hc = (xxh32(Uint8Array.of(flg, bd)) >>> 8) & 0xff;
      const frame = new Uint8Array(7 + 4 + block.length + 4);
      frame.set([0x04, 0x22, 0x4d, 0x18, flg, bd, hc]);
      new DataView(frame.buffer).setUint32(7, block.length, true);
      frame.set(block, 11);
      const file = join(dir, 'ours.lz4');
      writeFileSync(file, frame);
      const out = join(dir, 'ours.out');
      execFileSync(LZ4_CLI, ['-d', '-f', file, out], { stdio: 'ignore' });
      expectSameBytes(new Uint8Array(readFileSync(out)), data, name);
    }
  });
});
