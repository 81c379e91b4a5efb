import { StemflowError } from '../errors';
import {
  bitshuffleBlock,
  bitunshuffle,
  bitunshuffleBlock,
  blockLayout,
  defaultBlockSize,
} from './bitshuffle';
import { BSLZ4_HEADER_BYTES, bslz4BlockTable } from './bslz4-table';
import { lz4CompressBound, lz4DecodeBlockExact, lz4EncodeBlock } from './lz4';

/** cd_values[4] of HDF5 filter 32008: how the bitshuffled blocks are compressed. */
export const BSHUF_COMPRESS_NONE = 0;
export const BSHUF_COMPRESS_LZ4 = 2;
export const BSHUF_COMPRESS_ZSTD = 3;

/**
 * Decodes one bitshuffle/LZ4 chunk (HDF5 filter 32008 with cd_values[4] = 2) of `elemSize`-byte elements.
 * The header, block table and every block are validated (see bslz4BlockTable); a block that does not
 * decode to exactly its size throws 'corrupt'.
 */
export function bslz4Decode(chunk: Uint8Array, elemSize: number, expectedBytes?: number): Uint8Array {
  const table = bslz4BlockTable(chunk, elemSize, expectedBytes);
  const out = new Uint8Array(table.uncompressedBytes);
  const scratch = new Uint8Array(table.blocks.count > 0 ? table.blockBytes : 0);
  for (let i = 0; i < table.blocks.count; i++) {
    const src = table.blocks.srcOffset[i];
    const dst = table.blocks.dstOffset[i];
    const bytes = table.blocks.dstLength[i];
    const shuffled = scratch.subarray(0, bytes);
    try {
      lz4DecodeBlockExact(chunk.subarray(src, src + table.blocks.srcLength[i]), shuffled);
    } catch (e) {
      const text = e instanceof Error ? e.message : String(e);
      throw new StemflowError(
        'corrupt',
        `Corrupt bitshuffle/LZ4 chunk: block ${i} of ${table.blocks.count} (chunk byte ${src - 4}): ${text}`,
        {},
        { cause: e },
      );
    }
    bitunshuffleBlock(shuffled, out.subarray(dst, dst + bytes), bytes / elemSize, elemSize);
  }
  const { tail } = table;
  out.set(chunk.subarray(tail.srcOffset, tail.srcOffset + tail.length), tail.dstOffset);
  return out;
}

function writeU32BE(a: Uint8Array, i: number, v: number): void {
  a[i] = v >>> 24;
  a[i + 1] = (v >>> 16) & 0xff;
  a[i + 2] = (v >>> 8) & 0xff;
  a[i + 3] = v & 0xff;
}

/**
 * Encodes `raw` as one bitshuffle/LZ4 chunk, byte-compatible with the HDF5 filter 32008 (cd_values[4] = 2),
 * with blocks of `blockSizeElems` elements (0 = bitshuffle's default).
 */
export function bslz4Encode(raw: Uint8Array, elemSize: number, blockSizeElems = 0): Uint8Array {
  if (!Number.isInteger(elemSize) || elemSize < 1) {
    throw new StemflowError(
      'invalid',
      `Bitshuffle needs an element size of at least 1 byte, not ${elemSize}.`,
    );
  }
  if (raw.length % elemSize !== 0) {
    throw new StemflowError(
      'invalid',
      `Bitshuffle needs whole elements: ${raw.length} bytes is not a multiple of the element size ${elemSize}.`,
    );
  }
  const block = blockSizeElems === 0 ? defaultBlockSize(elemSize) : blockSizeElems;
  if (!Number.isInteger(block) || block <= 0 || block % 8 !== 0) {
    throw new StemflowError(
      'invalid',
      `The bitshuffle block size must be a positive multiple of 8 elements, not ${blockSizeElems}.`,
    );
  }
  const layout = blockLayout(raw.length / elemSize, block);
  const blockBytes = block * elemSize;
  const count = layout.fullBlocks + (layout.lastBlockElems > 0 ? 1 : 0);
  const out = new Uint8Array(BSLZ4_HEADER_BYTES + count * (4 + lz4CompressBound(blockBytes)) + elemSize * 8);
  const high = Math.floor(raw.length / 0x100000000);
  writeU32BE(out, 0, high);
  writeU32BE(out, 4, raw.length - high * 0x100000000);
  writeU32BE(out, 8, blockBytes);
  const shuffled = new Uint8Array(blockBytes);
  let pos = BSLZ4_HEADER_BYTES;
  let src = 0;
  for (let i = 0; i < count; i++) {
    const elems = i < layout.fullBlocks ? block : layout.lastBlockElems;
    const bytes = elems * elemSize;
    bitshuffleBlock(raw.subarray(src, src + bytes), shuffled, elems, elemSize);
    const packed = lz4EncodeBlock(shuffled.subarray(0, bytes));
    writeU32BE(out, pos, packed.length);
    out.set(packed, pos + 4);
    pos += 4 + packed.length;
    src += bytes;
  }
  out.set(raw.subarray(src), pos);
  pos += raw.length - src;
  return out.slice(0, pos);
}

/**
 * Decodes a chunk of HDF5 filter 32008 according to its cd_values [major, minor, element size, block size
 * in elements, compression, ...]: compression 0 is plain bitshuffle, 2 is bitshuffle/LZ4; zstd (3) and
 * anything else throw 'unsupported'. `fallbackElemSize` is used when cd_values lacks the element size.
 */
export function bitshuffleFilterDecode(
  chunk: Uint8Array,
  cdValues: readonly number[],
  expectedBytes: number,
  fallbackElemSize?: number,
): Uint8Array {
  const elemSize = cdValues.length > 2 ? cdValues[2] : fallbackElemSize;
  if (elemSize === undefined || !Number.isInteger(elemSize) || elemSize < 1) {
    throw new StemflowError(
      'corrupt',
      `The bitshuffle filter parameters [${cdValues.join(', ')}] lack an element size.`,
    );
  }
  const compression = cdValues.length > 4 ? cdValues[4] : BSHUF_COMPRESS_NONE;
  if (compression === BSHUF_COMPRESS_LZ4) return bslz4Decode(chunk, elemSize, expectedBytes);
  if (compression === BSHUF_COMPRESS_ZSTD) {
    throw new StemflowError(
      'unsupported',
      'This file uses bitshuffle with zstd compression, which is not supported; only bitshuffle/LZ4 is.',
    );
  }
  if (compression !== BSHUF_COMPRESS_NONE) {
    throw new StemflowError(
      'unsupported',
      `This file uses bitshuffle with an unknown compression code ${compression}; only LZ4 (2) and none (0) are supported.`,
    );
  }
  if (chunk.length !== expectedBytes) {
    throw new StemflowError(
      'corrupt',
      `A bitshuffled chunk has ${chunk.length} bytes where ${expectedBytes} are expected.`,
    );
  }
  const block = cdValues.length > 3 ? cdValues[3] : 0;
  if (!Number.isInteger(block) || block < 0 || block % 8 !== 0) {
    throw new StemflowError('corrupt', `The bitshuffle block size ${block} is not a multiple of 8 elements.`);
  }
  if (chunk.length % elemSize !== 0) {
    throw new StemflowError(
      'corrupt',
      `A bitshuffled chunk has ${chunk.length} bytes, not a multiple of the element size ${elemSize}.`,
    );
  }
  return bitunshuffle(chunk, elemSize, block);
}
