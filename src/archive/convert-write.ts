/**
 * Writing the converter's files (convert.ts): one file hashed on the main thread, alongside the write in worker
 * threads, or from the file as its pieces are written (`writeFile`); and the shards in flight while the next
 * records are encoded, bounded (`ShardWrites`).
 */
import type { ArchiveTarget, ParallelSha256, Sha256Factory, WritingHash } from './files';
import type { ManifestFile } from './manifest';

/** Files being written, hashed or synced at once, per shard whose bytes may be held (`writesInFlight`). */
export const FILES_PER_WRITE = 4;

/** When a record reached the converter and what became of its shard (ms from the conversion's start). */
export interface RecordTiming {
  /** How long the converter waited for the encoder, and for shards being written + hashed. */
  encodeWaitMs: number;
  writeWaitMs: number;
  /** ms from the conversion's start; NaN until then. */
  encodedMs: number;
  writtenMs: number;
  syncedMs: number;
  hashedMs: number;
}

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

/**
 * The converter's shards being written, hashed and synced while the next records are encoded (convertArchive).
 * At most `writesInFlight` shards hold their record's bytes (lent words are given back once written, their file
 * hashed from disk; other bytes are held until hashed too), and at most FILES_PER_WRITE x as many files are still
 * being hashed or synced. Manifest entries and progress come out in record order.
 */
export class ShardWrites {
  /** Manifest entries of the shards done, in record order. */
  readonly files: ManifestFile[] = [];
  /** Time spent waiting for writes (summed). */
  waitMs = 0;
  /** Shards being written, hashed or synced, oldest first; each settles to its manifest entry. */
  private readonly writing: { done: Promise<ManifestFile>; report: () => void }[] = [];
  /** Shards whose record's bytes are still needed (not yet written, or not yet hashed), oldest first. */
  private readonly holding: Promise<void>[] = [];

  constructor(
    private readonly target: ArchiveTarget,
    private readonly hash: Sha256Factory,
    /** Hashing off the main thread (the target's), or none: one file after another, hashed here. */
    readonly hashParts: ParallelSha256 | undefined,
    private readonly writesInFlight: number,
    private readonly t0: number,
  ) {}

  /**
   * Starts writing a record's shard. `lent` words (not shareable with a hashing thread) are hashed from the file
   * and given back (`recycle`) once written; other words are given back once written and hashed.
   */
  start(
    path: string,
    parts: Uint8Array[],
    { lent, recycle }: { lent: boolean; recycle: () => void },
    timing: RecordTiming,
    report: () => void,
  ): void {
    let recycled = false;
    const giveBack = () => {
      if (recycled) return;
      recycled = true;
      recycle();
    };
    const fromFile = lent && this.hashParts ? this.target.hashWriting : undefined;
    let markWritten = () => {};
    const wroteBytes = new Promise<void>((resolve) => {
      markWritten = resolve;
    });
    const done = writeFile(this.target, path, parts, this.hash, this.hashParts, {
      hashWriting: fromFile,
      onStage: (stage) => {
        timing[`${stage}Ms`] = performance.now() - this.t0;
      },
      onWritten: () => {
        if (lent) giveBack();
        if (fromFile) markWritten(); // its bytes are no longer needed: it is hashed from the file
      },
    }).finally(giveBack);
    done.catch(() => undefined); // awaited in order by finishOldest, or settled when a failure is cleaned up
    // The record's bytes are held until written (hashed from the file), else until hashed too; a failure before
    // that rejects here.
    const held = Promise.race([wroteBytes, done.then(() => undefined)]);
    held.catch(() => undefined);
    this.writing.push({ done, report });
    this.holding.push(held);
  }

  /**
   * Waits until the shards in flight are within bounds (the wait is added to `timing.writeWaitMs`): files being
   * hashed and synced once their bytes are written (lent shards) do not hold up the next records.
   */
  async bound(timing: RecordTiming): Promise<void> {
    while (this.holding.length > this.writesInFlight) {
      const t = performance.now();
      await this.holding.shift();
      this.waited(timing, performance.now() - t);
    }
    while (this.writing.length > FILES_PER_WRITE * this.writesInFlight) await this.finishOldest(timing);
  }

  /** Waits for every shard (counted in `waitMs`, not against a record); manifest entries in record order. */
  async drain(): Promise<void> {
    while (this.writing.length > 0) await this.finishOldest();
  }

  /** Every shard settled, whatever its outcome (before a failed conversion removes its files). */
  settle(): Promise<unknown> {
    return Promise.allSettled(this.writing.map((w) => w.done));
  }

  private waited(timing: RecordTiming | undefined, ms: number) {
    this.waitMs += ms;
    if (timing) timing.writeWaitMs += ms;
  }

  /** Waits for the oldest shard; its manifest entry and progress (record order). */
  private async finishOldest(timing?: RecordTiming): Promise<void> {
    const job = this.writing.shift();
    if (!job) return;
    const t = performance.now();
    this.files.push(await job.done);
    this.waited(timing, performance.now() - t);
    job.report();
  }
}
