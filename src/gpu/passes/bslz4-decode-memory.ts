/**
 * GPU memory of the bitshuffle/LZ4 decode pass for a variant (bslz4-decode-variants.ts): its global block scratch,
 * the pixel flag bits and a list variant's sequence lists, counted by every memory plan before anything is
 * allocated (load-plan.ts, the archive's encoder and verify plans).
 */
import { StemflowError } from '../../errors.ts';
import type { ElemSize } from '../../kernels/bslz4-decode.ts';
import { listBlocks } from '../../kernels/bslz4-parse.ts';
import {
  DECODE_FRAMES_PER_DISPATCH,
  DECODE_SCRATCH_BLOCK_BYTES,
  type DecodeVariant,
  framesPerWorkgroup,
  parseDecodeVariant,
} from './bslz4-decode-variants.ts';

/**
 * Bytes the decode pass allocates for batches of up to `frames` frames: its global scratch (workgroups per
 * dispatch x blocks in flight per workgroup x 8 KiB; 4 for a multi variant without scratch, 0 for the fused
 * shader) with the multi shader's pixel flag bits (decodeFlagBytes), and a list variant's lists
 * (decodeListBytes). Memory plans count it before anything is allocated.
 */
export function decodeScratchBytes(
  variant: string | DecodeVariant,
  frames: number,
  options: DecodeScratchOptions & {
    /** Pixels and bytes of an element: a list variant's lists depend on them (blocks of a frame). */
    pixels?: number;
    elemSize?: ElemSize;
  } = {},
): number {
  const v = typeof variant === 'string' ? parseDecodeVariant(variant) : variant;
  const perDispatch = framesPerDispatch(v, options.maxFramesPerDispatch);
  return (
    decodeBlockScratchBytes(v, frames, options) +
    decodeFlagBytes(v, options.pixels) +
    decodeListBytes(v, Math.min(frames, perDispatch), options.pixels, options.elemSize)
  );
}

/**
 * Bytes of the multi shader's pixel flags as bits (a word per 32 pixels, after the blocks in its scratch: the
 * audit reads one word per 8 values instead of a flag per value); 0 for the fused shader.
 */
export function decodeFlagBytes(v: DecodeVariant, pixels?: number): number {
  if (v.shader !== 'multi') return 0;
  if (pixels === undefined) {
    throw new StemflowError(
      'invalid',
      `Decode variant '${v.name}' needs the frame's pixels to plan its flag bits.`,
    );
  }
  return 4 * Math.ceil(pixels / 32);
}

export interface DecodeScratchOptions {
  maxFramesPerDispatch?: number;
  workgroupsPerDispatch?: number;
  maxWorkgroups?: number;
}

/** Frames per dispatch: the job's, else the variant's, else DECODE_FRAMES_PER_DISPATCH. */
export function framesPerDispatch(v: DecodeVariant, maxFramesPerDispatch?: number): number {
  return Math.max(1, Math.floor(maxFramesPerDispatch ?? v.framesPerDispatch ?? DECODE_FRAMES_PER_DISPATCH));
}

/** The global scratch alone (decodeScratchBytes without the lists). */
export function decodeBlockScratchBytes(
  v: DecodeVariant,
  frames: number,
  { maxFramesPerDispatch, workgroupsPerDispatch, maxWorkgroups = Infinity }: DecodeScratchOptions = {},
): number {
  if (v.shader !== 'multi') return 0;
  if (!v.scratch) return 4;
  const perDispatch = framesPerDispatch(v, maxFramesPerDispatch);
  const groups = Math.min(
    Math.max(1, Math.floor(workgroupsPerDispatch ?? v.workgroups ?? perDispatch)),
    maxWorkgroups,
  );
  const workgroups = Math.max(
    1,
    Math.min(dispatchWorkgroups(v, Math.min(Math.max(1, Math.floor(frames)), perDispatch)), groups),
  );
  return workgroups * v.groups * DECODE_SCRATCH_BLOCK_BYTES;
}

/** Workgroups that decode a dispatch of `frames` frames, one per frame or, with `gf`, one per `groups` frames. */
export function dispatchWorkgroups(v: DecodeVariant, frames: number): number {
  return Math.ceil(frames / framesPerWorkgroup(v));
}

/**
 * Bytes of a list variant's sequence lists and block verdicts for dispatches of `frames` frames (listBlocks
 * entries a frame, listCap sequences of 8 bytes and 8 bytes of verdict each); 0 for the other variants (the
 * multi shader's list bindings are given the index buffer there: declared, never read).
 */
export function decodeListBytes(
  v: DecodeVariant,
  frames: number,
  pixels?: number,
  elemSize?: ElemSize,
): number {
  if (!v.list) return 0;
  if (pixels === undefined || elemSize === undefined) {
    throw new StemflowError(
      'invalid',
      `Decode variant '${v.name}' needs the frame's pixels and element size to plan its lists.`,
    );
  }
  const entries = Math.max(1, Math.floor(frames) * listBlocks(pixels, elemSize));
  return Math.max(16, entries * v.listCap * 8) + Math.max(16, entries * 8);
}

/** Workgroup memory of the fused shader besides the stage: the 8 KiB block, the frame histogram, max and sum. */
const FIXED_WORKGROUP_BYTES = 8192 + 4 * 257 + 12 + 4;
/**
 * Workgroup memory of the multi shader a frame besides stages and blocks: histogram, max, sum, the planes form's
 * span mark, round verdict.
 */
const MULTI_FIXED_BYTES = 4 * 257 + 12 + 4 + 4;

/**
 * Checks that a variant's stage of compressed words fits the GPU's workgroup memory beside the shader's fixed
 * workgroup arrays (per frame of a workgroup, per group, the blocks without scratch, a staged list).
 */
export function checkDecodeWorkgroupMemory(v: DecodeVariant, maxWorkgroupBytes: number): void {
  const fixedBytes =
    v.shader === 'multi'
      ? MULTI_FIXED_BYTES * framesPerWorkgroup(v) +
        4 * v.groups +
        (v.frameGroups ? 4 * v.groups + 4 : 0) +
        (v.scratch ? 4 : DECODE_SCRATCH_BLOCK_BYTES * v.groups) +
        (v.list && v.listRead === 'stage' ? 8 * v.listCap * v.groups : 8)
      : FIXED_WORKGROUP_BYTES;
  const maxStage = Math.floor((maxWorkgroupBytes - fixedBytes) / 4 / v.groups);
  if (!Number.isInteger(v.stageWords) || v.stageWords < 1 || v.stageWords > maxStage) {
    throw new StemflowError(
      'invalid',
      `A stage of ${v.stageWords} words is not within the GPU's workgroup memory (variant ${v.name}).`,
    );
  }
}
