import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ByteSource, memorySource } from '../../byte-source';
import { lookup3 } from '../checksum';

export function fixture(name: string): Uint8Array {
  return new Uint8Array(readFileSync(join(process.cwd(), 'test/fixtures', name)));
}

export function testdata(name: string): Uint8Array {
  return new Uint8Array(readFileSync(join(import.meta.dirname, '../testdata', name)));
}

export function source(bytes: Uint8Array, name = 'mutated.h5'): ByteSource {
  return memorySource(bytes, name);
}

/** Offset of the first occurrence of an ASCII signature. */
export function find(bytes: Uint8Array, sig: string, from = 0): number {
  const code = [...sig].map((ch) => ch.charCodeAt(0));
  for (let i = from; i + code.length <= bytes.length; i++) {
    if (code.every((c, k) => bytes[i + k] === c)) return i;
  }
  throw new Error(`signature ${sig} not found`);
}

export function readU(bytes: Uint8Array, at: number, n: number): number {
  let v = 0;
  for (let k = n - 1; k >= 0; k--) v = v * 256 + bytes[at + k];
  return v;
}

export function writeU(bytes: Uint8Array, at: number, n: number, value: number): void {
  let v = value;
  for (let k = 0; k < n; k++) {
    bytes[at + k] = v % 256;
    v = Math.floor(v / 256);
  }
}

/** Rewrites the lookup3 checksum stored at `end` over bytes [start, end). */
export function reseal(bytes: Uint8Array, start: number, end: number): void {
  writeU(bytes, end, 4, lookup3(bytes.subarray(start, end)));
}
