import { open } from 'node:fs/promises';
import { bslz4Decode } from '../codec/bslz4';
import { StemflowError, throwIfAborted } from '../errors';
import type { AcquisitionSource, FrameLocation, StoredBatch } from '../source/acquisition-source';
import type { AcquisitionSummary } from '../workers/acquisition-api';
import type { SyntheticAcquisition } from './synthetic';

/**
 * The synthetic acquisition as the loader meets real data: every frame's bitshuffle/LZ4 chunk stored back
 * to back in scan order in one file on disk (as ARINA shards store them), read by byte range.
 */
export async function writeChunkFile(acq: SyntheticAcquisition, path: string): Promise<Float64Array> {
  const offsets = new Float64Array(acq.frames + 1);
  const handle = await open(path, 'w');
  try {
    const piece = new Uint8Array(64 * 1024 * 1024);
    let used = 0;
    let at = 0;
    for (let i = 0; i < acq.frames; i++) {
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
    offsets[acq.frames] = at;
    await handle.write(piece, 0, used);
  } finally {
    await handle.close();
  }
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
  const handle = await open(path, 'r');
  const [rows, cols] = acq.detector;
  const frameBytes = rows * cols * 2;
  const size = (i: number) => offsets[i + 1] - offsets[i];
  const summary: AcquisitionSummary = {
    name: 'synthetic',
    kind: 'arina-shards',
    files: [{ name: path, size: offsets[acq.frames], dataset: '/entry/data/data', frames: acq.frames }],
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
  const readRange = async (offset: number, out: Uint8Array) => {
    let done = 0;
    while (done < out.length) {
      const { bytesRead } = await handle.read(out, done, Math.min(out.length - done, 1 << 30), offset + done);
      if (bytesRead === 0)
        throw new StemflowError('truncated', 'Unexpected end of the chunk file', { file: path });
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
      return {
        file: 0,
        address: offsets[index],
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
    close: () => handle.close(),
  };
}
