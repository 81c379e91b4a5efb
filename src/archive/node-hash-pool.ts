/**
 * SHA-256 off the main thread for the Node target (node-folder.ts): a small pool of worker threads running
 * node:crypto, either over bytes (`hashParts`: views of a SharedArrayBuffer are hashed in place, other bytes
 * are copied to the worker), over a whole file the worker reads itself (`hashFile`), or over a file being
 * written, read by one worker piece by piece as its bytes are reported written (`hashGrowing`). The workers are
 * unreferenced while idle, so an idle pool never keeps the process alive.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { StemflowError } from '../errors';
import type { WritingHash } from './files';

/** The worker (CommonJS, evaluated from this string so the standalone CLI bundle needs no extra file). */
const WORKER_CODE = `
const { parentPort } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const fs = require('node:fs');
const CHUNK = 16 * 1024 * 1024;
let buffer = null;
/** Files hashed as they are written: id -> { fd, h, done, error }. */
const growing = new Map();
const readRange = (fd, h, from, to) => {
  buffer = buffer || Buffer.allocUnsafe(CHUNK);
  for (let at = from; at < to; ) {
    const n = fs.readSync(fd, buffer, 0, Math.min(CHUNK, to - at), at);
    if (n === 0) throw new Error('the file ended at byte ' + at + ' of ' + to);
    h.update(buffer.subarray(0, n));
    at += n;
  }
};
const fail = (id, error) =>
  parentPort.postMessage({ id, error: String((error && error.message) || error), code: error && error.code });
parentPort.on('message', (job) => {
  if (job.op !== undefined) {
    // A file hashed while it is written: 'open', 'upTo' as its bytes are written, then 'finish' (the one reply;
    // an error on the way is kept for it) or 'cancel' (no reply).
    if (job.op === 'open') {
      const g = { fd: null, h: createHash('sha256'), done: 0, error: null };
      try {
        g.fd = fs.openSync(job.path, 'r');
      } catch (error) {
        g.error = error;
      }
      growing.set(job.id, g);
      return;
    }
    const g = growing.get(job.id);
    if (!g) return;
    if (job.op === 'upTo') {
      try {
        if (g.error === null && job.bytes > g.done) {
          readRange(g.fd, g.h, g.done, job.bytes);
          g.done = job.bytes;
        }
      } catch (error) {
        g.error = error;
      }
      return;
    }
    growing.delete(job.id);
    try {
      if (job.op === 'cancel') return;
      if (g.error !== null) throw g.error;
      if (g.done > job.bytes) throw new Error('hashed ' + g.done + ' bytes of a ' + job.bytes + '-byte file');
      readRange(g.fd, g.h, g.done, job.bytes);
      parentPort.postMessage({ id: job.id, digest: g.h.digest('hex') });
    } catch (error) {
      fail(job.id, error);
    } finally {
      try {
        if (g.fd !== null) fs.closeSync(g.fd);
      } catch {}
    }
    return;
  }
  try {
    const h = createHash('sha256');
    if (job.path !== undefined) {
      buffer = buffer || Buffer.allocUnsafe(CHUNK);
      const fd = fs.openSync(job.path, 'r');
      try {
        for (let n; (n = fs.readSync(fd, buffer, 0, CHUNK, null)) > 0; ) h.update(buffer.subarray(0, n));
      } finally {
        fs.closeSync(fd);
      }
    } else {
      for (const part of job.parts) h.update(part);
    }
    parentPort.postMessage({ id: job.id, digest: h.digest('hex') });
  } catch (error) {
    fail(job.id, error);
  }
});
`;

export interface HashPool {
  /** SHA-256 (lower-case hex) of the parts, in order. The parts must not change until the promise settles. */
  hashParts(parts: readonly Uint8Array[]): Promise<string>;
  /** SHA-256 of a whole file, read by a worker. */
  hashFile(path: string): Promise<string>;
  /**
   * SHA-256 of a file being written, read by one worker as its bytes are reported written (`written`), so the
   * digest is ready soon after the last byte is.
   */
  hashGrowing(path: string): WritingHash;
  /** Hashes running at once (the number of workers). */
  readonly threads: number;
}

