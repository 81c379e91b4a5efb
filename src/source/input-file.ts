import type { ByteSource } from '../io/byte-source';
import type { MetadataOpener } from './metadata';

/** A file the user gave us: random-access bytes for our reader, and an h5wasm opener for metadata. */
export interface InputFile {
  readonly name: string;
  readonly size: number;
  readonly bytes: ByteSource;
  readonly openMetadata: MetadataOpener;
  /** Releases what the input holds (file handles, mounts). */
  close?(): Promise<void>;
}
