/**
 * Writing one archive file for the converter (convert.ts): hashed on the main thread, alongside the write in
 * worker threads, or from the written file.
 */
import type { ArchiveTarget, ParallelSha256, Sha256Factory } from './files';
import type { ManifestFile } from './manifest';

/**
 * Writes one file and hashes its bytes: on this thread with `hash`, alongside the write with `hashParts`, or,
 * with `hashWritten`, from the file once its bytes are written (while it is synced). `onWritten` runs when the
 * parts are no longer needed.
 */
export async function writeFile(
  target: ArchiveTarget,
  path: string,
  parts: Uint8Array[],
  hash: Sha256Factory,
  hashParts?: ParallelSha256,
  {
    hashWritten,
    onWritten,
  }: { hashWritten?: (path: string) => Promise<string>; onWritten?: () => void } = {},
): Promise<ManifestFile> {
  const size = parts.reduce((n, p) => n + p.byteLength, 0);
  const sink = await target.create(path);
  if (hashWritten) {
    let digest: Promise<string>;
    try {
      if (sink.writeParts) await sink.writeParts(parts);
      else for (const part of parts) await sink.write(part);
      onWritten?.();
      digest = hashWritten(path);
      digest.catch(() => undefined); // awaited below, unless closing fails first
    } finally {
      await sink.close();
    }
    return { path, size, sha256: await digest };
  }
  if (hashParts) {
    const digest = hashParts(parts);
    digest.catch(() => undefined); // awaited below, unless the write fails first
    try {
      if (sink.writeParts) await sink.writeParts(parts);
      else for (const part of parts) await sink.write(part);
    } finally {
      await sink.close();
    }
    onWritten?.();
    return { path, size, sha256: await digest };
  }
  const h = await hash();
  try {
    for (const part of parts) {
      h.update(part);
      await sink.write(part);
    }
  } finally {
    await sink.close();
  }
  onWritten?.();
  return { path, size, sha256: h.digest() };
}
