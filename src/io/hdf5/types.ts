import type { ByteSource } from '../byte-source';
import type { ChunkIndexKind, Layout } from './messages/data-layout';
import type { Dtype } from './messages/datatype';
import type { FilterInfo } from './messages/filter-pipeline';
import type { LinkInfo, NamedLink } from './messages/link';
import type { Superblock } from './superblock';

export type { ChunkIndexKind, Dtype, FilterInfo, LinkInfo, NamedLink, Superblock };

export interface DatasetInfo {
  /** Path as asked for (after following soft links, the object may live elsewhere). */
  readonly path: string;
  /** Object header address (relative to the base address, as stored). */
  readonly address: number;
  readonly shape: number[];
  readonly maxShape: (number | null)[];
  readonly dtype: Dtype;
  readonly layout: 'compact' | 'contiguous' | 'chunked';
  /** Chunk dims in elements (without the trailing element-size dim); null unless chunked. */
  readonly chunkShape: number[] | null;
  readonly filters: FilterInfo[];
  readonly chunkIndex: ChunkIndexKind | null;
  readonly fillValue: Uint8Array | null;
  /** Contiguous layout: absolute byte offset of the data (-1 when not yet written); undefined otherwise. */
  readonly contiguousAddress?: number;
  /** The decoded data layout message (index addresses and parameters), for chunkTable and readDataset. */
  readonly storage: Layout;
}

export interface ChunkTable {
  /** Number of chunks along each dimension (ceil(shape / chunk)). */
  grid: number[];
  /** Absolute byte offset of each chunk, linear C-order index over the grid; -1 = not allocated. */
  address: Float64Array;
  /** Stored (possibly compressed) size in bytes. */
  size: Uint32Array;
  /** Bit k set = filter k of the pipeline was skipped for this chunk. */
  filterMask: Uint32Array;
}

export type ChunkDecoder = (
  chunk: Uint8Array,
  filters: FilterInfo[],
  filterMask: number,
  expectedBytes: number,
) => Promise<Uint8Array>;

export interface Hdf5File {
  readonly source: ByteSource;
  readonly superblock: Superblock;
  /** The link at `path` (absolute, '/'-separated), not followed. */
  getLink(path: string, signal?: AbortSignal): Promise<LinkInfo>;
  listLinks(groupPath: string, signal?: AbortSignal): Promise<NamedLink[]>;
  /** Opens a dataset, following hard and soft links inside this file. */
  dataset(path: string, signal?: AbortSignal): Promise<DatasetInfo>;
  chunkTable(ds: DatasetInfo, signal?: AbortSignal): Promise<ChunkTable>;
  /** A whole (small) dataset as little-endian C-order bytes. */
  readDataset(ds: DatasetInfo, decode: ChunkDecoder, signal?: AbortSignal): Promise<Uint8Array>;
}
