import { StemflowError } from '../errors';

/**
 * LZ4 block format (no frame): a sequence of (token, literals, offset, match) records. The token's high
 * nibble is the literal length, the low nibble the match length minus 4; 15 in either nibble means extra
 * length bytes follow (each adds its value, 255 means another byte follows). The offset is uint16
 * little-endian, 1..65535, counted back from the current output position; a match may overlap its own
 * output (offset < length repeats a pattern). The last sequence has literals only.
 */

const MIN_MATCH = 4;
/** The last match must start at least this many bytes before the end of the block. */
const MFLIMIT = 12;
/** The last bytes of a block are always literals. */
const LAST_LITERALS = 5;
const MAX_OFFSET = 65535;
const HASH_LOG = 12;
const SKIP_TRIGGER = 6;

function corrupt(message: string): StemflowError {
  return new StemflowError('corrupt', `Corrupt LZ4 block: ${message}.`);
}

/**
 * Decodes one raw LZ4 block into `dst` and returns the number of bytes written. Never reads outside `src`
 * nor writes outside `dst`: any record that would do so throws a StemflowError of kind 'corrupt'.
 */
export function lz4DecodeBlock(src: Uint8Array, dst: Uint8Array): number {
  const srcEnd = src.length;
  const dstEnd = dst.length;
  if (srcEnd === 0) throw corrupt('the block is empty');
  let ip = 0;
  let op = 0;
  for (;;) {
    if (ip >= srcEnd) throw corrupt(`the block ends at byte ${srcEnd} in the middle of a sequence`);
    const token = src[ip++];

    let litLen = token >>> 4;
    if (litLen === 15) {
      let b = 255;
      while (b === 255) {
        if (ip >= srcEnd) throw corrupt('the block ends inside a literal length');
        b = src[ip++];
        litLen += b;
      }
    }
    if (litLen > srcEnd - ip) {
      throw corrupt(
        `a run of ${litLen} literals at byte ${ip} runs past the end of the block (${srcEnd} bytes)`,
      );
    }
    if (litLen > dstEnd - op) {
      throw corrupt(`${litLen} literals at output byte ${op} run past the output size ${dstEnd}`);
    }
    if (litLen > 32) {
      dst.set(src.subarray(ip, ip + litLen), op);
      ip += litLen;
      op += litLen;
    } else {
      const litEnd = ip + litLen;
      while (ip < litEnd) dst[op++] = src[ip++];
    }

    if (ip === srcEnd) return op;

    if (srcEnd - ip < 2) throw corrupt('the block ends inside a match offset');
    const offset = src[ip] | (src[ip + 1] << 8);
    ip += 2;
    if (offset === 0) throw corrupt(`a match at output byte ${op} has offset 0`);
    if (offset > op) {
      throw corrupt(
        `a match at output byte ${op} points ${offset} bytes back, before the start of the output`,
      );
    }

    let matchLen = token & 15;
    if (matchLen === 15) {
      let b = 255;
      while (b === 255) {
        if (ip >= srcEnd) throw corrupt('the block ends inside a match length');
        b = src[ip++];
        matchLen += b;
      }
    }
    matchLen += MIN_MATCH;
    if (matchLen > dstEnd - op) {
      throw corrupt(`a match of ${matchLen} bytes at output byte ${op} runs past the output size ${dstEnd}`);
    }

    let ref = op - offset;
    if (matchLen <= 32) {
      const matchEnd = op + matchLen;
      while (op < matchEnd) dst[op++] = dst[ref++];
    } else if (offset >= matchLen) {
      dst.copyWithin(op, ref, ref + matchLen);
      op += matchLen;
    } else {
      // Overlapping match: the output repeats a pattern of `offset` bytes. Copy whole periods, doubling.
      let done = 0;
      while (done < matchLen) {
        const n = Math.min(done + offset, matchLen - done);
        dst.copyWithin(op + done, ref, ref + n);
        done += n;
      }
      op += matchLen;
    }
  }
}

