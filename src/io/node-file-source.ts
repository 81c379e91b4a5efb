import { open } from 'node:fs/promises';
import { basename } from 'node:path';
import { StemflowError, throwIfAborted } from '../errors';
import { type ByteSource, checkRange } from './byte-source';

/** A ByteSource over a file on disk (Node only: the CLI and tests). Call `close()` when done. */
export interface NodeFileSource extends ByteSource {
  readonly path: string;
  close(): Promise<void>;
}

export async function nodeFileSource(path: string): Promise<NodeFileSource> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, 'r');
  } catch (e) {
    throw new StemflowError(
      'not-found',
      `Cannot open ${path}: ${(e as Error).message}`,
      { file: basename(path) },
      { cause: e },
    );
  }
  const { size } = await handle.stat();
  let closing: Promise<void> | undefined;
  const source: NodeFileSource = {
    name: basename(path),
    path,
    size,
    async read(offset, length, signal) {
      throwIfAborted(signal);
      checkRange(source, offset, length);
      const out = new Uint8Array(length);
      await source.readInto?.(offset, out);
      return out;
    },
    async readInto(offset, into, signal) {
      throwIfAborted(signal);
      const length = into.byteLength;
      checkRange(source, offset, length);
      let done = 0;
      while (done < length) {
        const { bytesRead } = await handle.read(into, done, length - done, offset + done);
        if (bytesRead === 0)
          throw new StemflowError('truncated', 'Unexpected end of file', {
            file: source.name,
            offset: offset + done,
          });
        done += bytesRead;
      }
    },
    close: () => (closing ??= handle.close()),
  };
  return source;
}
