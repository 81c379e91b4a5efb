/** HDF5 reader: superblock, groups and links, dataset metadata and chunk indexes (byte offsets of chunks). */
export { lookup3 } from './checksum';
export { openHdf5 } from './hdf5-file';
export type {
  ChunkDecoder,
  ChunkIndexKind,
  ChunkTable,
  DatasetInfo,
  Dtype,
  FilterInfo,
  Hdf5File,
  LinkInfo,
  NamedLink,
  Superblock,
} from './types';
