/** Archive folders on disk for the Node CLI and tests. */
import { createHash } from 'node:crypto';
import { mkdir, open, rename, rm, stat } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { StemflowError } from '../errors';
import { nodeFileSource } from '../io/node-file-source';
import type { ArchiveFiles, ArchiveTarget, FileSink, Sha256 } from './files';
import type { ManifestFile } from './manifest';
import { createHashPool, type HashPool, nodeHashPool } from './node-hash-pool';

export const nodeSha256 = (): Sha256 => {
  const h = createHash('sha256');
  return {
    update: (bytes) => {
      h.update(bytes);
    },
    digest: () => h.digest('hex'),
  };
};

function diskError(error: unknown, what: string): StemflowError {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOSPC' || code === 'EDQUOT') {
    return new StemflowError(
      'budget',
      `The disk is full while writing ${what}; nothing was published.`,
      {},
      { cause: error },
    );
  }
  return new StemflowError(
    'invalid',
    `Cannot write ${what}: ${(error as Error).message}`,
    {},
    { cause: error },
  );
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * A new archive folder at `dir`: files go into a sibling `.<name>.partial-<pid>-<n>` folder and are renamed
 * into place by `publish`. An existing `dir` is refused before anything is written and again at publish.
 */
export async function nodeArchiveTarget(dir: string): Promise<ArchiveTarget> {
  const final = resolve(dir);
  if (await exists(final)) {
    throw new StemflowError(
      'invalid',
      `${dir} already exists; an archive is never replaced. Choose a new folder.`,
    );
  }
  const temp = join(dirname(final), `.${basename(final)}.partial-${process.pid}-${Date.now()}`);
  await mkdir(temp, { recursive: true });
  const open_ = new Set<FileSink>();
  const pool = nodeHashPool();
  return {
    hashParts: (parts) => pool.hashParts(parts),
    hashWriting: (path) => pool.hashGrowing(join(temp, path)),
    async create(path) {
      const full = join(temp, path);
      await mkdir(dirname(full), { recursive: true });
      const handle = await open(full, 'wx');
      const sink: FileSink = {
        async write(bytes) {
          try {
            let done = 0;
            while (done < bytes.byteLength) {
              const { bytesWritten } = await handle.write(bytes, done, bytes.byteLength - done);
              done += bytesWritten;
            }
          } catch (error) {
            throw diskError(error, path);
          }
        },
        async writeParts(parts) {
          // One writev; a short write (rare: signals, huge parts) finishes with `write`.
          let written: number;
          try {
            ({ bytesWritten: written } = await handle.writev(parts as Uint8Array[]));
          } catch (error) {
            throw diskError(error, path);
          }
          for (const part of parts) {
            if (written >= part.byteLength) written -= part.byteLength;
            else {
              await sink.write(part.subarray(written));
              written = 0;
            }
          }
        },
        async close() {
          open_.delete(sink);
          try {
            await handle.sync();
          } finally {
            await handle.close();
          }
        },
      };
      open_.add(sink);
      return sink;
    },
    async publish() {
      if (await exists(final)) {
        throw new StemflowError(
          'invalid',
          `${dir} appeared while the archive was written; it was not replaced.`,
        );
      }
      await rename(temp, final);
    },
    async discard() {
      for (const sink of open_) await sink.close().catch(() => {});
      await rm(temp, { recursive: true, force: true });
    },
  };
}

/** The files of an archive folder on disk. */
export function nodeArchiveFiles(dir: string): ArchiveFiles {
  const pool = nodeHashPool();
  return {
    async open(path) {
      return nodeFileSource(join(dir, ...path.split('/')));
    },
    sha256: (path) => pool.hashFile(join(dir, ...path.split('/'))),
    hashThreads: pool.threads,
  };
}

let sourcePool: HashPool | null = null;

/**
 * Identity (name, size, SHA-256) of source files on disk, hashed by worker threads of their own (2 to 4: a
 * quarter of the cores), so they can be hashed while they are converted or verified without holding up the
 * archive's own files. ARINA acquisitions come in many shard files (10,000 frames each), hashed in parallel.
 */
export function nodeFileIdentities(paths: readonly string[]): Promise<ManifestFile[]> {
  sourcePool ??= createHashPool(Math.min(4, Math.max(2, Math.floor(availableParallelism() / 4))));
  const pool = sourcePool;
  return Promise.all(
    paths.map(async (path) => {
      const [st, sha256] = await Promise.all([stat(path), pool.hashFile(path)]);
      return { path: basename(path), size: st.size, sha256 };
    }),
  );
}
