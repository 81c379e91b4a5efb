/** Dataset-level facts of an HDF5 acquisition: its parts, dtype, filters, pixel mask, GPU codec check. */
import { chunkDecoderFor } from '../codec/filters';
import { StemflowError, withErrorContext } from '../errors';
import { type ChunkTable, type DatasetInfo, type Hdf5File, openHdf5 } from '../io/hdf5';
import type { SourceDtype } from '../workers/acquisition-api';
import type { AcquisitionSource } from './acquisition-source';
import type { InputFile } from './input-file';
import type { AcquisitionPlan } from './resolve';

/** One dataset of the acquisition, indexed by our own chunk-index reader. */
export interface Part {
  input: InputFile;
  hdf5: Hdf5File;
  info: DatasetInfo;
  table: ChunkTable | null;
  /** Frames in this part and the index of its first frame in scan order. */
  frames: number;
  first: number;
  /** Leading (scan) dims of the dataset and of its chunks. */
  lead: number[];
  chunkLead: number[];
  /** Compact datasets: all bytes, decoded. */
  compact: Uint8Array | null;
}

export function sourceDtype(info: DatasetInfo, file: string): SourceDtype {
  const { class: cls, size, littleEndian } = info.dtype;
  if (cls === 'uint' && littleEndian && (size === 1 || size === 2 || size === 4)) {
    return size === 1 ? 'uint8' : size === 2 ? 'uint16' : 'uint32';
  }
  const what = `${littleEndian ? 'little' : 'big'}-endian ${cls}${size * 8}`;
  throw new StemflowError(
    'unsupported',
    `The dataset ${info.path} holds ${what} values; detector counts must be unsigned 8, 16 or 32-bit little-endian integers`,
    { file },
  );
}

export function describeFilters(info: DatasetInfo): string {
  if (info.filters.length === 0) return 'none';
  return info.filters
    .map((f) => {
      if (f.id === 32008)
        return f.cdValues[4] === 2
          ? 'bitshuffle/LZ4'
          : f.cdValues[4] === 3
            ? 'bitshuffle/zstd'
            : 'bitshuffle';
      if (f.id === 1) return 'gzip';
      if (f.id === 2) return 'shuffle';
      return f.name ?? `filter ${f.id}`;
    })
    .join(' + ');
}

export function storedBytes(part: Part): number {
  if (part.table) return part.table.size.reduce((a, b) => a + b, 0);
  return part.frames * frameBytesOf(part.info);
}

export function frameBytesOf(info: DatasetInfo): number {
  const [h, w] = info.shape.slice(-2);
  return h * w * info.dtype.size;
}

export async function readPixelMask(
  plan: AcquisitionPlan,
  detector: [number, number],
  signal?: AbortSignal,
): Promise<Uint32Array> {
  const { input, path } = plan.pixelMask!;
  try {
    const hdf5 = await openHdf5(input.bytes, signal);
    const info = await hdf5.dataset(path, signal);
    if (info.shape.length !== 2 || info.shape[0] !== detector[0] || info.shape[1] !== detector[1]) {
      throw new StemflowError(
        'mismatch',
        `The pixel mask ${path} is ${info.shape.join(' x ')} but frames are ${detector.join(' x ')}`,
      );
    }
    if (info.dtype.class === 'float' || !info.dtype.littleEndian || info.dtype.size > 4) {
      throw new StemflowError(
        'unsupported',
        `The pixel mask ${path} is not a little-endian integer array of up to 32 bits`,
      );
    }
    const bytes = await hdf5.readDataset(info, chunkDecoderFor(info.dtype.size), signal);
    const n = detector[0] * detector[1];
    const out = new Uint32Array(n);
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const size = info.dtype.size;
    for (let i = 0; i < n; i++) {
      out[i] = size === 4 ? view.getUint32(i * 4, true) : size === 2 ? view.getUint16(i * 2, true) : bytes[i];
    }
    return out;
  } catch (e) {
    throw withErrorContext(e, { file: input.name });
  }
}

/** The GPU decoder takes one-frame chunks compressed with bitshuffle/LZ4 and no other filter. */
export function gpuCodecOf(parts: Part[]): AcquisitionSource['storedCodec'] {
  for (const part of parts) {
    const { info } = part;
    if (!part.table || part.chunkLead.some((d) => d !== 1)) {
      return { gpu: false, reason: `${part.input.name}: the GPU decoder needs one chunk per frame` };
    }
    const f = info.filters;
    if (f.length !== 1 || f[0].id !== 32008 || f[0].cdValues[4] !== 2) {
      return {
        gpu: false,
        reason: `${part.input.name}: the GPU decoder takes bitshuffle/LZ4 chunks only (this is ${describeFilters(info)})`,
      };
    }
    for (let i = 0; i < part.table.filterMask.length; i++) {
      if (part.table.filterMask[i] !== 0) {
        return {
          gpu: false,
          reason: `${part.input.name}: some chunks were stored with their filter skipped`,
        };
      }
    }
  }
  return { gpu: true };
}

export function unravel(index: number, dims: number[]): number[] {
  const out = new Array<number>(dims.length);
  for (let d = dims.length - 1; d >= 0; d--) {
    out[d] = index % dims[d];
    index = Math.floor(index / dims[d]);
  }
  return out;
}