interface Pending {
  resolve(digest: string): void;
  reject(error: Error): void;
  what: string;
  slot: Slot;
}

interface Slot {
  worker: Worker;
  busy: number;
}

/** A pool of `threads` workers (default: available cores - 1, 2 to 8), started on first use. */
export function createHashPool(threads = Math.min(8, Math.max(2, availableParallelism() - 1))): HashPool {
  const slots: Slot[] = [];
  const pending = new Map<number, Pending>();
  let nextId = 0;

  const startSlot = (): Slot => {
    const worker = new Worker(WORKER_CODE, { eval: true });
    const slot: Slot = { worker, busy: 0 };
    worker.unref();
    worker.on('message', (m: { id: number; digest?: string; error?: string; code?: string }) => {
      const p = pending.get(m.id);
      pending.delete(m.id);
      if (--slot.busy === 0) worker.unref();
      if (!p) return;
      if (m.digest !== undefined) p.resolve(m.digest);
      else {
        const kind = m.code === 'ENOENT' ? 'not-found' : 'invalid';
        p.reject(new StemflowError(kind, `Cannot hash ${p.what}: ${m.error}`));
      }
    });
    worker.on('error', (error) => {
      // A dead worker fails its jobs; the slot is replaced on the next job.
      slots.splice(slots.indexOf(slot), 1);
      for (const [id, p] of pending) {
        if (p.slot !== slot) continue;
        pending.delete(id);
        p.reject(
          new StemflowError('invalid', `Cannot hash ${p.what}: ${error.message}`, {}, { cause: error }),
        );
      }
    });
    slots.push(slot);
    return slot;
  };

  /** The least busy worker, or a new one while the pool has room. */
  const pick = (): Slot => {
    const slot = slots.reduce<Slot | null>((best, s) => (!best || s.busy < best.busy ? s : best), null);
    return !slot || (slot.busy > 0 && slots.length < threads) ? startSlot() : slot;
  };
  const expect = (slot: Slot, id: number, what: string) =>
    new Promise<string>((resolve, reject) => {
      pending.set(id, { resolve, reject, what, slot });
    });
  const run = (job: { parts?: readonly Uint8Array[]; path?: string }, what: string) => {
    const slot = pick();
    const id = nextId++;
    const done = expect(slot, id, what);
    if (slot.busy++ === 0) slot.worker.ref();
    slot.worker.postMessage({ id, ...job });
    return done;
  };

  const hashGrowing = (path: string): WritingHash => {
    const slot = pick();
    const id = nextId++;
    let settled = false;
    // Counted busy from the start, so other files go to other workers while this one is written.
    if (slot.busy++ === 0) slot.worker.ref();
    const alive = () => !settled && slots.includes(slot);
    slot.worker.postMessage({ id, op: 'open', path });
    return {
      written(bytes) {
        if (alive()) slot.worker.postMessage({ id, op: 'upTo', bytes });
      },
      digest(bytes) {
        if (settled) return Promise.reject(new StemflowError('invalid', `${path} was already hashed.`));
        settled = true;
        if (!slots.includes(slot))
          return Promise.reject(new StemflowError('invalid', `Cannot hash ${path}: its worker stopped.`));
        const done = expect(slot, id, path);
        slot.worker.postMessage({ id, op: 'finish', bytes });
        return done;
      },
      cancel() {
        if (settled) return;
        settled = true;
        if (!slots.includes(slot)) return;
        slot.worker.postMessage({ id, op: 'cancel' });
        if (--slot.busy === 0) slot.worker.unref();
      },
    };
  };

  return {
    threads,
    hashParts: (parts) => run({ parts }, `${parts.reduce((n, p) => n + p.byteLength, 0)} bytes`),
    hashFile: (path) => run({ path }, path),
    hashGrowing,
  };
}

let shared: HashPool | null = null;

/** The process's shared pool. */
export function nodeHashPool(): HashPool {
  shared ??= createHashPool();
  return shared;
}
