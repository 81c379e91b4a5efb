import { createHash } from 'node:crypto';
import { open, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isStemflowError, StemflowError } from '../errors';
import { fixture, loadOracle } from '../testing/fixtures';
import {
  type CodecParams,
  type ConvertProgress,
  convertArchive,
  cpuRecordEncoder,
  FILES_PER_WRITE,
  type RecordEncoder,
} from './convert';
import { HASH_PIECE_BYTES, pieces, writeFile as writeArchiveFile } from './convert-write';
import type { ArchiveTarget } from './files';
import type { ManifestFile } from './manifest';
import { nodeArchiveFiles, nodeArchiveTarget, nodeSha256 } from './node-folder';
import { createHashPool } from './node-hash-pool';
import { openArchive } from './reader';
import { openSource, tempDir } from './testing';

const arina = loadOracle().acquisitions.arina;
const arinaPaths = [arina.master, ...arina.shards].map(fixture);
const small: Partial<CodecParams> = { recordFrames: 7, lanesPerFrame: 3, classes: 8, blockFrames: 3 };
const ABC_SHA256 = 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad';
const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

async function convertWith(
  writesInFlight: number,
  wrap: (t: ArchiveTarget) => ArchiveTarget = (t) => t,
  sources: () => Promise<ManifestFile[]> = async () => [],
  onProgress: (p: ConvertProgress) => void = () => {},
) {
  const { source, close } = await openSource(arinaPaths);
  const dir = join(await tempDir(), 'archive');
  const progress: ConvertProgress[] = [];
  try {
    await convertArchive([{ name: 'a', source, sources: sources() }], wrap(await nodeArchiveTarget(dir)), {
      hash: nodeSha256,
      codec: small,
      writesInFlight,
      now: () => new Date('2026-11-29T00:00:00Z'),
      onProgress: (p) => {
        progress.push(p);
        onProgress(p);
      },
    });
    return { dir, manifest: await readFile(join(dir, 'manifest.json'), 'utf8'), progress };
  } finally {
    await close();
  }
}

/** A conversion that must fail with this error and leave nothing in `parent` (its temporaries removed). */
async function expectFailed(conversion: Promise<unknown>, parent: string, kind: string, message: string) {
  const error = (await conversion.catch((e) => e)) as Error;
  expect(isStemflowError(error) && error.kind).toBe(kind);
  expect(error.message).toBe(message);
  expect(await readdir(parent)).toEqual([]);
}

describe('node-hash-pool: SHA-256 in worker threads', () => {
  it('hashes shared and plain parts in order, and whole files, to the known digests', async () => {
    const pool = createHashPool(2);
    const shared = new Uint8Array(new SharedArrayBuffer(2));
    shared.set([0x61, 0x62]); // "ab"
    expect(await pool.hashParts([shared, new Uint8Array([0x63])])).toBe(ABC_SHA256);
    expect(await pool.hashParts([])).toBe(EMPTY_SHA256);
    const dir = await tempDir();
    await writeFile(join(dir, 'abc'), 'abc');
    const [a, b, c] = await Promise.all([
      pool.hashFile(join(dir, 'abc')),
      pool.hashParts([new TextEncoder().encode('abc')]),
      pool.hashFile(join(dir, 'abc')),
    ]);
    expect([a, b, c]).toEqual([ABC_SHA256, ABC_SHA256, ABC_SHA256]);
    const missing = await pool.hashFile(join(dir, 'missing')).catch((e) => e);
    expect(isStemflowError(missing) && missing.kind).toBe('not-found');
  });

  it('hashes a file as it grows: pieces across the read chunk, the rest read at the digest, errors at the digest', async () => {
    const pool = createHashPool(2);
    const dir = await tempDir();
    const bytes = new Uint8Array(20 * 2 ** 20 + 12_345); // crosses the worker's 16 MiB read chunk
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 2654435761) >>> 24;
    const want = createHash('sha256').update(bytes).digest('hex');
    const path = join(dir, 'growing');
    const file = await open(path, 'wx');
    const growing = pool.hashGrowing(path);
    // Written and reported in uneven pieces; the last 1,000 bytes are never reported, only digested.
    for (const end of [1, 5_000_000, 17_000_000, bytes.length - 1_000, bytes.length]) {
      const { bytesWritten } = await file
        .stat()
        .then((st) => file.write(bytes, st.size, end - st.size, st.size));
      expect(bytesWritten).toBeGreaterThan(0);
      if (end < bytes.length) growing.written(end);
    }
    await file.close();
    expect(await growing.digest(bytes.length)).toBe(want);
    // Never reported written at all: read at the digest.
    expect(await pool.hashGrowing(path).digest(bytes.length)).toBe(want);
    // A file shorter than the digest's length, and a missing file: typed errors at the digest, not before.
    const short = await pool
      .hashGrowing(path)
      .digest(bytes.length + 1)
      .catch((e) => e);
    expect(isStemflowError(short) && short.message).toContain('the file ended at byte 20983865 of 20983866');
    const missing = pool.hashGrowing(join(dir, 'missing'));
    missing.written(10);
    const error = await missing.digest(10).catch((e) => e);
    expect(isStemflowError(error) && error.kind).toBe('not-found');
    // Cancelled: no digest, and the pool goes on.
    const cancelled = pool.hashGrowing(path);
    cancelled.written(100);
    cancelled.cancel();
    expect(await cancelled.digest(100).catch((e) => e.message)).toContain('already hashed');
    expect(await pool.hashParts([new TextEncoder().encode('abc')])).toBe(ABC_SHA256);
  });
});

