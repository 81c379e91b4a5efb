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
      const made = await s.createReadback(bytes, 'lent readback');
      prepareReadbacks(s, bytes);
      return made;
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

/**
 * A lent readback of at least `bytes` for the record at `firstFrame`, waiting while every one is lent out
 * (`EncoderState.waitForLoans`, the encoder's `lentOnly`), so the record's words need no host copy. Loans go
 * to the earliest waiting record: with at least as many lendable readbacks as record slots, the earliest
 * record the converter has not received yet always gets one once the converter writes the records before it
 * (at most slots - 1 later records can hold a loan meanwhile: they need its slot; and records reach this step
 * in the order they start, holding the shared lane scratch). Undefined when waiting is off and none is free;
 * `waited.ms` gets the time spent waiting.
 */
export async function waitForLoan(
  s: EncoderState,
  bytes: number,
  firstFrame: number,
  waited: { ms: number },
): Promise<GPUBuffer | undefined> {
  const earlierWaits = () => [...s.loanWaiters].some((f) => f < firstFrame);
  if (!s.waitForLoans || !earlierWaits()) {
    const free = await lendableReadback(s, bytes);
    if (free || !s.waitForLoans) return free;
  }
  const t = performance.now();
  s.loanWaiters.add(firstFrame);
  try {
    while (s.waitForLoans && s.alive()) {
      await s.loanChange();
      if (earlierWaits()) continue;
      const free = await lendableReadback(s, bytes);
      if (free) return free;
    }
    return s.alive() ? lendableReadback(s, bytes) : undefined;
  } finally {
    s.loanWaiters.delete(firstFrame);
    s.notifyLoans(); // the next waiter may take what is free now
    waited.ms += performance.now() - t;
  }
}

/**
 * Creates the lendable readbacks not made yet in the background, at the size of the first (the words needed
 * + 25 %), and maps each once so that its first-use clear of mapped memory is done too: the records after the
 * first find one ready instead of creating it on their path (~35-40 ms each on the H200 host). A failure
 * leaves the rest to be created when needed (where it is reported).
 */
function prepareReadbacks(s: EncoderState, bytes: number): void {
  if (s.preparing || s.unmade === 0) return;
  s.preparing = true;
  setTimeout(async () => {
    try {
      while (s.unmade > 0 && s.alive()) {
        s.unmade--;
        let buffer: GPUBuffer | undefined;
        try {
          buffer = await s.createReadback(bytes, 'lent readback');
          s.inPreparation.add(buffer);
          if (!s.alive()) throw new Error('closed');
          await buffer.mapAsync(GPUMapMode.READ);
          buffer.unmap();
        } catch {
          buffer?.destroy();
          if (buffer) s.inPreparation.delete(buffer);
          s.unmade++;
          return;
        }
        s.inPreparation.delete(buffer);
        if (s.alive()) {
          s.lendable.push(buffer);
          s.notifyLoans();
        } else buffer.destroy();
      }
    } finally {
      s.preparing = false;
    }
  }, 0);
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
