import { StemflowError } from '../errors';

/**
 * Bitshuffle (Masui et al.), the transform under HDF5 filter 32008, with its exact block semantics.
 *
 * Bit layout of one block of `n` elements (`n` a multiple of 8) of `elemSize` bytes, as bitshuffleBlock
 * writes it and bitunshuffleBlock reads it (the WGSL twin must match this):
 *   - the block is 8 * elemSize bit planes, each of n / 8 bytes; plane p starts at byte p * (n / 8);
 *   - plane p = 8 * j + k holds bit k (0 = least significant) of byte j (little-endian byte order within the
 *     element) of every element, so for a little-endian uint16 plane p is value bit p;
 *   - element i's bit sits in byte floor(i / 8) of the plane, at bit (i mod 8), least significant first.
 * In short: shuffled[(8 * j + k) * (n / 8) + (i >> 3)] bit (i & 7) == raw[i * elemSize + j] bit k.
 *
 * A whole buffer of N elements is cut into full blocks of B elements, then one last block of
 * (N mod B) rounded down to a multiple of 8 elements, then the last (N mod 8) elements, copied raw.
 */

/** Bitshuffle's default block size in elements: 8192 bytes / elemSize, a multiple of 8, at least 128. */
export function defaultBlockSize(elemSize: number): number {
  const elems = Math.floor(8192 / elemSize);
  return Math.max(elems - (elems % 8), 128);
}

/**
 * Bitshuffles one block: `n` elements (a multiple of 8) of `elemSize` bytes from src[0, n * elemSize) into
 * dst[0, n * elemSize). See the layout above.
 */
export function bitshuffleBlock(src: Uint8Array, dst: Uint8Array, n: number, elemSize: number): void {
  const planeBytes = n >>> 3;
  const es = elemSize;
  const es2 = es * 2;
  const es3 = es * 3;
  const es4 = es * 4;
  const es5 = es * 5;
  const es6 = es * 6;
  const es7 = es * 7;
  for (let j = 0; j < es; j++) {
    let o = 8 * j * planeBytes;
    let s = j;
    for (let b = 0; b < planeBytes; b++, o++, s += 8 * es) {
      // Rows are the 8 elements' byte j (element 7 first), columns bit 7..0; transpose the 8x8 bit matrix.
      let x = (src[s + es7] << 24) | (src[s + es6] << 16) | (src[s + es5] << 8) | src[s + es4];
      let y = (src[s + es3] << 24) | (src[s + es2] << 16) | (src[s + es] << 8) | src[s];
      let t = (x ^ (x >>> 7)) & 0x00aa00aa;
      x = x ^ t ^ (t << 7);
      t = (y ^ (y >>> 7)) & 0x00aa00aa;
      y = y ^ t ^ (t << 7);
      t = (x ^ (x >>> 14)) & 0x0000cccc;
      x = x ^ t ^ (t << 14);
      t = (y ^ (y >>> 14)) & 0x0000cccc;
      y = y ^ t ^ (t << 14);
      t = (x & 0xf0f0f0f0) | ((y >>> 4) & 0x0f0f0f0f);
      y = ((x << 4) & 0xf0f0f0f0) | (y & 0x0f0f0f0f);
      dst[o + 7 * planeBytes] = t >>> 24;
      dst[o + 6 * planeBytes] = (t >>> 16) & 0xff;
      dst[o + 5 * planeBytes] = (t >>> 8) & 0xff;
      dst[o + 4 * planeBytes] = t & 0xff;
      dst[o + 3 * planeBytes] = y >>> 24;
      dst[o + 2 * planeBytes] = (y >>> 16) & 0xff;
      dst[o + planeBytes] = (y >>> 8) & 0xff;
      dst[o] = y & 0xff;
    }
  }
}

/**
 * Inverts bitshuffleBlock: `n` elements (a multiple of 8) of `elemSize` bytes from the bit planes in
 * src[0, n * elemSize) into dst[0, n * elemSize). Each step reads one byte of each of 8 planes (bits k = 0..7
 * of byte j of 8 consecutive elements) and transposes that 8x8 bit matrix with shifts and masks.
 */