describe('writeFile: a file hashed from disk as its pieces are written', () => {
  it('cuts parts into pieces without copies', () => {
    const a = new Uint8Array([1, 2, 3]);
    const b = new Uint8Array([4, 5, 6, 7, 8]);
    const groups = pieces([a, new Uint8Array(0), b], 3);
    expect(groups.map((g) => g.map((p) => [...p]))).toEqual([[[1, 2, 3]], [[4, 5, 6]], [[7, 8]]]);
    expect(groups[1][0].buffer).toBe(b.buffer);
    expect(pieces([], 3)).toEqual([]);
    expect(pieces([a, b], 100).map((g) => g.length)).toEqual([2]);
  });

  it('writes and hashes a multi-piece file exactly; a failed write cancels the hash and rejects', async () => {
    const dir = join(await tempDir(), 'archive');
    const target = await nodeArchiveTarget(dir);
    const head = new Uint8Array(100).fill(7);
    const body = new Uint8Array(2 * HASH_PIECE_BYTES + 999);
    for (let i = 0; i < body.length; i++) body[i] = i % 251;
    const stages: string[] = [];
    const file = await writeArchiveFile(target, 'big.tans', [head, body], nodeSha256, target.hashParts, {
      hashWriting: target.hashWriting,
      onStage: (s) => stages.push(s),
    });
    const want = createHash('sha256').update(head).update(body).digest('hex');
    expect(file).toEqual({ path: 'big.tans', size: head.length + body.length, sha256: want });
    expect(stages[0]).toBe('written'); // then synced and hashed, in either order
    expect([...stages].sort()).toEqual(['hashed', 'synced', 'written']);
    let cancelled = 0;
    const failing: ArchiveTarget = {
      ...target,
      async create(path) {
        const sink = await target.create(path);
        let writes = 0;
        return {
          ...sink,
          writeParts: async (parts) => {
            if (++writes === 2) throw new StemflowError('budget', 'The disk is full (test).');
            return sink.writeParts?.(parts);
          },
        };
      },
      hashWriting: (path) => {
        const hashing = target.hashWriting?.(path);
        if (!hashing) throw new Error('the Node target hashes written files');
        return {
          ...hashing,
          cancel: () => {
            cancelled++;
            hashing.cancel();
          },
        };
      },
    };
    const error = await writeArchiveFile(failing, 'failed.tans', [body], nodeSha256, target.hashParts, {
      hashWriting: failing.hashWriting,
    }).catch((e) => e);
    expect(isStemflowError(error) && error.message).toBe('The disk is full (test).');
    expect(cancelled).toBe(1);
    await target.discard();
  });
});

