/**
 * Checks and failure reports of the GPU load (gpu-load.ts): the block-size check before any allocation, the
 * per-frame decode verdicts turned into a typed error, and a lost device reported as itself.
 */
import { StemflowError } from '../errors.ts';
import type { GpuContext } from '../gpu/device.ts';
import { decodeErrorMessage } from '../kernels/decode-errors.ts';
import type { AcquisitionSource } from '../source/acquisition-source.ts';

/**
 * A lost device surfaces first as a rejected mapAsync or an empty readback; report the loss itself (a
 * StemflowError of kind 'device' with the driver's reason), waiting briefly for the loss to be delivered.
 */
export async function explainFailure(ctx: GpuContext, e: unknown): Promise<unknown> {
  if (e instanceof StemflowError && e.kind !== 'corrupt') return e;
  const failure =
    ctx.failure() ?? (await Promise.race([ctx.lost, new Promise<undefined>((r) => setTimeout(r, 200))]));
  if (failure && ctx.failure()) return ctx.failure();
  return e;
}

/** The GPU decodes bitshuffle blocks of up to 8192 bytes; larger (non-default) blocks go to the CPU path. */
export async function checkBlockSize(
  source: AcquisitionSource,
  elemSize: number,
  signal?: AbortSignal,
): Promise<void> {
  if (source.frameCount === 0) return;
  const first = await source.readStored(0, 1, signal);
  if (first.bytes.byteLength < 12) return; // the decoder reports the truncated frame itself
  const blockBytes = new DataView(first.bytes.buffer, first.bytes.byteOffset).getUint32(8, false);
  if (blockBytes > 8192) {
    throw new StemflowError(
      'unsupported',
      `These frames use bitshuffle blocks of ${blockBytes / elemSize} values (${blockBytes} bytes); the GPU decoder handles up to 8192 bytes, so they are decoded on the CPU`,
    );
  }
}

export function decodeFailure(source: AcquisitionSource, errors: Uint32Array): StemflowError {
  const failed: number[] = [];
  for (let f = 0; f < errors.length; f++) if (errors[f] !== 0) failed.push(f);
  const first = failed[0];
  const loc = source.locate(first);
  const file = source.summary.files[loc.file]?.name;
  const more =
    failed.length > 1
      ? ` ${failed.length} frames failed in all (first: ${failed.slice(0, 8).join(', ')}).`
      : '';
  return new StemflowError('corrupt', `${decodeErrorMessage(errors[first])}${more}`, { file, frame: first });
}
