/**
 * The passes on the committed HDF5 fixtures (test/fixtures, from scripts/make_fixtures.py): chunk bytes at the
 * h5py oracle's offsets, LZ4 blocks decoded by the codec (src/codec), bit transpose undone on the GPU, then
 * the sha256 of the decoded array and the per-frame sums (GPU virtual detector) against oracle.json.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import type { ElemSize } from '../../kernels/bitunshuffle.ts';
import { type GpuTestContext, withGpu } from '../test-harness.ts';
import { createBitunshufflePass } from './bitunshuffle.ts';
import { createVirtualDetectorPass } from './virtual-detector.ts';

/** The part of the codec's block table used here (declared locally: the codec is optional for this file). */
interface BlockTable {
  blockBytes: number;
  count: number;
  srcOffset: Uint32Array;
  srcLength: Uint32Array;
  dstOffset: Uint32Array;
  dstLength: Uint32Array;
  tail: { srcOffset: number; dstOffset: number; length: number };
}

interface Codec {
  bslz4BlockTable(chunk: Uint8Array, elemSize: number, expectedBytes?: number): BlockTable;
  lz4DecodeBlockExact(src: Uint8Array, dst: Uint8Array): void;
}
const codecModules = import.meta.glob<Codec>('../../codec/index.ts');
const loadCodec = Object.values(codecModules)[0];

const dir = join(import.meta.dirname, '../../../test/fixtures');
const oracle = JSON.parse(readFileSync(join(dir, 'oracle.json'), 'utf8'));

type Dtype = 'uint8' | 'uint16' | 'uint32';
const TYPES = { uint8: Uint8Array, uint16: Uint16Array, uint32: Uint32Array } as const;

interface Shuffled {
  bytes: Uint8Array;
  frames: number;
  frameElems: number;
  blockElems: number;
  elemSize: ElemSize;
}

/** Reads every chunk (one frame each) of `files`' datasets, LZ4-decodes it, and keeps the shuffled bytes. */
function shuffledFrames(
  codec: Codec,
  parts: { file: string; dataset: string }[],
): Shuffled & { dtype: Dtype } {
  const chunks: Uint8Array[] = [];
  let dtype: Dtype = 'uint16';
  let frameElems = 0;
  for (const { file, dataset } of parts) {
    const ds = oracle.files[file].datasets[dataset];
    dtype = ds.dtype;
    frameElems = ds.shape[1] * ds.shape[2];
    const bytes = readFileSync(join(dir, file));
    const rows = [...ds.chunk_info].sort((a, b) => a[0][0] - b[0][0]);
    for (const [, offset, size] of rows) chunks.push(bytes.subarray(offset, offset + size));
  }
  const elemSize = TYPES[dtype].BYTES_PER_ELEMENT as ElemSize;
  const frameBytes = frameElems * elemSize;
  const out = new Uint8Array(chunks.length * frameBytes);
  let blockBytes = 0;
  chunks.forEach((chunk, f) => {
    const table = codec.bslz4BlockTable(chunk, elemSize, frameBytes);
    blockBytes = table.blockBytes;
    const frame = out.subarray(f * frameBytes, (f + 1) * frameBytes);
    for (let i = 0; i < table.count; i++) {
      const src = chunk.subarray(table.srcOffset[i], table.srcOffset[i] + table.srcLength[i]);
      codec.lz4DecodeBlockExact(
        src,
        frame.subarray(table.dstOffset[i], table.dstOffset[i] + table.dstLength[i]),
      );
    }
    const { tail } = table;
    frame.set(chunk.subarray(tail.srcOffset, tail.srcOffset + tail.length), tail.dstOffset);
  });
  return {
    bytes: out,
    frames: chunks.length,
    frameElems,
    blockElems: blockBytes / elemSize,
    elemSize,
    dtype,
  };
}

async function decodeOnGpu(ctx: GpuTestContext, s: Shuffled): Promise<GPUBuffer> {
  const values = ctx.storage(s.frames * s.frameElems * 4);
  createBitunshufflePass(ctx.device, { elemSize: s.elemSize }).run({
    shuffled: ctx.upload(s.bytes),
    values,
    frameCount: s.frames,
    frameElems: s.frameElems,
    blockElems: s.blockElems,
  });
  return values;
}

async function sumsOnGpu(
  ctx: GpuTestContext,
  values: GPUBuffer,
  frames: number,
  mask: Uint32Array,
): Promise<number[]> {
  const sums = ctx.storage(frames * 8);
  createVirtualDetectorPass(ctx.device, { elemBytes: 4 }).run({
    mask: ctx.upload(mask),
    pixels: mask.length,
    sums,
    windows: [{ data: values, elemCount: frames * mask.length, firstFrame: 0 }],
  });
  return [...(await ctx.readBack(sums, BigUint64Array))].map(Number);
}

function sha256(values: Uint32Array, dtype: Dtype): string {
  const typed = TYPES[dtype].from(values);
  return createHash('sha256').update(new Uint8Array(typed.buffer)).digest('hex');
}

const DATASETS: [string, string][] = [
  ['odd_u16_33x35.h5', '/data'],
  ['latest_fixed_u16_192.h5', '/data'],
  ['many_v1_u8_32.h5', '/data'],
  ['many_fixed_u32_32.h5', '/data'],
];

describe.skipIf(!loadCodec)(
  'fixtures: codec LZ4 + GPU bitunshuffle + GPU virtual detector vs oracle.json',
  () => {
    for (const [file, dataset] of DATASETS) {
      withGpu(`${file}:${dataset}`, async (ctx) => {
        const s = shuffledFrames(await loadCodec!(), [{ file, dataset }]);
        const ds = oracle.files[file].datasets[dataset];
        const values = await decodeOnGpu(ctx, s);
        expect(sha256(await ctx.readBack(values, Uint32Array), s.dtype)).toBe(ds.sha256);
        const all = new Uint32Array(s.frameElems).fill(1);
        expect(await sumsOnGpu(ctx, values, s.frames, all)).toEqual(ds.frame_sums);
      });
    }

    withGpu('ARINA acquisition: 3 shards, pixel mask, unflagged sums', async (ctx) => {
      const acq = oracle.acquisitions.arina;
      const s = shuffledFrames(
        await loadCodec!(),
        acq.shards.map((file: string) => ({ file, dataset: acq.dataset })),
      );
      expect(s.frames).toBe(acq.frames);
      const values = await decodeOnGpu(ctx, s);
      expect(sha256(await ctx.readBack(values, Uint32Array), s.dtype)).toBe(acq.sha256);
      const mask = new Uint32Array(s.frameElems).fill(1);
      expect(await sumsOnGpu(ctx, values, s.frames, mask)).toEqual(acq.frame_sums);
      for (const i of acq.pixel_mask.flagged_indices) mask[i] = 0;
      expect(await sumsOnGpu(ctx, values, s.frames, mask)).toEqual(acq.unflagged.frame_sums);
    });
  },
);
