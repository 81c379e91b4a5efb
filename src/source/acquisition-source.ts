import type { AcquisitionSummary, SourceDtype } from '../workers/acquisition-api';

/** Bytes per value of each source dtype. */
export const DTYPE_BYTES: Record<SourceDtype, number> = { uint8: 1, uint16: 2, uint32: 4 };

export type FrameArray = Uint8Array | Uint16Array | Uint32Array;

/** Where one frame's stored bytes are: the chunk holding it and the frame's place inside the decoded chunk. */
export interface FrameLocation {
  /** Index into `AcquisitionSource.files`. */
  file: number;
  /** Absolute byte offset of the stored chunk, its stored size, and the HDF5 filter mask. */
  address: number;
  size: number;
  filterMask: number;
  /** Byte offset of this frame inside the decoded chunk (0 for one frame per chunk). */
  offsetInChunk: number;
  /** Decoded size of the whole chunk in bytes. */
  chunkBytes: number;
}

/**
 * One 4D-STEM acquisition, however it is stored: scan shape, detector shape, dtype, pixel mask,
 * calibration, and exact frame reads. The UI and the GPU path talk to this, never to HDF5 directly.
 */
export interface AcquisitionSource {
  readonly summary: AcquisitionSummary;
  /** The detector pixel mask as stored (nonzero = flagged), row-major, or null when the files hold none. */
  readonly pixelMask: Uint32Array | null;
  /** Frames in scan order. */
  readonly frameCount: number;
  /** Bytes of one decoded frame. */
  readonly frameBytes: number;
  /** Where frame `index` is stored. */
  locate(index: number): FrameLocation;
  /**
   * Decodes `count` frames starting at `start` into little-endian bytes (count x frameBytes). Every value is
   * exact; a chunk that cannot be decoded throws a StemflowError naming the file and frame.
   */
  readFrames(start: number, count: number, signal?: AbortSignal): Promise<Uint8Array>;
  /**
   * Whether the GPU decoder can take the stored chunks as they are: one frame per chunk, bitshuffle/LZ4
   * (HDF5 filter 32008, LZ4) and nothing else. `reason` says why not, for the CPU fallback's message.
   */
  readonly storedCodec: { gpu: true } | { gpu: false; reason: string };
  /** Stored (compressed) bytes of each frame's chunk, in scan order. */
  storedSizes(): Uint32Array;
  /**
   * The stored chunk bytes of frames [start, start + count), back to back in `bytes` (starting at
   * `byteOffset`, for a caller that reuses one buffer), with each frame's offset in `bytes` and its size.
   */
  readStored(start: number, count: number, signal?: AbortSignal, into?: Uint8Array): Promise<StoredBatch>;
  /** Releases file handles. */
  close(): Promise<void>;
}

export interface StoredBatch {
  bytes: Uint8Array;
  offsets: Uint32Array;
  sizes: Uint32Array;
}

/** Views little-endian frame bytes as the source dtype (copying only when misaligned). */
export function viewAs(bytes: Uint8Array, dtype: SourceDtype): FrameArray {
  const size = DTYPE_BYTES[dtype];
  const aligned = bytes.byteOffset % size === 0 ? bytes : bytes.slice();
  const n = aligned.byteLength / size;
  if (dtype === 'uint8') return aligned;
  if (dtype === 'uint16') return new Uint16Array(aligned.buffer, aligned.byteOffset, n);
  return new Uint32Array(aligned.buffer, aligned.byteOffset, n);
}
