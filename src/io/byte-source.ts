import { StemflowError, throwIfAborted } from '../errors';

/**
 * Random access to the bytes of one file. Readers never load a whole file: they ask for byte ranges.
 * In the browser a File (`Blob.slice`), in Node a file handle, in tests a Uint8Array.
 */
export interface ByteSource {
  /** The file name, for messages. */
  readonly name: string;
  /** Size in bytes. */
  readonly size: number;
  /**
   * Reads exactly `length` bytes at `offset`. A range past the end throws a StemflowError of kind
   * 'truncated' naming the file.
   */
  read(offset: number, length: number, signal?: AbortSignal): Promise<Uint8Array>;
  /** Reads exactly `into.byteLength` bytes at `offset` into `into` (optional; saves a copy where offered). */
  readInto?(offset: number, into: Uint8Array, signal?: AbortSignal): Promise<void>;
}

export function checkRange(source: { name: string; size: number }, offset: number, length: number): void {
  if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(length) || offset < 0 || length < 0) {
    throw new StemflowError('corrupt', `Invalid byte range ${offset}+${length}`, { file: source.name });
  }
  if (offset + length > source.size) {
    throw new StemflowError(
      'truncated',
      `The file ends at byte ${source.size} but data is expected up to byte ${offset + length}; it is probably truncated`,
      { file: source.name, offset },
    );
  }
}

/** A ByteSource over bytes already in memory. */
export function memorySource(bytes: Uint8Array, name = 'memory'): ByteSource {
  return {
    name,
    size: bytes.byteLength,
    async read(offset, length, signal) {
      throwIfAborted(signal);
      checkRange(this, offset, length);
      return bytes.subarray(offset, offset + length);
    },
  };
}

/** A ByteSource over a Blob or File (browser, worker, or Node's Blob). */
export function blobSource(blob: Blob, name = (blob as File).name ?? 'blob'): ByteSource {
  return {
    name,
    size: blob.size,
    async read(offset, length, signal) {
      throwIfAborted(signal);
      checkRange(this, offset, length);
      try {
        const buf = await blob.slice(offset, offset + length).arrayBuffer();
        throwIfAborted(signal);
        if (buf.byteLength !== length) {
          throw new StemflowError('truncated', `Read ${buf.byteLength} of ${length} bytes`, {
            file: name,
            offset,
          });
        }
        return new Uint8Array(buf);
      } catch (e) {
        if (e instanceof StemflowError) throw e;
        throw new StemflowError(
          'not-found',
          `The browser could not read the file: ${String(e)}`,
          { file: name, offset },
          { cause: e },
        );
      }
    },
  };
}
