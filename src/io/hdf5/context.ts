import { type ErrorKind, StemflowError, throwIfAborted } from '../../errors';
import type { ByteSource } from '../byte-source';
import { lookup3 } from './checksum';
import { Cursor } from './cursor';

/** The "undefined address" of HDF5 (all bits set), as returned by `Cursor.offset()`. */
export const UNDEF = -1;

const PAGE = 4096;
const MAX_PAGES = 512;
const DIRECT_READ = 64 * 1024;

export interface AddressSizes {
  readonly offsetSize: number;
  readonly lengthSize: number;
  /** Absolute file offset that every stored address is relative to. */
  readonly baseAddress: number;
}

/**
 * What every structure reader needs: the byte source, the sizes of addresses and lengths, the base address,
 * and a small page cache for metadata reads. Addresses given to `read*` are relative (as stored in the file).
 */
export class FileContext {
  private readonly pages = new Map<number, Promise<Uint8Array>>();

  constructor(
    readonly source: ByteSource,
    readonly sizes: AddressSizes,
  ) {}

  get name(): string {
    return this.source.name;
  }
  get offsetSize(): number {
    return this.sizes.offsetSize;
  }
  get lengthSize(): number {
    return this.sizes.lengthSize;
  }

  /** Absolute file offset of a stored (relative) address. */
  abs(address: number): number {
    return this.sizes.baseAddress + address;
  }

  error(kind: ErrorKind, message: string, address?: number): StemflowError {
    return new StemflowError(kind, message, {
      file: this.name,
      offset: address === undefined || address < 0 ? undefined : this.abs(address),
    });
  }

  /** Throws 'corrupt' unless `address` is defined and inside the file. */
  checkAddress(address: number, what: string): void {
    if (address === UNDEF || !Number.isSafeInteger(address) || address < 0) {
      throw this.error('corrupt', `The ${what} has an undefined or invalid address`);
    }
    if (this.abs(address) >= this.source.size) {
      throw this.error(
        'truncated',
        `The ${what} lies at byte ${this.abs(address)}, past the end of the file (${this.source.size} bytes); the file is probably truncated`,
        address,
      );
    }
  }

  /** Reads exactly `length` bytes at a relative address (one read, not cached). */
  async read(address: number, length: number, what: string, signal?: AbortSignal): Promise<Uint8Array> {
    this.checkAddress(address, what);
    return this.source.read(this.abs(address), length, signal);
  }

  /** Reads up to `length` bytes (fewer at the end of the file). */
  async readUpTo(address: number, length: number, what: string, signal?: AbortSignal): Promise<Uint8Array> {
    this.checkAddress(address, what);
    const n = Math.min(length, this.source.size - this.abs(address));
    return this.source.read(this.abs(address), n, signal);
  }

  /** Reads a small metadata range through a page cache (object headers, heaps, small blocks). */
  async readMeta(address: number, length: number, what: string, signal?: AbortSignal): Promise<Uint8Array> {
    this.checkAddress(address, what);
    if (length > DIRECT_READ) return this.read(address, length, what, signal);
    const start = this.abs(address);
    if (start + length > this.source.size) return this.source.read(start, length, signal); // throws truncated
    const first = Math.floor(start / PAGE);
    const last = Math.floor((start + length - 1) / PAGE);
    if (length === 0) return new Uint8Array(0);
    const parts = await Promise.all(
      Array.from({ length: last - first + 1 }, (_, k) => this.page(first + k, signal)),
    );
    if (parts.length === 1) return parts[0].subarray(start - first * PAGE, start - first * PAGE + length);
    const out = new Uint8Array(length);
    let pos = 0;
    for (let k = 0; k < parts.length; k++) {
      const from = k === 0 ? start - first * PAGE : 0;
      const n = Math.min(parts[k].length - from, length - pos);
      out.set(parts[k].subarray(from, from + n), pos);
      pos += n;
    }
    return out;
  }

  private page(index: number, signal?: AbortSignal): Promise<Uint8Array> {
    throwIfAborted(signal);
    const hit = this.pages.get(index);
    if (hit) return hit;
    const start = index * PAGE;
    const p = this.source.read(start, Math.min(PAGE, this.source.size - start), signal);
    p.catch(() => this.pages.delete(index));
    if (this.pages.size >= MAX_PAGES) this.pages.delete(this.pages.keys().next().value as number);
    this.pages.set(index, p);
    return p;
  }

  cursor(bytes: Uint8Array, address: number, what: string): Cursor {
    return new Cursor(bytes, this, address, what);
  }

  /** Verifies the lookup3 checksum stored in the 4 bytes after `bytes[0, end)`. */
  verifyChecksum(bytes: Uint8Array, end: number, address: number, what: string): void {
    if (end + 4 > bytes.length) throw this.error('truncated', `The ${what} is cut short`, address);
    const stored =
      (bytes[end] | (bytes[end + 1] << 8) | (bytes[end + 2] << 16) | (bytes[end + 3] << 24)) >>> 0;
    if (lookup3(bytes.subarray(0, end)) !== stored) {
      throw this.error('corrupt', `The checksum of the ${what} does not match: the file is damaged`, address);
    }
  }
}
