/**
 * SHA-256 off the main thread for the Node target (node-folder.ts): a small pool of worker threads running
 * node:crypto, either over bytes (`hashParts`: views of a SharedArrayBuffer are hashed in place, other bytes
 * are copied to the worker) or over a whole file the worker reads itself (`hashFile`). The workers are
 * unreferenced while idle, so an idle pool never keeps the process alive.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { StemflowError } from '../errors';

/** The worker (CommonJS, evaluated from this string so the standalone CLI bundle needs no extra file). */
const WORKER_CODE = `
const { parentPort } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const fs = require('node:fs');
const CHUNK = 16 * 1024 * 1024;
let buffer = null;
parentPort.on('message', (job) => {
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
    parentPort.postMessage({ id: job.id, error: String((error && error.message) || error), code: error && error.code });
  }
});
`;

export interface HashPool {
  /** SHA-256 (lower-case hex) of the parts, in order. The parts must not change until the promise settles. */
  hashParts(parts: readonly Uint8Array[]): Promise<string>;
  /** SHA-256 of a whole file, read by a worker. */
  hashFile(path: string): Promise<string>;
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

  const run = (job: { parts?: readonly Uint8Array[]; path?: string }, what: string) =>
    new Promise<string>((resolve, reject) => {
      let slot = slots.reduce<Slot | null>((best, s) => (!best || s.busy < best.busy ? s : best), null);
      if (!slot || (slot.busy > 0 && slots.length < threads)) slot = startSlot();
      const id = nextId++;
      pending.set(id, { resolve, reject, what, slot: slot as Slot });
      if (slot.busy++ === 0) slot.worker.ref();
      slot.worker.postMessage({ id, ...job });
    });

  return {
    threads,
    hashParts: (parts) => run({ parts }, `${parts.reduce((n, p) => n + p.byteLength, 0)} bytes`),
    hashFile: (path) => run({ path }, path),
  };
}

let shared: HashPool | null = null;

/** The process's shared pool. */
export function nodeHashPool(): HashPool {
  shared ??= createHashPool();
  return shared;
}
