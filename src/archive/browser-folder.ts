/**
 * Archive folders in the browser: a FileSystemDirectoryHandle picked with the File System Access API
 * (`showDirectoryPicker`) or the origin-private file system. Files are written as `NAME.partial` and renamed
 * when the archive is published (manifest.json last: a folder without it holds no archive); `discard`
 * removes the partial files. SHA-256 by hash-wasm (streaming, in a worker).
 */
import { createSHA256 } from 'hash-wasm';
import { StemflowError } from '../errors';
import { blobSource } from '../io/byte-source';
import { sha256OfBlob } from './blob-sha256';
import type { BrowserHashPool } from './browser-hash-pool';
import type { ArchiveFiles, ArchiveTarget, FileSink, Sha256Factory } from './files';
import { MANIFEST_NAME } from './manifest';

export const browserSha256: Sha256Factory = async () => {
  const h = await createSHA256();
  h.init();
  return {
    update: (bytes) => {
      h.update(bytes);
    },
    digest: () => h.digest('hex'),
  };
};

type MovableHandle = FileSystemFileHandle & { move?(name: string): Promise<void> };

async function folderOf(root: FileSystemDirectoryHandle, path: string, create: boolean) {
  const parts = path.split('/');
  const name = parts.pop() as string;
  let dir = root;
  for (const p of parts) dir = await dir.getDirectoryHandle(p, { create });
  return { dir, name };
}

async function hasEntry(dir: FileSystemDirectoryHandle, name: string): Promise<boolean> {
  try {
    await dir.getFileHandle(name);
    return true;
  } catch {
    return false;
  }
}

function writeError(error: unknown, path: string): StemflowError {
  const name = (error as DOMException)?.name;
  if (name === 'QuotaExceededError') {
    return new StemflowError(
      'budget',
      `The disk or storage quota is full while writing ${path}; nothing was published.`,
      {},
      { cause: error },
    );
  }
  return new StemflowError(
    'invalid',
    `Cannot write ${path}: ${(error as Error)?.message ?? error}`,
    {},
    { cause: error },
  );
}

/** A new archive in the folder `root`, which must not already hold one. */
export async function browserArchiveTarget(root: FileSystemDirectoryHandle): Promise<ArchiveTarget> {
  if (await hasEntry(root, MANIFEST_NAME)) {
    throw new StemflowError(
      'invalid',
      `The folder ${root.name} already holds an archive; an archive is never replaced.`,
    );
  }
  const written: string[] = [];
  const open = new Set<FileSystemWritableFileStream>();
  const remove = async (path: string) => {
    const { dir, name } = await folderOf(root, path, false);
    await dir.removeEntry(name).catch(() => {});
  };
  return {
    async create(path): Promise<FileSink> {
      const { dir, name } = await folderOf(root, path, true);
      if (await hasEntry(dir, name))
        throw new StemflowError('invalid', `${path} already exists in ${root.name}; it is not replaced.`);
      const handle = await dir.getFileHandle(`${name}.partial`, { create: true });
      written.push(path);
      const stream = await handle.createWritable();
      open.add(stream);
      return {
        async write(bytes) {
          try {
            await stream.write(bytes as Uint8Array<ArrayBuffer>);
          } catch (error) {
            throw writeError(error, path);
          }
        },
        async close() {
          open.delete(stream);
          try {
            await stream.close();
          } catch (error) {
            throw writeError(error, path);
          }
        },
      };
    },
    async publish() {
      if (await hasEntry(root, MANIFEST_NAME)) {
        throw new StemflowError(
          'invalid',
          `An archive appeared in ${root.name} while this one was written; it was not replaced.`,
        );
      }
      // The manifest last, so a folder with a manifest always holds every file it names.
      const order = [
        ...written.filter((p) => p !== MANIFEST_NAME),
        ...written.filter((p) => p === MANIFEST_NAME),
      ];
      for (const path of order) {
        const { dir, name } = await folderOf(root, path, false);
        const partial = (await dir.getFileHandle(`${name}.partial`)) as MovableHandle;
        if (typeof partial.move === 'function') {
          await partial.move(name);
        } else {
          // No rename in this browser: copy, then remove the partial file.
          const file = await partial.getFile();
          const target = await dir.getFileHandle(name, { create: true });
          const stream = await target.createWritable();
          await stream.write(file);
          await stream.close();
          await dir.removeEntry(`${name}.partial`);
        }
      }
    },
    async discard() {
      for (const s of open) await s.abort().catch(() => {});
      open.clear();
      for (const path of written) {
        const { dir, name } = await folderOf(root, path, false).catch(() => ({ dir: null, name: '' }));
        if (dir) await dir.removeEntry(`${name}.partial`).catch(() => {});
      }
      for (const path of written) if (path.includes('/')) await remove(path.split('/')[0]).catch(() => {});
    },
  };
}

/** The files of an archive in a picked folder; with a pool, SHA-256 in its threads. */
export function browserArchiveFiles(root: FileSystemDirectoryHandle, pool?: BrowserHashPool): ArchiveFiles {
  const fileAt = async (path: string) => {
    try {
      const { dir, name } = await folderOf(root, path, false);
      return await (await dir.getFileHandle(name)).getFile();
    } catch (error) {
      if (error instanceof StemflowError) throw error;
      throw new StemflowError(
        'not-found',
        `The archive file ${path} is missing from ${root.name}.`,
        { file: path },
        { cause: error },
      );
    }
  };
  return {
    open: async (path) => blobSource(await fileAt(path), path),
    ...(pool
      ? {
          sha256: async (path: string, onBytes?: (n: number) => void) =>
            pool.hash(await fileAt(path), path, onBytes),
          hashThreads: pool.threads,
        }
      : {}),
  };
}

/** SHA-256 of a blob in this thread (hash-wasm, 16 MiB slices): the hash pool's fallback. */
export const hashBlobHere = sha256OfBlob;

/**
 * The files of an archive chosen as a folder through `<input webkitdirectory>` or dropped: each File's
 * `webkitRelativePath` (or name) minus the top folder is its archive path.
 */
export function fileListArchiveFiles(
  files: File[],
  paths?: readonly string[],
  pool?: BrowserHashPool,
): ArchiveFiles {
  const byPath = new Map<string, File>();
  for (const [i, f] of files.entries()) {
    const rel = paths?.[i] || (f as File & { webkitRelativePath?: string }).webkitRelativePath || f.name;
    const parts = rel.split('/');
    byPath.set(parts.length > 1 ? parts.slice(1).join('/') : rel, f);
  }
  const fileAt = (path: string) => {
    const file = byPath.get(path);
    if (!file)
      throw new StemflowError('not-found', `The archive file ${path} is not among the chosen files.`, {
        file: path,
      });
    return file;
  };
  return {
    open: async (path) => blobSource(fileAt(path), path),
    ...(pool
      ? {
          sha256: (path: string, onBytes?: (n: number) => void) => pool.hash(fileAt(path), path, onBytes),
          hashThreads: pool.threads,
        }
      : {}),
  };
}
