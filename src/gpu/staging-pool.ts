/**
 * Mapped upload staging (MAP_WRITE | COPY_SRC) kept from one operation for the next (opt-in, as the resident
 * pool is for loads: `verifyAcquisitionGpu(..., { staging })`). Making mapped staging is CPU work on the thread
 * that drives Dawn: on the H200 ~0.23 ms a MB whether it is mapped at creation or created and then mapped
 * (`scripts/h200-staging-probe.mjs`), ~30 ms for the verifier's two slots of 71 MB, before its first read can
 * start. A buffer given back mapped is handed out again mapped, with the bytes its last user left: callers
 * copy to the GPU only the bytes they wrote.
 */

export interface StagingPool {
  /** Bytes held by the pool now (buffers not taken). */
  readonly bytes: number;
  /** Most bytes the pool keeps; a buffer given back beyond that is destroyed. */
  readonly maxBytes: number;
  /**
   * A mapped staging buffer of at least `bytes` (rounded up to 4): the smallest pooled one that holds it and
   * is at most twice the size, else a new one mapped at creation (inside the caller's error scopes).
   */
  take(device: GPUDevice, bytes: number, label: string): GPUBuffer;
  /** The pooled buffer `take` would hand out, or null (nothing is created). */
  reuse(bytes: number): GPUBuffer | null;
  /**
   * Keeps a buffer from `take` for a later one, if it is mapped (its last mapAsync resolved) and fits within
   * maxBytes; otherwise destroys it.
   */
  give(buffer: GPUBuffer): void;
  /** Destroys every pooled buffer. */
  clear(): void;
}

const STAGING = () => GPUBufferUsage.MAP_WRITE | GPUBufferUsage.COPY_SRC;

const roundUp4 = (bytes: number) => Math.max(4, Math.ceil(bytes / 4) * 4);

/** A pool; with maxBytes 0 it keeps nothing (every buffer is made by `take` and destroyed by `give`). */
export function createStagingPool(maxBytes = 512 * 2 ** 20): StagingPool {
  let idle: GPUBuffer[] = [];
  const held = () => idle.reduce((n, b) => n + b.size, 0);
  const reuse = (bytes: number) => {
    const size = roundUp4(bytes);
    let best = -1;
    idle.forEach((b, i) => {
      if (b.size >= size && b.size <= 2 * size && (best < 0 || b.size < idle[best].size)) best = i;
    });
    return best >= 0 ? idle.splice(best, 1)[0] : null;
  };
  return {
    maxBytes,
    get bytes() {
      return held();
    },
    reuse,
    take(device, bytes, label) {
      return (
        reuse(bytes) ??
        device.createBuffer({ label, size: roundUp4(bytes), usage: STAGING(), mappedAtCreation: true })
      );
    },
    give(buffer) {
      if (idle.includes(buffer)) return;
      if (buffer.mapState === 'mapped' && held() + buffer.size <= maxBytes) idle.push(buffer);
      else buffer.destroy();
    },
    clear() {
      for (const b of idle) b.destroy();
      idle = [];
    },
  };
}
