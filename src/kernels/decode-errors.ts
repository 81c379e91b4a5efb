/**
 * Per-frame verdicts of the bitshuffle/LZ4 decode pass (src/shaders/bslz4-decode.wgsl) and its CPU twin
 * (src/kernels/bslz4-decode.ts). Both walk a chunk in the same order and stop at the first fault, so they give
 * the same code for the same bytes. 0 means the frame decoded exactly; a failed frame's decoded words are zero
 * and it adds nothing to the frame totals or the audit.
 */

export const DECODE_OK = 0;

export const DecodeError = {
  /** The frame's index entry (byte offset, byte size) reaches outside the compressed slot. */
  INDEX_OUT_OF_SLOT: 1,
  /** The chunk is shorter than its 12-byte header. */
  HEADER_TRUNCATED: 2,
  /** The header's uncompressed size is not pixels x element size. */
  SIZE_MISMATCH: 3,
  /** The header's block size is 0 or not a multiple of 8 elements. */
  BAD_BLOCK_SIZE: 4,
  /** The block size exceeds 8192 bytes (valid, but not decoded on the GPU: the host decodes it on the CPU). */
  UNSUPPORTED_BLOCK_SIZE: 5,
  /** The chunk ends before a block's 4-byte length, or a block's length runs past the end of the chunk. */
  BLOCK_TRUNCATED: 6,
  /** A block declares a compressed length of 0. */
  BLOCK_EMPTY: 7,
  /** An LZ4 block ends inside a sequence (token, length bytes, literals or match offset). */
  LZ4_TRUNCATED: 8,
  /** An LZ4 literal run or match writes past the block's decoded size. */
  LZ4_OVERRUN: 9,
  /** An LZ4 match has offset 0 or points before the start of the block's output. */
  LZ4_BAD_OFFSET: 10,
  /** An LZ4 block decodes to fewer bytes than its block size. */
  LZ4_SHORT: 11,
  /** The chunk ends before its raw tail of (pixels mod 8) elements. */
  TAIL_TRUNCATED: 12,
  /** The chunk has bytes after its last block and raw tail. */
  TRAILING_BYTES: 13,
} as const;

export type DecodeErrorCode = (typeof DecodeError)[keyof typeof DecodeError];

const MESSAGES: Record<number, string> = {
  [DECODE_OK]: 'The frame decoded exactly.',
  [DecodeError.INDEX_OUT_OF_SLOT]:
    "The frame's chunk position lies outside the bytes read for its batch (a reader or index fault).",
  [DecodeError.HEADER_TRUNCATED]:
    'The compressed frame is shorter than its 12-byte bitshuffle/LZ4 header: the file is probably truncated.',
  [DecodeError.SIZE_MISMATCH]:
    "The compressed frame declares a decoded size different from the detector's pixels times the value size: it is corrupt or belongs to another dataset.",
  [DecodeError.BAD_BLOCK_SIZE]:
    'The compressed frame declares a bitshuffle block size of 0 or not a multiple of 8 values: it is corrupt.',
  [DecodeError.UNSUPPORTED_BLOCK_SIZE]:
    'The frame uses bitshuffle blocks larger than 8192 bytes, which the GPU decoder does not handle; it is decoded on the CPU instead.',
  [DecodeError.BLOCK_TRUNCATED]:
    'The compressed frame ends before one of its blocks: the file is probably truncated.',
  [DecodeError.BLOCK_EMPTY]: 'The compressed frame contains a block of length 0: it is corrupt.',
  [DecodeError.LZ4_TRUNCATED]:
    'An LZ4 block of the frame ends in the middle of a sequence: the data is corrupt.',
  [DecodeError.LZ4_OVERRUN]:
    'An LZ4 block of the frame decodes to more bytes than its block holds: the data is corrupt.',
  [DecodeError.LZ4_BAD_OFFSET]:
    'An LZ4 block of the frame refers back to data before its start: the data is corrupt.',
  [DecodeError.LZ4_SHORT]:
    'An LZ4 block of the frame decodes to fewer bytes than its block holds: the data is corrupt.',
  [DecodeError.TAIL_TRUNCATED]:
    'The compressed frame ends before its last few uncompressed values: the file is probably truncated.',
  [DecodeError.TRAILING_BYTES]: 'The compressed frame has unexpected bytes after its data: it is corrupt.',
};

/** A sentence for users describing `code` (an unknown code is reported as such). */
export function decodeErrorMessage(code: number): string {
  return MESSAGES[code] ?? `The frame failed to decode with an unknown error code ${code}.`;
}

/** The name of `code` (e.g. 'LZ4_BAD_OFFSET'), or 'OK'. */
export function decodeErrorName(code: number): string {
  if (code === DECODE_OK) return 'OK';
  const entry = Object.entries(DecodeError).find(([, v]) => v === code);
  return entry ? entry[0] : `UNKNOWN_${code}`;
}
