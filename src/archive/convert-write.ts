/**
 * Writing one archive file for the converter (convert.ts): hashed on the main thread, alongside the write in
 * worker threads, or from the written file.
 */
import type { ArchiveTarget, ParallelSha256, Sha256Factory, WritingHash } from './files';
import type { ManifestFile } from './manifest';

/** A file's bytes written (not yet synced), the file synced and closed, its SHA-256 known. */
export type FileStage = 'written' | 'synced' | 'hashed';

/** Bytes a file hashed from disk (`hashWriting`) is written in at a time, each hashed while the next is written. */
export const HASH_PIECE_BYTES = 8 * 2 ** 20;

/** The parts in order, cut into groups of at most `bytes` bytes (views, no copies). */
export function pieces(parts: readonly Uint8Array[], bytes: number): Uint8Array[][] {
  const groups: Uint8Array[][] = [];
  let group: Uint8Array[] = [];
  let room = bytes;
  for (const part of parts) {
    for (let at = 0; at < part.byteLength; ) {
      const n = Math.min(room, part.byteLength - at);
      group.push(part.subarray(at, at + n));
      at += n;
      room -= n;
      if (room === 0) {
        groups.push(group);
        group = [];
        room = bytes;
      }
    }
  }
  if (group.length > 0) groups.push(group);
  return groups;
}

/**
 * Writes one file and hashes its bytes: on this thread with `hash`, alongside the write with `hashParts`, or,
 * with `hashWriting`, from the file as its pieces are written (and while it is synced). `onWritten` runs when the
 * parts are no longer needed; `onStage` is told when the bytes are written, the file synced and its hash known
 * (timings).
 */
export async function writeFile(
  target: ArchiveTarget,
  path: string,
  parts: Uint8Array[],
  hash: Sha256Factory,
  hashParts?: ParallelSha256,
  {
    hashWriting,
    onWritten,
    onStage,
  }: {
    hashWriting?: (path: string) => WritingHash;
    onWritten?: () => void;
    onStage?: (stage: FileStage) => void;
  } = {},
): Promise<ManifestFile> {
  const size = parts.reduce((n, p) => n + p.byteLength, 0);
  const sink = await target.create(path);
  const hashed = (digest: Promise<string>) => {
    digest.then(() => onStage?.('hashed')).catch(() => undefined); // awaited below, unless a write fails first
    return digest;
  };
  if (hashWriting) {
    let digest: Promise<string> | undefined;
    const hashing = hashWriting(path);
    try {
      let done = 0;
      for (const group of pieces(parts, HASH_PIECE_BYTES)) {
        if (sink.writeParts) await sink.writeParts(group);
        else for (const part of group) await sink.write(part);
        done += group.reduce((n, p) => n + p.byteLength, 0);
        hashing.written(done);
      }
      onStage?.('written');
      onWritten?.();
      digest = hashed(hashing.digest(size));
    } finally {
      if (!digest) hashing.cancel();
      await sink.close();
    }
    onStage?.('synced');
    return { path, size, sha256: await digest };
  }
  if (hashParts) {
    const digest = hashed(hashParts(parts));
    try {
      if (sink.writeParts) await sink.writeParts(parts);
      else for (const part of parts) await sink.write(part);
      onStage?.('written');
    } finally {
      await sink.close();
    }
    onStage?.('synced');
    onWritten?.();
    return { path, size, sha256: await digest };
  }
  const h = await hash();
  try {
    for (const part of parts) {
      h.update(part);
      await sink.write(part);
    }
    onStage?.('written');
  } finally {
    await sink.close();
  }
  onStage?.('synced');
  onWritten?.();
  onStage?.('hashed');
  return { path, size, sha256: h.digest() };
}
