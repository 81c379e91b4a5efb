import type { FileContext } from './context';

/** Sequential little-endian reader over one structure's bytes; every read is bounds-checked. */
export class Cursor {
  pos = 0;
  private readonly view: DataView;

  constructor(
    readonly bytes: Uint8Array,
    readonly ctx: FileContext,
    /** Relative file address of bytes[0], for messages. */
    readonly address: number,
    readonly what: string,
  ) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  get remaining(): number {
    return this.bytes.length - this.pos;
  }

  need(n: number): void {
    if (!Number.isSafeInteger(n) || n < 0 || this.pos + n > this.bytes.length) {
      throw this.ctx.error(
        'corrupt',
        `The ${this.what} is shorter than the fields it declares`,
        this.address,
      );
    }
  }

  fail(message: string): never {
    throw this.ctx.error('corrupt', `${message} in the ${this.what}`, this.address);
  }

  skip(n: number): void {
    this.need(n);
    this.pos += n;
  }

  take(n: number): Uint8Array {
    this.need(n);
    const out = this.bytes.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  u8(): number {
    this.need(1);
    return this.bytes[this.pos++];
  }

  u16(): number {
    this.need(2);
    const v = this.view.getUint16(this.pos, true);
    this.pos += 2;
    return v;
  }

  u32(): number {
    this.need(4);
    const v = this.view.getUint32(this.pos, true);
    this.pos += 4;
    return v;
  }

  /** Unsigned integer of n bytes (0..8); -1 when all bits are set; 'corrupt' above 2^53. */
  uintOrUndef(n: number): number {
    this.need(n);
    const p = this.pos;
    this.pos += n;
    if (n === 8) {
      const lo = this.view.getUint32(p, true);
      const hi = this.view.getUint32(p + 4, true);
      if (hi === 0xffffffff && lo === 0xffffffff) return -1;
      if (hi > 0x1fffff) this.fail('A value too large to be real');
      return hi * 0x100000000 + lo;
    }
    if (n === 4) {
      const v = this.view.getUint32(p, true);
      return v === 0xffffffff ? -1 : v;
    }
    if (n === 2) {
      const v = this.view.getUint16(p, true);
      return v === 0xffff ? -1 : v;
    }
    let allOnes = n > 0;
    let v = 0;
    for (let k = n - 1; k >= 0; k--) {
      const b = this.bytes[p + k];
      if (b !== 0xff) allOnes = false;
      v = v * 256 + b;
    }
    if (allOnes) return -1;
    if (!Number.isSafeInteger(v)) this.fail(`A value too large to be real (${v})`);
    return v;
  }

  /** Unsigned integer of n bytes that must be defined. */
  uint(n: number): number {
    const v = this.uintOrUndef(n);
    if (v < 0) this.fail('An undefined value where a number is required');
    return v;
  }

  u64(): number {
    return this.uint(8);
  }

  /** A stored address (relative to the base address); UNDEF (-1) when undefined. */
  offset(): number {
    return this.uintOrUndef(this.ctx.offsetSize);
  }

  length(): number {
    return this.uint(this.ctx.lengthSize);
  }

  signature(sig: string): void {
    this.need(sig.length);
    for (let k = 0; k < sig.length; k++) {
      if (this.bytes[this.pos + k] !== sig.charCodeAt(k)) {
        throw this.ctx.error(
          'corrupt',
          `Expected the signature "${sig}" of a ${this.what} but found other bytes: the file is damaged`,
          this.address,
        );
      }
    }
    this.pos += sig.length;
  }

  /** A NUL-terminated string within the next `max` bytes (or until the end). */
  cstring(max = this.remaining): string {
    const end = Math.min(this.bytes.length, this.pos + max);
    let k = this.pos;
    while (k < end && this.bytes[k] !== 0) k++;
    if (k >= end) this.fail('An unterminated name');
    const s = new TextDecoder().decode(this.bytes.subarray(this.pos, k));
    this.pos = k + 1;
    return s;
  }

  text(n: number): string {
    return new TextDecoder().decode(this.take(n));
  }
}
