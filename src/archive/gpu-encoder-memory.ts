/**
 * Memory of the GPU archive encoder (gpu-encoder.ts) that outlives a record's steps: the host arrays records are
 * copied into, and the output readbacks lent with the records (mapped in place until the converter gives them
 * back).
 */
import type { EncoderState } from './gpu-encoder-slots';

/**
 * A free lendable readback of at least `bytes`: one free already, else a new one while fewer than planned
 * exist, else a free smaller one replaced by a larger one; undefined when every one is lent out.
 */
export async function lendableReadback(s: EncoderState, bytes: number): Promise<GPUBuffer | undefined> {
  const i = s.lendable.findIndex((b) => b.size >= bytes);
  if (i >= 0) return s.lendable.splice(i, 1)[0];
  if (s.unmade > 0) {
    s.unmade--;
    try {
      return await s.createReadback(bytes, 'lent readback');
    } catch (error) {
      s.unmade++;
      throw error;
    }
  }
  const small = s.lendable.pop();
  if (!small) return undefined;
  small.destroy();
  try {
    return await s.createReadback(bytes, 'lent readback');
  } catch (error) {
    s.unmade++;
    throw error;
  }
}

export interface HostPool {
  /** A host array of at least `words` words: a recycled one, or a new one. */
  take(words: number): Uint32Array;
  /** Returns an array `take` gave out (any view of it); others are ignored. */
  give(words: Uint32Array): void;
}

/**
 * Host arrays for the records' data words, reused once the converter has written a record (`recycle`):
 * touching fresh memory costs more than the copy itself (H200 host: 100 MB copied from the mapped readback
 * into fresh memory 67-85 ms, into touched memory 19-21 ms). In Node they are SharedArrayBuffers, so a hashing
 * worker (node-hash-pool.ts) reads them without a copy.
 */
export function createHostPool(keep: number): HostPool {
  const ours = new WeakSet<ArrayBufferLike>();
  const free: Uint32Array[] = [];
  // Not in browsers (which define `crossOriginIsolated`): WebCrypto and file streams refuse shared memory.
  const shared = typeof SharedArrayBuffer === 'function' && !('crossOriginIsolated' in globalThis);
  const allocate = (bytes: number): ArrayBufferLike =>
    shared ? new SharedArrayBuffer(bytes) : new ArrayBuffer(bytes);
  return {
    take(words) {
      const i = free.findIndex((a) => a.length >= words);
      if (i >= 0) return free.splice(i, 1)[0];
      const fresh = new Uint32Array(allocate(words * 4));
      ours.add(fresh.buffer);
      return fresh;
    },
    give(words) {
      const buffer = words.buffer;
      if (!ours.has(buffer) || free.some((a) => a.buffer === buffer) || free.length >= keep) return;
      free.push(new Uint32Array(buffer));
    },
  };
}
