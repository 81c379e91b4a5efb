/**
 * SHA-256 of archive files in several browser threads at once (the series and archive workers check every
 * file of an archive before using it: on one thread a large series takes minutes). Up to `threads` dedicated
 * workers (browser-hash-worker.ts), started on first use, each hashing one file at a time. Where a thread
 * cannot start or stops (no nested module workers in this browser), its file and every later one are hashed
 * by `fallback` in the caller's thread instead: slower, never wrong.
 */
import { StemflowError } from '../errors';

export interface BrowserHashPool {
  readonly threads: number;
  /** Threads that have hashed a file so far (0: every file went to the fallback, or none was hashed yet). */
  readonly used: number;
  /** SHA-256 (lower-case hex) of the blob; `onBytes` hears the bytes done, slice by slice. */
  hash(blob: Blob, name: string, onBytes?: (bytes: number) => void): Promise<string>;
  terminate(): void;
}

interface Job {
  id: number;
  blob: Blob;
  name: string;
  onBytes?: (bytes: number) => void;
  resolve(digest: string): void;
  reject(error: Error): void;
}

export type HashFallback = (blob: Blob, onBytes?: (bytes: number) => void) => Promise<string>;

export function createBrowserHashPool(
  fallback: HashFallback,
  // The calling worker mostly waits while the threads hash: every core may take a file.
  threads = Math.max(1, Math.min(8, globalThis.navigator?.hardwareConcurrency ?? 2)),
): BrowserHashPool {
  let broken = typeof Worker === 'undefined';
  const idle: Worker[] = [];
  const all: Worker[] = [];
  const queue: Job[] = [];
  const running = new Map<Worker, Job>();
  let nextId = 1;
  const hashed = new Set<Worker>();

  const start = (): Worker => {
    const w = new Worker(new URL('./browser-hash-worker.ts', import.meta.url), {
      type: 'module',
      name: 'sha256',
    });
    w.onmessage = (e: MessageEvent<{ id: number; bytes?: number; digest?: string; error?: string }>) => {
      const job = running.get(w);
      if (!job || job.id !== e.data.id) return;
      if (e.data.bytes !== undefined) {
        job.onBytes?.(e.data.bytes);
        return;
      }
      running.delete(w);
      hashed.add(w);
      if (e.data.digest !== undefined) job.resolve(e.data.digest);
      else
        job.reject(
          new StemflowError('not-found', `The browser could not read ${job.name}: ${e.data.error}`, {
            file: job.name,
          }),
        );
      idle.push(w);
      pump();
    };
    // A thread that cannot start or stops: this file and the rest are hashed by the fallback.
    w.onerror = (e) => {
      e.preventDefault();
      broken = true;
      const job = running.get(w);
      running.delete(w);
      all.splice(all.indexOf(w), 1);
      w.terminate();
      if (job) queue.unshift(job);
      pump();
    };
    all.push(w);
    return w;
  };

  function pump() {
    if (broken) {
      for (const job of queue.splice(0)) fallback(job.blob, job.onBytes).then(job.resolve, job.reject);
      return;
    }
    while (queue.length > 0) {
      const w = idle.pop() ?? (all.length < threads ? start() : undefined);
      if (!w) return;
      const job = queue.shift() as Job;
      running.set(w, job);
      w.postMessage({ id: job.id, blob: job.blob });
    }
  }

  return {
    threads,
    get used() {
      return hashed.size;
    },
    hash(blob, name, onBytes) {
      return new Promise<string>((resolve, reject) => {
        queue.push({ id: nextId++, blob, name, onBytes, resolve, reject });
        pump();
      });
    },
    terminate() {
      for (const w of all) w.terminate();
      for (const job of [...running.values(), ...queue.splice(0)])
        job.reject(new StemflowError('aborted', `Checking ${job.name} was stopped.`));
      running.clear();
      all.length = 0;
      idle.length = 0;
    },
  };
}
