/**
 * Where archives are written and read, without naming a platform: the Node CLI passes a folder on disk
 * (node-folder.ts), the app a folder picked with the File System Access API.
 */
import type { ByteSource } from '../io/byte-source';

/** Incremental SHA-256 (node:crypto in Node, hash-wasm or WebCrypto in a browser). */
export interface Sha256 {
  update(bytes: Uint8Array): void;
  /** Lower-case hex. */
  digest(): string;
}
export type Sha256Factory = () => Sha256 | Promise<Sha256>;

export interface FileSink {
  write(bytes: Uint8Array): Promise<void>;
  close(): Promise<void>;
}

/**
 * A new archive being written. Files are created under temporary names; `publish` makes them the archive at
 * once and refuses to replace an existing one; `discard` removes every temporary.
 */
export interface ArchiveTarget {
  create(path: string): Promise<FileSink>;
  publish(): Promise<void>;
  discard(): Promise<void>;
}

/** An existing archive's files, opened by relative path. */
export interface ArchiveFiles {
  open(path: string): Promise<ByteSource & { close?(): Promise<void> }>;
}