describe('convertArchive: shards written and hashed while the next records encode', () => {
  it('0, 1 and 4 writes in flight: the same manifest byte for byte, progress in record order', async () => {
    const serial = await convertWith(0);
    const records = JSON.parse(serial.manifest).acquisitions[0].records.length;
    expect(records).toBeGreaterThan(4);
    expect(serial.progress.map((p) => p.framesDone)).toEqual(
      Array.from({ length: records }, (_, r) => Math.min((r + 1) * 7, arina.frames)),
    );
    for (const n of [1, 4]) {
      const piped = await convertWith(n);
      expect(piped.manifest).toBe(serial.manifest);
      expect(piped.progress).toEqual(serial.progress);
    }
  }, 120_000);

  it('lent records: files still being hashed do not hold up the next records (up to FILES_PER_WRITE x writes in flight)', async () => {
    const serial = await convertWith(0);
    // Records lent as the GPU encoder lends them (hashed from the written file, given back once written).
    let encoded = 0;
    let recycled = 0;
    const lending: RecordEncoder = {
      async encode(...args) {
        const rec = await cpuRecordEncoder.encode(...args);
        encoded++;
        return { ...rec, lent: true };
      },
      recycle: () => {
        recycled++;
      },
    };
    // Hashing a written file waits until FILES_PER_WRITE files wait to be hashed at once: a converter that
    // waited for each file's hash before the next record (one write in flight) would never get there.
    let open = () => {};
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    let pending = 0;
    let maxPending = 0;
    const { source, close } = await openSource(arinaPaths);
    const dir = join(await tempDir(), 'archive');
    try {
      const target = await nodeArchiveTarget(dir);
      const hashWriting = target.hashWriting;
      if (!hashWriting) throw new Error('the Node target hashes written files');
      await convertArchive(
        [{ name: 'a', source, sources: [] }],
        {
          ...target,
          hashWriting: (path) => {
            const hashing = hashWriting(path);
            return {
              ...hashing,
              digest: async (bytes) => {
                pending++;
                maxPending = Math.max(maxPending, pending);
                if (pending >= FILES_PER_WRITE) open();
                await gate;
                pending--;
                return hashing.digest(bytes);
              },
            };
          },
        },
        {
          hash: nodeSha256,
          encoder: lending,
          codec: small,
          writesInFlight: 1,
          now: () => new Date('2026-11-29T00:00:00Z'),
        },
      );
    } finally {
      await close();
    }
    expect(await readFile(join(dir, 'manifest.json'), 'utf8')).toBe(serial.manifest);
    expect(maxPending).toBe(FILES_PER_WRITE);
    expect(recycled).toBe(encoded);
  }, 120_000);

  for (const [record, delayMs, inFlight] of [
    [1, 0, 2],
    [2, 20, 3],
  ] as const) {
    it(`shard ${record} fails (after ${delayMs} ms, ${inFlight} writes in flight): that error, nothing left behind`, async () => {
      const { source, close } = await openSource(arinaPaths);
      const parent = await tempDir();
      const target = await nodeArchiveTarget(join(parent, 'archive'));
      const failing: ArchiveTarget = {
        ...target,
        async create(path) {
          const sink = await target.create(path);
          if (!path.endsWith(`rec-${String(record).padStart(6, '0')}.tans`)) return sink;
          return {
            ...sink,
            writeParts: async () => {
              await new Promise((r) => setTimeout(r, delayMs));
              throw new StemflowError('budget', 'The disk is full (test).');
            },
          };
        },
      };
      try {
        await expectFailed(
          convertArchive([{ name: 'a', source, sources: [] }], failing, {
            hash: nodeSha256,
            codec: small,
            writesInFlight: inFlight,
          }),
          parent,
          'budget',
          'The disk is full (test).',
        );
      } finally {
        await close();
      }
    }, 120_000);
  }
});

describe('convertArchive: source identities hashed while converting', () => {
  it('a late identity is in the manifest; a failed one fails the conversion with its error and leaves nothing', async () => {
    // Resolved only once the last shard's progress is reported (every record encoded and written): the
    // manifest waits for it.
    let lastShard = () => {};
    const written = new Promise<void>((resolve) => {
      lastShard = resolve;
    });
    const late = await convertWith(
      2,
      (t) => t,
      async () => {
        await written;
        return [{ path: 'late.h5', size: 3, sha256: ABC_SHA256 }];
      },
      (p) => {
        if (p.framesDone === p.frameCount) lastShard();
      },
    );
    expect(JSON.parse(late.manifest).acquisitions[0].sources).toEqual([
      { path: 'late.h5', size: 3, sha256: ABC_SHA256 },
    ]);
    const { source, close } = await openSource(arinaPaths);
    const parent = await tempDir();
    try {
      const target = await nodeArchiveTarget(join(parent, 'archive'));
      const failing = Promise.reject(new StemflowError('not-found', 'A source file vanished (test).'));
      await expectFailed(
        convertArchive([{ name: 'a', source, sources: failing }], target, {
          hash: nodeSha256,
          codec: small,
          writesInFlight: 2,
        }),
        parent,
        'not-found',
        'A source file vanished (test).',
      );
    } finally {
      await close();
    }
  }, 120_000);
});

describe('openArchive: files hashed in worker threads', () => {
  it('opens the same archive with and without the files hashing off the main thread; both catch a changed byte', async () => {
    const { dir } = await convertWith(2);
    const files = nodeArchiveFiles(dir);
    expect(files.sha256).toBeDefined();
    const manifest = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8'));
    for (const f of [files, { open: files.open }]) {
      const archive = await openArchive(f, { hash: nodeSha256 });
      expect(archive.bytes).toBe(manifest.files.reduce((n: number, x: { size: number }) => n + x.size, 0));
      await archive.close();
    }
    const shard = manifest.files.find((f: { path: string }) => f.path.endsWith('rec-000003.tans')).path;
    const bytes = await readFile(join(dir, shard));
    bytes[bytes.length - 1] ^= 1;
    await writeFile(join(dir, shard), bytes);
    for (const f of [files, { open: files.open }]) {
      const error = await openArchive(f, { hash: nodeSha256 }).catch((e) => e);
      expect(isStemflowError(error) && error.kind).toBe('corrupt');
      expect(error.message).toBe(
        `${shard} does not match its SHA-256 in the manifest (it was changed or damaged). (file ${shard})`,
      );
    }
  }, 120_000);
});
