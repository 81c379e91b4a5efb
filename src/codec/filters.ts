import { StemflowError } from '../errors';
import { bitshuffleFilterDecode } from './bslz4';
import { inflate } from './deflate';
import { fletcher32Decode } from './fletcher32';
import { unshuffle } from './shuffle';

/** One entry of an HDF5 filter pipeline message, in the order the writer applied them. */
export interface FilterSpec {
  id: number;
  cdValues: number[];
}

export const FILTER_GZIP = 1;
export const FILTER_SHUFFLE = 2;
export const FILTER_FLETCHER32 = 3;
export const FILTER_BITSHUFFLE = 32008;

const FILTER_NAMES: Record<number, string> = {
  1: 'gzip',
  2: 'shuffle',
  3: 'fletcher32',
  4: 'szip',
  5: 'nbit',
  6: 'scaleoffset',
  307: 'bzip2',
  32001: 'blosc',
  32004: 'lz4',
  32008: 'bitshuffle',
  32015: 'zstd',
};

/** A readable name for an HDF5 filter id. */
export function filterName(id: number): string {
  return FILTER_NAMES[id] ?? 'unknown';
}

/**
 * Decodes one stored HDF5 chunk: applies the inverse of each filter, last one first, skipping the filters
 * whose bit is set in `filterMask` (the writer skipped them for this chunk). `elemSize` is the dataset's
 * element size, used when a filter's cd_values lack it. The result must be exactly `expectedBytes`.
 */
export async function decodeChunk(
  chunk: Uint8Array,
  filters: readonly FilterSpec[],
  elemSize: number,
  expectedBytes: number,
  filterMask = 0,
): Promise<Uint8Array> {
  // A mask bit for a filter the dataset does not have is not a choice any writer makes: refuse the chunk
  // rather than guess (the HDF5 library reads such chunks inconsistently; found by the fuzzer, source case 1985).
  if (filters.length < 32 && filterMask >>> filters.length !== 0) {
    throw new StemflowError(
      'corrupt',
      `A chunk's filter mask (0x${(filterMask >>> 0).toString(16)}) names filters this dataset does not have (${filters.length} in its pipeline).`,
    );
  }
  const active = filters.map((_, i) => i < 32 && ((filterMask >>> i) & 1) === 0);
  let data = chunk;
  for (let i = filters.length - 1; i >= 0; i--) {
    if (!active[i]) continue;
    const { id, cdValues } = filters[i];
    // Every supported filter but fletcher32 (+4 bytes) keeps the size: its output size is known.
    let stageBytes = expectedBytes;
    for (let k = 0; k < i; k++) if (active[k] && filters[k].id === FILTER_FLETCHER32) stageBytes += 4;
    switch (id) {
      case FILTER_BITSHUFFLE:
        data = bitshuffleFilterDecode(data, cdValues, stageBytes, elemSize);
        break;
      case FILTER_GZIP:
        data = await inflate(data, stageBytes);
        break;
      case FILTER_SHUFFLE:
        data = unshuffle(data, cdValues.length > 0 ? cdValues[0] : elemSize);
        break;
      case FILTER_FLETCHER32:
        data = fletcher32Decode(data);
        break;
      default:
        throw new StemflowError(
          'unsupported',
          `The HDF5 filter ${id} (${filterName(id)}) is not supported; supported: bitshuffle/LZ4 (32008), ` +
            'gzip (1), shuffle (2), fletcher32 (3).',
        );
    }
  }
  if (data.length !== expectedBytes) {
    throw new StemflowError(
      'corrupt',
      `A chunk decodes to ${data.length} bytes where ${expectedBytes} are expected.`,
    );
  }
  return data;
}

/**
 * Adapts decodeChunk to a reader's callback that passes (chunk, filters, filterMask, expectedBytes), for a
 * dataset of `elemSize`-byte elements.
 */
export function chunkDecoderFor(
  elemSize: number,
): (
  chunk: Uint8Array,
  filters: readonly FilterSpec[],
  filterMask: number,
  expectedBytes: number,
) => Promise<Uint8Array> {
  return (chunk, filters, filterMask, expectedBytes) =>
    decodeChunk(chunk, filters, elemSize, expectedBytes, filterMask);
}