export function bitunshuffleBlock(src: Uint8Array, dst: Uint8Array, n: number, elemSize: number): void {
  const planeBytes = n >>> 3;
  const es = elemSize;
  const es2 = es * 2;
  const es3 = es * 3;
  const es4 = es * 4;
  const es5 = es * 5;
  const es6 = es * 6;
  const es7 = es * 7;
  const p2 = planeBytes * 2;
  const p3 = planeBytes * 3;
  const p4 = planeBytes * 4;
  const p5 = planeBytes * 5;
  const p6 = planeBytes * 6;
  const p7 = planeBytes * 7;
  for (let j = 0; j < es; j++) {
    let s = 8 * j * planeBytes;
    let o = j;
    for (let b = 0; b < planeBytes; b++, s++, o += 8 * es) {
      // Rows are planes 8j+7 .. 8j (bit 7 first), columns elements 7..0; transpose the 8x8 bit matrix.
      let x = (src[s + p7] << 24) | (src[s + p6] << 16) | (src[s + p5] << 8) | src[s + p4];
      let y = (src[s + p3] << 24) | (src[s + p2] << 16) | (src[s + planeBytes] << 8) | src[s];
      let t = (x ^ (x >>> 7)) & 0x00aa00aa;
      x = x ^ t ^ (t << 7);
      t = (y ^ (y >>> 7)) & 0x00aa00aa;
      y = y ^ t ^ (t << 7);
      t = (x ^ (x >>> 14)) & 0x0000cccc;
      x = x ^ t ^ (t << 14);
      t = (y ^ (y >>> 14)) & 0x0000cccc;
      y = y ^ t ^ (t << 14);
      t = (x & 0xf0f0f0f0) | ((y >>> 4) & 0x0f0f0f0f);
      y = ((x << 4) & 0xf0f0f0f0) | (y & 0x0f0f0f0f);
      dst[o + es7] = t >>> 24;
      dst[o + es6] = (t >>> 16) & 0xff;
      dst[o + es5] = (t >>> 8) & 0xff;
      dst[o + es4] = t & 0xff;
      dst[o + es3] = y >>> 24;
      dst[o + es2] = (y >>> 16) & 0xff;
      dst[o + es] = (y >>> 8) & 0xff;
      dst[o] = y & 0xff;
    }
  }
}

/** How a buffer of `elems` elements is cut into bitshuffle blocks. */
export interface BlockLayout {
  /** Elements per full block. */
  blockElems: number;
  /** Number of full blocks. */
  fullBlocks: number;
  /** Elements in the last partial block (a multiple of 8, possibly 0). */
  lastBlockElems: number;
  /** Elements copied raw at the end (elems mod 8). */
  tailElems: number;
}

export function blockLayout(elems: number, blockElems: number): BlockLayout {
  const rest = elems % blockElems;
  return {
    blockElems,
    fullBlocks: (elems - rest) / blockElems,
    lastBlockElems: rest - (rest % 8),
    tailElems: rest % 8,
  };
}

/** Checks the arguments of a whole-buffer transform and resolves the block size in elements. */
function resolveBlockSize(length: number, elemSize: number, blockSizeElems: number): number {
  if (!Number.isInteger(elemSize) || elemSize < 1) {
    throw new StemflowError(
      'invalid',
      `Bitshuffle needs an element size of at least 1 byte, not ${elemSize}.`,
    );
  }
  if (length % elemSize !== 0) {
    throw new StemflowError(
      'invalid',
      `Bitshuffle needs whole elements: ${length} bytes is not a multiple of the element size ${elemSize}.`,
    );
  }
  const block = blockSizeElems === 0 ? defaultBlockSize(elemSize) : blockSizeElems;
  if (!Number.isInteger(block) || block <= 0 || block % 8 !== 0) {
    throw new StemflowError(
      'invalid',
      `The bitshuffle block size must be a positive multiple of 8 elements, not ${blockSizeElems}.`,
    );
  }
  return block;
}

type BlockFn = (src: Uint8Array, dst: Uint8Array, n: number, elemSize: number) => void;

function transformBuffer(src: Uint8Array, elemSize: number, blockSizeElems: number, fn: BlockFn): Uint8Array {
  const block = resolveBlockSize(src.length, elemSize, blockSizeElems);
  const layout = blockLayout(src.length / elemSize, block);
  const dst = new Uint8Array(src.length);
  const blockBytes = block * elemSize;
  let pos = 0;
  for (let i = 0; i < layout.fullBlocks; i++, pos += blockBytes) {
    fn(src.subarray(pos, pos + blockBytes), dst.subarray(pos, pos + blockBytes), block, elemSize);
  }
  if (layout.lastBlockElems > 0) {
    const bytes = layout.lastBlockElems * elemSize;
    fn(src.subarray(pos, pos + bytes), dst.subarray(pos, pos + bytes), layout.lastBlockElems, elemSize);
    pos += bytes;
  }
  dst.set(src.subarray(pos), pos);
  return dst;
}

/** Bitshuffles a whole buffer (blocks of `blockSizeElems` elements, 0 = default). Returns a new buffer. */
export function bitshuffle(src: Uint8Array, elemSize: number, blockSizeElems = 0): Uint8Array {
  return transformBuffer(src, elemSize, blockSizeElems, bitshuffleBlock);
}

/** Inverts bitshuffle over a whole buffer (blocks of `blockSizeElems` elements, 0 = default). */
export function bitunshuffle(src: Uint8Array, elemSize: number, blockSizeElems = 0): Uint8Array {
  return transformBuffer(src, elemSize, blockSizeElems, bitunshuffleBlock);
}
