export {
  type BlockLayout,
  bitshuffle,
  bitshuffleBlock,
  bitunshuffle,
  bitunshuffleBlock,
  blockLayout,
  defaultBlockSize,
} from './bitshuffle';
export {
  BSHUF_COMPRESS_LZ4,
  BSHUF_COMPRESS_NONE,
  BSHUF_COMPRESS_ZSTD,
  bitshuffleFilterDecode,
  bslz4Decode,
  bslz4Encode,
} from './bslz4';
export { BSLZ4_HEADER_BYTES, type Bslz4Blocks, type Bslz4BlockTable, bslz4BlockTable } from './bslz4-table';
export { inflate } from './deflate';
export {
  chunkDecoderFor,
  decodeChunk,
  FILTER_BITSHUFFLE,
  FILTER_FLETCHER32,
  FILTER_GZIP,
  FILTER_SHUFFLE,
  type FilterSpec,
  filterName,
} from './filters';
export { fletcher32, fletcher32Decode, fletcher32Encode } from './fletcher32';
export { lz4CompressBound, lz4DecodeBlock, lz4DecodeBlockExact, lz4EncodeBlock } from './lz4';
export { shuffle, unshuffle } from './shuffle';
