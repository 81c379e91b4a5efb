import { StemflowError } from '../errors';
import { blockLayout } from './bitshuffle';

/**
 * The block table of a bitshuffle/LZ4 chunk (HDF5 filter 32008, cd_values[4] = 2), parsed and validated
 * without decoding:
 *   bytes 0-7   uint64 big-endian uncompressed size in bytes
 *   bytes 8-11  uint32 big-endian block size in bytes (a nonzero multiple of 8 * elemSize)
 *   then for each full block and one last block of (n mod block) rounded down to 8 elements:
 *               uint32 big-endian compressed length, then that many bytes of a raw LZ4 block
 *   then the last (n mod 8) elements raw, and nothing after them.
 */
export interface Bslz4BlockTable extends Bslz4Blocks {
  elemSize: number;
  uncompressedBytes: number;
  /** Block size in bytes from the chunk header. */
  blockBytes: number;
  /** The same per-block arrays as on the table itself, grouped. */
  blocks: Bslz4Blocks;
  /** The raw tail: (n mod 8) elements copied from chunk[srcOffset..] to output[dstOffset..]. */
  tail: { srcOffset: number; dstOffset: number; length: number };
}

/** The LZ4 blocks of a chunk, one entry per block in each array (ready to upload to a GPU). */
export interface Bslz4Blocks {
  /** Number of LZ4 blocks (full blocks plus the last partial one, if any). */
  count: number;
  /** Offset of the LZ4 data in the chunk (after its 4-byte length prefix). */
  srcOffset: Uint32Array;
  /** Length of the LZ4 data. */
  srcLength: Uint32Array;
  /** Offset of the block's decoded bytes in the output. */
  dstOffset: Uint32Array;
  /** Decoded size in bytes (a multiple of 8 * elemSize). */
  dstLength: Uint32Array;
}

export const BSLZ4_HEADER_BYTES = 12;
/** HDF5 chunks are at most 4 GiB - 1 bytes. */
const MAX_CHUNK_BYTES = 0xffffffff;

function readU32BE(a: Uint8Array, i: number): number {
  return ((a[i] << 24) | (a[i + 1] << 16) | (a[i + 2] << 8) | a[i + 3]) >>> 0;
}

function corrupt(message: string): StemflowError {
  return new StemflowError('corrupt', `Corrupt bitshuffle/LZ4 chunk: ${message}.`);
}

function truncated(message: string): StemflowError {
  return new StemflowError('truncated', `Truncated bitshuffle/LZ4 chunk: ${message}.`);
}

/**
 * Parses and validates the header and block table of a bitshuffle/LZ4 chunk. Throws 'corrupt' when the
 * header lies (size differs from `expectedBytes`, bad block size, trailing bytes) and 'truncated' when the
 * chunk ends before a block or the raw tail it declares.
 */
export function bslz4BlockTable(
  chunk: Uint8Array,
  elemSize: number,
  expectedBytes?: number,
): Bslz4BlockTable {
  if (!Number.isInteger(elemSize) || elemSize < 1) {
    throw new StemflowError(
      'invalid',
      `Bitshuffle needs an element size of at least 1 byte, not ${elemSize}.`,
    );
  }
  if (chunk.length < BSLZ4_HEADER_BYTES) {
    throw truncated(`it has ${chunk.length} bytes, fewer than its ${BSLZ4_HEADER_BYTES}-byte header`);
  }
  const high = readU32BE(chunk, 0);
  const uncompressedBytes = high * 0x100000000 + readU32BE(chunk, 4);
  if (high !== 0 || uncompressedBytes > MAX_CHUNK_BYTES) {
    throw corrupt(
      `the header declares ${uncompressedBytes} uncompressed bytes, more than an HDF5 chunk holds`,
    );
  }
  if (expectedBytes !== undefined && uncompressedBytes !== expectedBytes) {
    throw corrupt(
      `the header declares ${uncompressedBytes} uncompressed bytes where ${expectedBytes} are expected`,
    );
  }
  if (uncompressedBytes % elemSize !== 0) {
    throw corrupt(
      `the header declares ${uncompressedBytes} bytes, not a multiple of the element size ${elemSize}`,
    );
  }
  const blockBytes = readU32BE(chunk, 8);
  if (blockBytes === 0 || blockBytes % (8 * elemSize) !== 0) {
    throw corrupt(
      `the block size ${blockBytes} bytes is not a nonzero multiple of 8 elements of ${elemSize} bytes`,
    );
  }

  const layout = blockLayout(uncompressedBytes / elemSize, blockBytes / elemSize);
  const count = layout.fullBlocks + (layout.lastBlockElems > 0 ? 1 : 0);
  // Every block takes at least a 4-byte prefix and 1 byte of LZ4: reject lies before allocating tables.
  if (count * 5 > chunk.length - BSLZ4_HEADER_BYTES) {
    throw truncated(`it declares ${count} blocks but has only ${chunk.length} bytes`);
  }

  const srcOffset = new Uint32Array(count);
  const srcLength = new Uint32Array(count);
  const dstOffset = new Uint32Array(count);
  const dstLength = new Uint32Array(count);
  let pos = BSLZ4_HEADER_BYTES;
  let out = 0;
  for (let i = 0; i < count; i++) {
    if (chunk.length - pos < 4) {
      throw truncated(`it ends at byte ${chunk.length} before the length of block ${i} of ${count}`);
    }
    const length = readU32BE(chunk, pos);
    if (length === 0) throw corrupt(`block ${i} of ${count} has a compressed length of 0`);
    pos += 4;
    if (length > chunk.length - pos) {
      throw truncated(
        `block ${i} of ${count} declares ${length} bytes at byte ${pos}, past the end of the chunk (${chunk.length} bytes)`,
      );
    }
    const bytes = (i < layout.fullBlocks ? layout.blockElems : layout.lastBlockElems) * elemSize;
    srcOffset[i] = pos;
    srcLength[i] = length;
    dstOffset[i] = out;
    dstLength[i] = bytes;
    pos += length;
    out += bytes;
  }

  const tailBytes = layout.tailElems * elemSize;
  if (chunk.length - pos < tailBytes) {
    throw truncated(
      `it ends at byte ${chunk.length} before its raw tail of ${tailBytes} bytes at byte ${pos}`,
    );
  }
  if (chunk.length - pos > tailBytes) {
    throw corrupt(
      `it has ${chunk.length - pos - tailBytes} unexpected bytes after its last block and raw tail`,
    );
  }
  return {
    elemSize,
    uncompressedBytes,
    blockBytes,
    count,
    srcOffset,
    srcLength,
    dstOffset,
    dstLength,
    blocks: { count, srcOffset, srcLength, dstOffset, dstLength },
    tail: { srcOffset: pos, dstOffset: out, length: tailBytes },
  };
}