/** Decodes one LZ4 block that must fill `dst` exactly; any other size throws kind 'corrupt'. */
export function lz4DecodeBlockExact(src: Uint8Array, dst: Uint8Array): void {
  const n = lz4DecodeBlock(src, dst);
  if (n !== dst.length) throw corrupt(`it decodes to ${n} bytes where ${dst.length} are required`);
}

/** The largest size of an LZ4 block that encodes `n` bytes (LZ4_COMPRESSBOUND). */
export function lz4CompressBound(n: number): number {
  return n + Math.floor(n / 255) + 16;
}

const hashTable = new Int32Array(1 << HASH_LOG);

function read32(a: Uint8Array, i: number): number {
  return a[i] | (a[i + 1] << 8) | (a[i + 2] << 16) | (a[i + 3] << 24);
}

function hash32(v: number): number {
  return Math.imul(v, 2654435761) >>> (32 - HASH_LOG);
}

/** Writes a length beyond a 15 nibble as LZ4 extra bytes; returns the new output position. */
function writeExtraLength(out: Uint8Array, op: number, rest: number): number {
  let r = rest;
  while (r >= 255) {
    out[op++] = 255;
    r -= 255;
  }
  out[op++] = r;
  return op;
}

/** Writes the literals src[anchor, end) with a token whose match nibble is filled in later. */
function writeLiterals(src: Uint8Array, anchor: number, end: number, out: Uint8Array, op: number): number {
  const litLen = end - anchor;
  let p = op + 1;
  if (litLen >= 15) {
    out[op] = 0xf0;
    p = writeExtraLength(out, p, litLen - 15);
  } else {
    out[op] = litLen << 4;
  }
  out.set(src.subarray(anchor, end), p);
  return p + litLen;
}

/**
 * Compresses `src` into one LZ4 block (greedy hash-table matcher like LZ4's fast mode). Respects the
 * end-of-block rules: the last 5 bytes are literals and the last match starts at least 12 bytes before
 * the end, so any conforming LZ4 decoder reads the result.
 */
export function lz4EncodeBlock(src: Uint8Array): Uint8Array {
  const n = src.length;
  const out = new Uint8Array(lz4CompressBound(n));
  let op = 0;
  let anchor = 0;
  if (n >= MFLIMIT + 1) {
    const table = hashTable;
    table.fill(-1);
    const matchStartLimit = n - MFLIMIT;
    const matchEndLimit = n - LAST_LITERALS;
    let ip = 0;
    let searches = 1 << SKIP_TRIGGER;
    while (ip <= matchStartLimit) {
      const seq = read32(src, ip);
      const h = hash32(seq);
      let ref = table[h];
      table[h] = ip;
      if (ref < 0 || ip - ref > MAX_OFFSET || read32(src, ref) !== seq) {
        ip += searches++ >>> SKIP_TRIGGER;
        continue;
      }
      searches = 1 << SKIP_TRIGGER;
      while (ip > anchor && ref > 0 && src[ip - 1] === src[ref - 1]) {
        ip--;
        ref--;
      }
      let len = MIN_MATCH;
      while (ip + len < matchEndLimit && src[ip + len] === src[ref + len]) len++;

      const tokenPos = op;
      op = writeLiterals(src, anchor, ip, out, op);
      const offset = ip - ref;
      out[op++] = offset & 0xff;
      out[op++] = offset >>> 8;
      const ml = len - MIN_MATCH;
      if (ml >= 15) {
        out[tokenPos] |= 15;
        op = writeExtraLength(out, op, ml - 15);
      } else {
        out[tokenPos] |= ml;
      }
      ip += len;
      anchor = ip;
      if (ip - 2 <= matchStartLimit) table[hash32(read32(src, ip - 2))] = ip - 2;
    }
  }
  op = writeLiterals(src, anchor, n, out, op);
  return out.slice(0, op);
}
