/**
 * Record shard files (`*.tans`): one record's lanes. Little-endian u32 words:
 *   0 magic 0x41544653 ("SFTA"), 1 version (1), 2 acquisition index, 3 record index, 4 frames,
 *   5 lanes per frame, 6 data words, 7 reserved (0), then (lanes + 1) lane offsets in words from the start
 *   of the data (first 0, last = data words, non-decreasing), then the data words.
 * docs/archive-format.md is the specification.
 */
import { StemflowError } from '../errors';
import { type ArchiveDtype, type LaneGeometry, rawLaneWords, sliceRange } from './lanes';

export const SHARD_MAGIC = 0x41544653;
export const SHARD_VERSION = 1;
export const SHARD_HEADER_WORDS = 8;

export interface ShardHeader {
  acquisition: number;
  record: number;
  frames: number;
  lanesPerFrame: number;
  dataWords: number;
}

export function shardBytes(frames: number, lanesPerFrame: number, dataWords: number): number {
  return 4 * (SHARD_HEADER_WORDS + frames * lanesPerFrame + 1 + dataWords);
}

/** The header and offset table of a shard whose data words follow. */
export function encodeShardHead(h: ShardHeader, offsets: Uint32Array): Uint8Array {
  const lanes = h.frames * h.lanesPerFrame;
  if (offsets.length !== lanes + 1 || offsets[lanes] !== h.dataWords) {
    throw new StemflowError('invalid', 'Lane offsets do not match the shard header.');
  }
  const words = new Uint32Array(SHARD_HEADER_WORDS + lanes + 1);
  words.set([SHARD_MAGIC, SHARD_VERSION, h.acquisition, h.record, h.frames, h.lanesPerFrame, h.dataWords, 0]);
  words.set(offsets, SHARD_HEADER_WORDS);
  return new Uint8Array(words.buffer);
}

/** Bytes of a shard's header and offset table. */
export function shardHeadBytes(frames: number, lanesPerFrame: number): number {
  return 4 * (SHARD_HEADER_WORDS + frames * lanesPerFrame + 1);
}

/**
 * Checks a shard's header and offset table (`head`: its first shardHeadBytes bytes) against the manifest and
 * the file's size; every lane's range must be inside the data and no longer than its raw size. Returns the
 * offsets (a copy) and the data words' count.
 */
export function parseShardHead(
  head: Uint8Array,
  fileSize: number,
  expect: {
    acquisition: number;
    record: number;
    frames: number;
    dtype: ArchiveDtype;
    geometry: LaneGeometry;
  },
  name: string,
): { offsets: Uint32Array; dataWords: number } {
  const { geometry: g } = expect;
  if (head.byteLength < 4 * SHARD_HEADER_WORDS || head.byteLength % 4 !== 0) {
    throw new StemflowError('truncated', `${name}: ${head.byteLength} bytes is not a record shard.`, {
      file: name,
    });
  }
  const words = new Uint32Array(head.slice().buffer);
  const [magic, version, acquisition, record, frames, lanesPerFrame, dataWords] = words;
  if (magic !== SHARD_MAGIC)
    throw new StemflowError('corrupt', `${name} is not a record shard.`, { file: name });
  if (version !== SHARD_VERSION) {
    throw new StemflowError(
      'unsupported',
      `${name} is shard version ${version}; this reader knows version 1.`,
      {
        file: name,
      },
    );
  }
  if (
    acquisition !== expect.acquisition ||
    record !== expect.record ||
    frames !== expect.frames ||
    lanesPerFrame !== g.slices
  ) {
    throw new StemflowError(
      'mismatch',
      `${name} holds acquisition ${acquisition} record ${record} (${frames} frames x ${lanesPerFrame} lanes); the manifest says ${expect.acquisition}/${expect.record} (${expect.frames} x ${g.slices}).`,
      { file: name },
    );
  }
  const lanes = frames * lanesPerFrame;
  if (
    fileSize !== shardBytes(frames, lanesPerFrame, dataWords) ||
    head.byteLength !== shardHeadBytes(frames, lanesPerFrame)
  ) {
    throw new StemflowError(
      'truncated',
      `${name} has ${fileSize} bytes; its header needs ${shardBytes(frames, lanesPerFrame, dataWords)}.`,
      { file: name },
    );
  }
  const offsets = words.subarray(SHARD_HEADER_WORDS, SHARD_HEADER_WORDS + lanes + 1);
  if (offsets[0] !== 0 || offsets[lanes] !== dataWords) {
    throw new StemflowError('corrupt', `${name}: the lane offsets do not span the data.`, { file: name });
  }
  const raw = Array.from({ length: g.slices }, (_, s) => rawLaneWords(sliceRange(g, s).count, expect.dtype));
  for (let lane = 0; lane < lanes; lane++) {
    if (offsets[lane + 1] < offsets[lane] || offsets[lane + 1] - offsets[lane] > raw[lane % g.slices]) {
      throw new StemflowError('corrupt', `${name}: lane ${lane} has an impossible word range.`, {
        file: name,
        frame: Math.floor(lane / g.slices),
      });
    }
  }
  return { offsets, dataWords };
}
