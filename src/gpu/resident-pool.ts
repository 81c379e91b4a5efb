/**
 * Resident buffers kept from one load for the next (opt-in: `loadToGpu(..., { pool })`). A viewer that loads
 * scan after scan otherwise creates and frees ~19 GB of buffers each time: on the H200's driver creating them
 * takes ~0.5 s, and freeing the previous load's stalls the next load by ~0.4 s more (docs/performance.md).
 * A reused buffer is cleared to zero on the GPU before use (as Dawn clears a new one), so a load from the pool
 * leaves exactly the bytes a fresh allocation would. Buffers of other layouts that do not fit are destroyed
 * before anything new is created, so the pool never holds memory a load needs.
 */
import type { ResidentLayout } from './resident-layout.ts';

export interface ResidentPool {
  /** Bytes held by the pool now (buffers not in use by a load). */
  readonly bytes: number;
  /**
   * Buffers for `layout` (one per layout buffer, each at least its size): pooled ones first (smallest that
   * fits), cleared on the GPU in one submission; the rest created. Pooled buffers left over are destroyed.
   */
  take(device: GPUDevice, layout: ResidentLayout, label?: string): { buffers: GPUBuffer[]; reused: number };
  /** Keeps the buffers (created by `take`) for a later load instead of destroying them. */
  give(buffers: readonly GPUBuffer[]): void;
  /** Destroys every pooled buffer. */
  clear(): void;
}

export function createResidentPool(): ResidentPool {
  let idle: GPUBuffer[] = [];
  return {
    get bytes() {
      return idle.reduce((n, b) => n + b.size, 0);
    },
    take(device, layout, label = 'resident') {
      const buffers: GPUBuffer[] = [];
      const reused: GPUBuffer[] = [];
      // Largest needs first, each from the smallest pooled buffer that holds it.
      const order = layout.bufferBytes.map((size, b) => ({ size, b })).sort((x, y) => y.size - x.size);
      for (const { size, b } of order) {
        let best = -1;
        idle.forEach((buffer, i) => {
          if (buffer.size >= size && (best < 0 || buffer.size < idle[best].size)) best = i;
        });
        if (best >= 0) {
          buffers[b] = idle[best];
          reused.push(idle[best]);
          idle.splice(best, 1);
        }
      }
      for (const b of idle) b.destroy();
      idle = [];
      // The usage of createResidentBuffers (passes/detector-transpose.ts).
      const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
      for (const [b, size] of layout.bufferBytes.entries()) {
        buffers[b] ??= device.createBuffer({ label: `${label} ${b}`, size, usage });
      }
      if (reused.length) {
        const encoder = device.createCommandEncoder({ label: 'clear pooled resident buffers' });
        for (const b of reused) encoder.clearBuffer(b);
        device.queue.submit([encoder.finish()]);
      }
      return { buffers, reused: reused.length };
    },
    give(buffers) {
      idle.push(...buffers);
    },
    clear() {
      for (const b of idle) b.destroy();
      idle = [];
    },
  };
}
