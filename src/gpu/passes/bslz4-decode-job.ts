/**
 * The checks of a decode job's buffers and ranges (bslz4-decode.ts runs them before it records anything), and the
 * Params fields of a dispatch that does not parse ahead.
 */
import { StemflowError } from '../../errors.ts';
import { AUDIT_LAYOUT, checkDecodeParams, type ElemSize } from '../../kernels/bslz4-decode.ts';
import { checkBindable } from '../chunked-dispatch.ts';
import type { Bslz4DecodeJob } from './bslz4-decode-types.ts';

const U32_MAX = 0xffffffff;

/**
 * Params of a dispatch that parses nothing ahead (bslz4-bindings.wgsl: `list_entry0` and the `ahead_*` fields):
 * the list decode's own dispatches start from these, the parse pass and its test use them as they are.
 */
export const NO_PARSE_AHEAD = {
  list_entry0: 0,
  ahead_groups: 0,
  ahead_frames: 0,
  ahead_index_base: 0,
  ahead_slot_bytes: 0,
  ahead_list0: 0,
} as const;

/** A job's checked extents: its frame row words, compressed bytes, first frame and first index entry. */
export interface CheckedDecodeJob {
  wordsPerFrame: number;
  slotBytes: number;
  firstFrame: number;
  indexBase: number;
}

/**
 * Refuses ('invalid') a job whose parameters or buffers do not hold what it says (sizes, ranges, bindable
 * sizes), before anything is recorded.
 */
export function checkDecodeJob(device: GPUDevice, job: Bslz4DecodeJob, elemSize: ElemSize): CheckedDecodeJob {
  const { frameCount, pixels, firstFrame = 0, indexBase = 0 } = job;
  const wordsPerFrame = checkDecodeParams({ frameCount, pixels, elemSize, wordsPerFrame: job.wordsPerFrame });
  const slotBytes = job.compressedBytes ?? Math.min(job.compressed.size, U32_MAX);
  if (
    !Number.isInteger(slotBytes) ||
    slotBytes < 0 ||
    slotBytes > job.compressed.size ||
    slotBytes > U32_MAX
  ) {
    throw new StemflowError('invalid', `compressedBytes ${slotBytes} does not fit the compressed buffer.`);
  }
  if (!Number.isInteger(firstFrame) || firstFrame < 0) {
    throw new StemflowError('invalid', `firstFrame ${firstFrame} is not a frame index.`);
  }
  if (!Number.isInteger(indexBase) || indexBase < 0) {
    throw new StemflowError('invalid', `indexBase ${indexBase} is not an index entry.`);
  }
  const need = (buffer: GPUBuffer, bytes: number, what: string) => {
    if (buffer.size < bytes) {
      throw new StemflowError('invalid', `The ${what} buffer holds ${buffer.size} bytes, not ${bytes}.`);
    }
    checkBindable(device, buffer, what);
  };
  need(job.compressed, 4, 'compressed slot');
  need(job.index, Math.max(8, (indexBase + frameCount) * 8), 'index');
  need(job.flags, pixels * 4, 'pixel flags');
  need(job.decoded, Math.max(4, frameCount * wordsPerFrame * 4), 'decoded slot');
  need(job.errors, Math.max(4, (firstFrame + frameCount) * 4), 'errors');
  need(job.totals, Math.max(8, (firstFrame + frameCount) * 8), 'frame totals');
  need(job.audit, AUDIT_LAYOUT.words * 4, 'audit');
  return { wordsPerFrame, slotBytes, firstFrame, indexBase };
}

/**
 * Refuses ('invalid') a batch to parse ahead that the job's buffers cannot hold: its index entries past the index
 * buffer, compressed bytes past the compressed buffer, or more blocks than a list set (`entries`) holds.
 */
export function checkAhead(
  job: Bslz4DecodeJob,
  ahead: NonNullable<Bslz4DecodeJob['ahead']>,
  perFrame: number,
  entries: number,
): NonNullable<Bslz4DecodeJob['ahead']> {
  const { frameCount: n, indexBase, slotBytes } = ahead;
  if (
    !Number.isInteger(n) ||
    n < 1 ||
    n * perFrame > entries ||
    !Number.isInteger(indexBase) ||
    indexBase < 0 ||
    (indexBase + n) * 8 > job.index.size ||
    !Number.isInteger(slotBytes) ||
    slotBytes < 0 ||
    slotBytes > Math.min(job.compressed.size, U32_MAX)
  ) {
    throw new StemflowError(
      'invalid',
      `The batch to parse ahead (${n} frames from index entry ${indexBase}, ${slotBytes} slot bytes) does not fit the decode's buffers.`,
    );
  }
  return ahead;
}
