/**
 * The GPU archive encoder's host steps (gpu-encoder-record.ts): reading a small staging buffer back, the exact
 * total of a record's per-pixel sums, and the frames the GPU decoder leaves to the CPU.
 */

import { StemflowError } from '../errors';
import { DecodeError } from '../kernels/decode-errors';
import type { AcquisitionSource } from '../source/acquisition-source';
import { align4 } from './gpu-encoder-plan';
import type { EncoderState, Slot } from './gpu-encoder-slots';

/** The first `bytes` of a MAP_READ buffer (mapped, copied out, unmapped). */
export async function readStaging(buffer: GPUBuffer, bytes: number): Promise<ArrayBuffer> {
  if (bytes === 0) return new ArrayBuffer(0);
  await buffer.mapAsync(GPUMapMode.READ, 0, align4(bytes));
  try {
    return buffer.getMappedRange(0, align4(bytes)).slice(0, bytes);
  } finally {
    buffer.unmap();
  }
}

/** Exact sum of per-pixel sums (each exact below 2^53). */
export function exactTotal(sums: Float64Array): bigint {
  let total = 0n;
  let partial = 0;
  for (let p = 0; p < sums.length; p++) {
    partial += sums[p];
    if (partial > 2 ** 52) {
      total += BigInt(partial);
      partial = 0;
    }
  }
  return total + BigInt(partial);
}

/**
 * Frames the GPU decoder did not decode: those it leaves to the CPU (UNSUPPORTED_BLOCK_SIZE) are decoded by
 * the source and written into the decoded buffer; any other verdict is a damaged source.
 */
export async function decodeOnHost(
  s: EncoderState,
  slot: Slot,
  source: AcquisitionSource,
  firstFrame: number,
  frameErrors: Uint32Array,
  signal?: AbortSignal,
): Promise<void> {
  const wordBytes = s.plan.wordsPerFrame * 4;
  for (let f = 0; f < frameErrors.length; f++) {
    const code = frameErrors[f];
    if (code === 0) continue;
    if (code !== DecodeError.UNSUPPORTED_BLOCK_SIZE) {
      const name = Object.entries(DecodeError).find(([, v]) => v === code)?.[0] ?? `code ${code}`;
      throw new StemflowError('corrupt', `Frame ${firstFrame + f} of the source does not decode (${name}).`, {
        frame: firstFrame + f,
      });
    }
    const bytes = await source.readFrames(firstFrame + f, 1, signal);
    const padded = new Uint8Array(wordBytes);
    padded.set(bytes);
    s.device.queue.writeBuffer(slot.buffers.decoded, f * wordBytes, padded);
  }
}
