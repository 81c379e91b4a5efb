/**
 * What `stemflow bench convert` (bench-convert.ts) compares the conversion with and checks it against: the source
 * files hashed on the main thread first (`--sources before`), lent shards hashed only once written
 * (`--hash-at-end`), the host's own cost of writing one shard, and frames decoded by the CPU twin.
 */
import { createReadStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { viewValues } from '../archive/convert';
import type { ArchiveTarget } from '../archive/files';
import type { ManifestFile } from '../archive/manifest';
import { nodeSha256 } from '../archive/node-folder';
import type { openArchive } from '../archive/reader';
import type { AcquisitionSource } from '../source/acquisition-source';

/** SHA-256 and size of files, streamed and hashed on this thread (the CLI's way before the thirteenth session). */
export async function identitiesHere(paths: string[]): Promise<ManifestFile[]> {
  return Promise.all(
    paths.map(async (path) => {
      const h = nodeSha256();
      for await (const chunk of createReadStream(path, { highWaterMark: 8 << 20 }))
        h.update(chunk as Uint8Array);
      return { path: basename(path), size: (await stat(path)).size, sha256: h.digest() };
    }),
  );
}

/** The target with its lent shards' hashes started only once a shard is fully written (`--hash-at-end`). */
export function hashAtEnd(target: ArchiveTarget, atEnd = false): ArchiveTarget {
  const hashWriting = target.hashWriting;
  if (!atEnd || !hashWriting) return target;
  return { ...target, hashWriting: (path) => ({ ...hashWriting(path), written: () => {} }) };
}

export async function spotCheck(
  acquisition: Awaited<ReturnType<typeof openArchive>>['acquisitions'][number],
  source: AcquisitionSource,
) {
  const n = source.frameCount;
  const frames = [...new Set([0, 1, Math.floor(n / 2), n - 1])];
  const out = [];
  for (const frame of frames) {
    const decoded = await acquisition.readFrames(frame, 1);
    const expected = viewValues(await source.readFrames(frame, 1), 'uint16');
    out.push({
      frame,
      exact: decoded.length === expected.length && decoded.every((v, i) => v === expected[i]),
    });
  }
  return out;
}

/** What writing one shard costs on this host: hashing it, writing it, syncing it (as node-folder.ts does). */
export async function hostReference(dir: string, bytes: number) {
  const data = new Uint8Array(bytes);
  for (let i = 0; i < bytes; i += 4096) data[i] = i & 255;
  let t = performance.now();
  const h = nodeSha256();
  h.update(data);
  h.digest();
  const sha256Ms = performance.now() - t;
  const handle = await open(join(dir, 'reference.bin'), 'w');
  try {
    t = performance.now();
    await handle.write(data, 0, bytes);
    const writeMs = performance.now() - t;
    t = performance.now();
    await handle.sync();
    return { bytes, sha256Ms, writeMs, fsyncMs: performance.now() - t };
  } finally {
    await handle.close();
  }
}
