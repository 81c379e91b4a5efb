import { expect } from 'vitest';
import { type ErrorKind, isStemflowError } from '../errors';

/** Helpers shared by the codec tests (not part of the codec API). */

/** A deterministic PRNG (mulberry32) returning uint32 values. */
export function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

export function randomBytes(n: number, seed: number): Uint8Array {
  const next = rng(seed);
  const a = new Uint8Array(n);
  for (let i = 0; i < n; i++) a[i] = next() & 0xff;
  return a;
}

/** Sparse detector-like uint16 counts (mostly 0, a few small counts, one 65535), little-endian bytes. */
export function sparseCounts(n: number, seed: number): Uint8Array {
  const next = rng(seed);
  const v = new Uint16Array(n);
  for (let i = 0; i < n; i++) {
    const r = next() % 1000;
    v[i] = r < 900 ? 0 : r < 990 ? 1 + (r % 3) : r % 300;
  }
  if (n > 0) v[Math.floor(n / 2)] = 65535;
  return new Uint8Array(v.buffer);
}

/** Runs `fn` and asserts it throws a StemflowError of `kind`; returns the error. */
export function expectStemflowError(fn: () => unknown, kind: ErrorKind): Error {
  try {
    fn();
  } catch (e) {
    if (!isStemflowError(e, kind))
      throw new Error(`expected a StemflowError of kind ${kind}, got ${String(e)}`);
    return e;
  }
  expect.fail(`expected a StemflowError of kind ${kind}, but nothing was thrown`);
}

export async function expectStemflowErrorAsync(fn: () => Promise<unknown>, kind: ErrorKind): Promise<Error> {
  try {
    await fn();
  } catch (e) {
    if (!isStemflowError(e, kind))
      throw new Error(`expected a StemflowError of kind ${kind}, got ${String(e)}`);
    return e;
  }
  expect.fail(`expected a StemflowError of kind ${kind}, but nothing was thrown`);
}

/** Asserts two byte arrays are identical (fast; reports the first difference). */
export function expectSameBytes(actual: Uint8Array, expected: Uint8Array, label = 'bytes'): void {
  expect(actual.length, `${label}: length`).toBe(expected.length);
  if (Buffer.compare(actual, expected) === 0) return;
  let i = 0;
  while (actual[i] === expected[i]) i++;
  expect.fail(`${label}: first difference at byte ${i}: ${actual[i]} != ${expected[i]}`);
}
