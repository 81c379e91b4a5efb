/**
 * The multi decode shader's global scratch (bslz4-decode.ts): 8 KiB per group of each workgroup of a dispatch
 * (a word without SCRATCH), then the pixel flags as bits from word `flagBase`. Sized by
 * bslz4-decode-memory.ts, as every memory plan counts it; grown, never shrunk, while the pass lives.
 */
import { checkBindable } from '../chunked-dispatch.ts';
import {
  type DecodeScratchOptions,
  decodeBlockScratchBytes,
  decodeFlagBytes,
} from './bslz4-decode-memory.ts';
import type { Bslz4DecodeJob } from './bslz4-decode-types.ts';
import type { DecodeVariant } from './bslz4-decode-variants.ts';

export interface DecodeScratchAt {
  buffer: GPUBuffer;
  /** The first word of the pixel flag bits. */
  flagBase: number;
}

export interface DecodeScratch {
  /** The scratch for jobs of up to `frames` frames of `pixels` pixels, grown if it is smaller. */
  ensure(
    frames: number,
    pixels: number,
    options: Omit<DecodeScratchOptions, 'maxWorkgroups'>,
  ): DecodeScratchAt;
  /**
   * Whether a job's flags must be packed into `at` again: false only where the job says its flags are unchanged
   * (`flagsPacked`) and the last job packed the same flags buffer, pixels, scratch and flag base (the load packs
   * them once, not once a batch). Records `at` as packed.
   */
  repack(job: Bslz4DecodeJob, at: DecodeScratchAt): boolean;
  destroy(): void;
}

/**
 * `retire` keeps a replaced buffer until the pass is destroyed: encoders not yet submitted may bind it.
 */
export function createDecodeScratch(
  device: GPUDevice,
  v: DecodeVariant,
  retire: (buffer: GPUBuffer) => void,
): DecodeScratch {
  let scratch: GPUBuffer | null = null;
  let packed: { flags: GPUBuffer; pixels: number; scratch: GPUBuffer; flagBase: number } | null = null;
  return {
    ensure(frames, pixels, options) {
      const blockBytes = Math.max(
        4,
        decodeBlockScratchBytes(v, frames, {
          ...options,
          maxWorkgroups: device.limits.maxComputeWorkgroupsPerDimension,
        }),
      );
      const bytes = blockBytes + decodeFlagBytes(v, pixels);
      if (!scratch || scratch.size < bytes) {
        if (scratch) retire(scratch);
        scratch = device.createBuffer({
          label: 'bslz4-decode scratch',
          size: bytes,
          usage: GPUBufferUsage.STORAGE,
        });
      }
      checkBindable(device, scratch, 'decode scratch');
      return { buffer: scratch, flagBase: blockBytes / 4 };
    },
    repack(job, at) {
      const same =
        job.flagsPacked === true &&
        packed?.flags === job.flags &&
        packed.pixels === job.pixels &&
        packed.scratch === at.buffer &&
        packed.flagBase === at.flagBase;
      packed = { flags: job.flags, pixels: job.pixels, scratch: at.buffer, flagBase: at.flagBase };
      return !same;
    },
    destroy() {
      scratch?.destroy();
      scratch = null;
      packed = null;
    },
  };
}
