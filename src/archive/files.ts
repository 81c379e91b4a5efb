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

/**
 * SHA-256 (lower-case hex) of whole buffers, in order, possibly off the main thread (Node: worker threads,
 * node-hash-pool.ts). The bytes must not change until the promise settles.
 */
export type ParallelSha256 = (parts: readonly Uint8Array[]) => Promise<string>;

/** A file hashed from disk while it is written (ArchiveTarget.hashWriting). */
export interface WritingHash {
  /** The file's first `bytes` bytes are written (and may be read back). */
  written(bytes: number): void;
  /** SHA-256 (lower-case hex) of the file's first `bytes` bytes, all written (any not yet hashed are read now). */
  digest(bytes: number): Promise<string>;
  /** Stops hashing (the write failed) and frees what it holds; no digest follows. */
  cancel(): void;
}

export interface FileSink {
  write(bytes: Uint8Array): Promise<void>;
  /** Writes the parts in order, with as few calls as the platform allows (optional; else `write` each). */
  writeParts?(parts: readonly Uint8Array[]): Promise<void>;
  close(): Promise<void>;
}

/**
 * A new archive being written. Files are created under temporary names; `publish` makes them the archive at
 * once and refuses to replace an existing one; `discard` removes every temporary.
 */
export interface ArchiveTarget {
  create(path: string): Promise<FileSink>;
  /** Hashes files' bytes off the main thread while they are written (optional; else the `Sha256Factory`). */
  hashParts?: ParallelSha256;
  /**
   * SHA-256 of a file of this target read back from disk, off the main thread, as its bytes are written
   * (optional). The converter uses it for bytes it cannot hand to `hashParts` without a copy (memory lent by the
   * GPU encoder, mapped in place): each piece is hashed while the next is written and the file is synced.
   */
  hashWriting?(path: string): WritingHash;
  publish(): Promise<void>;
  discard(): Promise<void>;
}

/** An existing archive's files, opened by relative path. */
export interface ArchiveFiles {
  open(path: string): Promise<ByteSource & { close?(): Promise<void> }>;
  /**
   * SHA-256 (lower-case hex) of a whole file, computed off the main thread (optional; else the file is read
   * and hashed with the `Sha256Factory`). `hashThreads` files are hashed at once; `onBytes` may hear the bytes
   * done as they are.
   */
  sha256?(path: string, onBytes?: (bytes: number) => void): Promise<string>;
  readonly hashThreads?: number;
}
