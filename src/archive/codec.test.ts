import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../util/prng';
import { extraBitsOf, tokenCount, tokenOf, tokenValue } from './hybrid-uint';
import { laneGeometry } from './lanes';
import { modelRecord, recordTables } from './record-tables';
import { tansCompare } from './tans-compare';
import {
  LANE_BAD_END,
  LANE_NO_STOP_BIT,
  LANE_OK,
  LANE_TOO_LONG,
  LANE_UNDERRUN,
  tansDecode,
} from './tans-decode';
import { encodeLane, tansEncode } from './tans-encode';
import { normaliseCounts } from './tans-table';
import { detectorFrames } from './test-data';

describe('hybrid uint tokens', () => {
  it('round-trips every uint16 value and the uint32 extremes', () => {
    for (let v = 0; v < 65536; v++) {
      const t = tokenOf(v);
      expect(t).toBeLessThan(tokenCount(16));
      const eb = extraBitsOf(t);
      expect(tokenValue(t, v & ((1 << eb) - 1))).toBe(v);
    }
    for (const v of [65536, 2 ** 31 - 1, 2 ** 31, 0xffffffff, 123456789]) {
      const t = tokenOf(v);
      expect(t).toBeLessThan(tokenCount(32));
      const eb = extraBitsOf(t);
      expect(tokenValue(t, (v & (2 ** eb - 1)) >>> 0)).toBe(v);
    }
    expect(tokenOf(255)).toBeLessThan(tokenCount(8));
    expect([tokenCount(8), tokenCount(16), tokenCount(32)]).toEqual([32, 64, 128]);
  });
});

describe('normaliseCounts', () => {
  it('sums to L, keeps every counted token and drops absent ones', () => {
    const f = normaliseCounts([1_000_000, 0, 3, 1, 0, 50_000], 11);
    expect(f.reduce((a, b) => a + b, 0)).toBe(2048);
    expect([f[1], f[4]]).toEqual([0, 0]);
    expect(f[2]).toBeGreaterThanOrEqual(1);
    expect(f[3]).toBeGreaterThanOrEqual(1);
  });
  it('gives a single-token context the whole table', () => {
    expect(Array.from(normaliseCounts([7, 0, 0], 10))).toEqual([1024, 0, 0]);
  });
});

describe('tANS lanes', () => {
  const frames = 12;
  const rows = 24;
  const cols = 20;
  const pixels = rows * cols;
  const values = detectorFrames(frames, rows, cols, 7);
  values[5] = 65535;
  values[pixels + 3] = 65535;
  const model = modelRecord(values, frames, laneGeometry(pixels, 2), cols, {
    dtype: 'uint16',
    tableLog: 11,
    classes: 8,
  });
  const tables = recordTables(model);

  for (const slices of [1, 3, 7]) {
    it(`encodes and decodes every value exactly with ${slices} lanes per frame`, () => {
      const g = laneGeometry(pixels, slices);
      const tables = recordTables(
        modelRecord(values, frames, g, cols, { dtype: 'uint16', tableLog: 11, classes: 8 }),
      );
      const enc = tansEncode(values, frames, g, tables);
      expect(Array.from(enc.errors).every((e) => e === 0)).toBe(true);
      const out = new Uint16Array(values.length);
      const errors = tansDecode(enc.words, enc.offsets, frames, g, tables, out);
      expect(Array.from(errors).every((e) => e === LANE_OK)).toBe(true);
      expect(out).toEqual(values);
      // The coded size is well below raw (16 bits a value).
      expect(enc.words.length * 32).toBeLessThan(values.length * 6);
    });
  }

  it('stores an incompressible lane raw and decodes it', () => {
    // Uniform 16-bit noise costs at least 16 bits a value coded, so the lane is kept raw.
    const noise = new Uint16Array(50 * pixels);
    const next = mulberry32(3);
    for (let i = 0; i < noise.length; i++) noise[i] = next() & 0xffff;
    const t = recordTables(
      modelRecord(noise, 50, laneGeometry(pixels, 1), cols, { dtype: 'uint16', tableLog: 11, classes: 1 }),
    );
    const { words } = encodeLane(noise, 0, pixels, 0, t);
    expect(words.length).toBe(pixels / 2);
    const g = laneGeometry(pixels, 1);
    const out = new Uint16Array(pixels);
    const offsets = Uint32Array.of(0, words.length);
    expect(Array.from(tansDecode(words, offsets, 1, g, t, out))).toEqual([LANE_OK]);
    expect(out).toEqual(noise.subarray(0, pixels));
  });

  it('codes an all-zero class in zero bits per value', () => {
    const zeros = new Uint16Array(4 * pixels);
    const t = recordTables(
      modelRecord(zeros, 4, laneGeometry(pixels, 2), cols, { dtype: 'uint16', tableLog: 11, classes: 4 }),
    );
    const enc = tansEncode(zeros, 4, laneGeometry(pixels, 2), t);
    expect(Array.from(enc.offsets)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it('gives typed lane errors for damaged streams and counts mismatches exactly', () => {
    const g = laneGeometry(pixels, 2);
    const enc = tansEncode(values, frames, g, tables);
    const clean = tansCompare(enc.words, enc.offsets, frames, g, tables, values, 4);
    expect(Array.from(clean.mismatches)).toEqual([0, 0, 0]);
    // A changed reference value is exactly one mismatch in its block.
    const ref = values.slice();
    ref[5 * pixels + 17] ^= 1;
    expect(Array.from(tansCompare(enc.words, enc.offsets, frames, g, tables, ref, 4).mismatches)).toEqual([
      0, 1, 0,
    ]);
    // Zeroing a lane's last word removes its stop bit.
    const words = enc.words.slice();
    words[enc.offsets[3] - 1] = 0;
    const broken = tansCompare(words, enc.offsets, frames, g, tables, values, 4);
    expect(broken.errors[2]).toBe(LANE_NO_STOP_BIT);
    expect(broken.mismatches[0]).toBe(g.slicePixels);
    // Offsets that make a lane longer than raw, or cut it short.
    const offsets = enc.offsets.slice();
    offsets[1] = offsets[0] + 100000;
    expect(tansCompare(enc.words, offsets, 1, g, tables, values, 4).errors[0]).not.toBe(LANE_OK);
    const longLane = tansCompare(
      new Uint32Array(10000),
      Uint32Array.of(0, 9000, 9001),
      1,
      g,
      tables,
      values,
      1,
    );
    expect(longLane.errors[0]).toBe(LANE_TOO_LONG);
    // Flipping a bit in the middle of a stream ends in a bad end state, an underrun or wrong values:
    // never in a clean decode of wrong values without a mismatch.
    for (let bit = 0; bit < 64; bit++) {
      const w = enc.words.slice();
      const at = enc.offsets[4] + 1;
      w[at] ^= 1 << (bit % 32);
      const r = tansCompare(w, enc.offsets, frames, g, tables, values, 4);
      const lane4 = r.errors[4];
      expect(lane4 === LANE_OK ? r.mismatches[0] : r.mismatches[0] + 1).toBeGreaterThan(0);
      expect([LANE_OK, LANE_BAD_END, LANE_UNDERRUN, LANE_NO_STOP_BIT]).toContain(lane4);
    }
  });
});
