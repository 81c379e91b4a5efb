import { open } from 'node:fs/promises';
import { bslz4Decode } from '../codec/bslz4';
import { StemflowError, throwIfAborted } from '../errors';
import type { AcquisitionSource, FrameLocation, StoredBatch } from '../source/acquisition-source';
import type { AcquisitionSummary } from '../workers/acquisition-api';
import type { SyntheticAcquisition } from './synthetic';

/** Frames per shard file, as ARINA writes them (a 512 x 512 scan is 27 files, the last one partial). */
export const SHARD_FRAMES = 10_000;

/** The shard files that hold `frames` frames written by writeChunkFile at `path` (path.000001, ...). */
export function shardPaths(path: string, frames: number): string[] {
  return Array.from(
    { length: Math.max(1, Math.ceil(frames / SHARD_FRAMES)) },
    (_, k) => `${path}.${String(k + 1).padStart(6, '0')}`,
  );
}

/**
 * The synthetic acquisition as the loader meets real data: every frame's bitshuffle/LZ4 chunk stored back
 * to back in scan order in shard files of SHARD_FRAMES frames (as ARINA shards store them), read by byte range.
 * Returns each frame's offset in the shards' concatenation (and the total at the end).
 */
export async function writeChunkFile(acq: SyntheticAcquisition, path: string): Promise<Float64Array> {
  const offsets = new Float64Array(acq.frames + 1);
  const piece = new Uint8Array(64 * 1024 * 1024);
  let at = 0;
  for (const [k, file] of shardPaths(path, acq.frames).entries()) {
    const handle = await open(file, 'w');
    try {
      let used = 0;
      for (let i = k * SHARD_FRAMES; i < Math.min(acq.frames, (k + 1) * SHARD_FRAMES); i++) {
        const chunk = acq.chunks[acq.chunkOf(i)];
        if (used + chunk.length > piece.length) {
          await handle.write(piece, 0, used);
          used = 0;
        }
        piece.set(chunk, used);
        used += chunk.length;
        offsets[i] = at;
        at += chunk.length;
      }
      await handle.write(piece, 0, used);
    } finally {
      await handle.close();
    }
  }
  offsets[acq.frames] = at;
  return offsets;
}

export async function syntheticSource(
  acq: SyntheticAcquisition,
  path: string,
  offsets: Float64Array,
  /** Bytes per concurrent read of a batch's chunks (default 8 MiB). */
  readPieceBytes = 8 * 1024 * 1024,
): Promise<AcquisitionSource> {
  if (!(Number.isInteger(readPieceBytes) && readPieceBytes > 0))
    throw new StemflowError('invalid', `Bytes per read must be a positive integer, not ${readPieceBytes}.`);
  const paths = shardPaths(path, acq.frames);
  const handles = await Promise.all(paths.map((p) => open(p, 'r')));
  const [rows, cols] = acq.detector;
  const frameBytes = rows * cols * 2;
  const size = (i: number) => offsets[i + 1] - offsets[i];
  /** Offset of shard k's first byte in the concatenation (k = shards: the end). */
  const shardStart = (k: number) => offsets[Math.min(acq.frames, k * SHARD_FRAMES)];
  const summary: AcquisitionSummary = {
    name: 'synthetic',
    kind: 'arina-shards',
    files: paths.map((name, k) => ({
      name,
      size: shardStart(k + 1) - shardStart(k),
      dataset: '/entry/data/data',
      frames: Math.min(SHARD_FRAMES, acq.frames - k * SHARD_FRAMES),
    })),
    scan: acq.scan,
    scanFromMetadata: true,
    detector: acq.detector,
    dtype: 'uint16',
    frameCount: acq.frames,
    compression: 'bitshuffle/LZ4',
    chunkIndex: 'synthetic',
    compressedBytes: offsets[acq.frames],
    flaggedPixels: acq.pixelMask.reduce((n, v) => n + (v ? 1 : 0), 0),
    calibration: {},
  };
  /** Reads the concatenation's bytes [offset, offset + out.length), from the shards that hold them. */
  const readRange = async (offset: number, out: Uint8Array) => {
    let done = 0;
    let k = 0; // the shard holding byte `offset + done`, found by walking the shard starts (27 at most here)
    while (done < out.length) {
      const at = offset + done;
      while (k < paths.length - 1 && at >= shardStart(k + 1)) k++;
      const room = shardStart(k + 1) - at;
      const n = Math.min(out.length - done, room, 1 << 30);
      const { bytesRead } =
        n > 0 ? await handles[k].read(out, done, n, at - shardStart(k)) : { bytesRead: 0 };
      if (bytesRead === 0)
        throw new StemflowError('truncated', 'Unexpected end of the chunk file', { file: paths[k] });
      done += bytesRead;
    }
  };
  return {
    summary,
    pixelMask: acq.pixelMask,
    frameCount: acq.frames,
    frameBytes,
    storedCodec: { gpu: true },
    locate(index): FrameLocation {
      const k = Math.floor(index / SHARD_FRAMES);
      return {
        file: k,
        address: offsets[index] - shardStart(k),
        size: size(index),
        filterMask: 0,
        offsetInChunk: 0,
        chunkBytes: frameBytes,
      };
    },
    storedSizes() {
      const out = new Uint32Array(acq.frames);
      for (let i = 0; i < acq.frames; i++) out[i] = size(i);
      return out;
    },
    async readStored(start, count, signal, into): Promise<StoredBatch> {
      throwIfAborted(signal);
      const base = offsets[start];
      const total = offsets[start + count] - base;
      const bytes = into ? into.subarray(0, total) : new Uint8Array(total);
      // Several concurrent reads, as the HDF5 source does for its runs of chunks.
      const piece = readPieceBytes;
      const reads: Promise<void>[] = [];
      for (let at = 0; at < total; at += piece)
        reads.push(readRange(base + at, bytes.subarray(at, Math.min(total, at + piece))));
      await Promise.all(reads);
      const rel = new Uint32Array(count);
      const sizes = new Uint32Array(count);
      for (let k = 0; k < count; k++) {
        rel[k] = offsets[start + k] - base;
        sizes[k] = size(start + k);
      }
      return { bytes, offsets: rel, sizes };
    },
    async readFrames(start, count) {
      const out = new Uint8Array(count * frameBytes);
      for (let k = 0; k < count; k++)
        out.set(bslz4Decode(acq.chunks[acq.chunkOf(start + k)], 2, frameBytes), k * frameBytes);
      return out;
    },
    close: async () => {
      await Promise.all(handles.map((h) => h.close()));
    },
  };
}
