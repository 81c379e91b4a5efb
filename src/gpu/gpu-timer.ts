/**
 * GPU timestamps at chosen points of a command stream (the 'timestamp-query' feature): `mark(encoder, label)`
 * records an empty compute pass whose beginning writes a timestamp, so the time between two marks is the GPU
 * time of everything recorded between them (copies included), and the gaps between submissions show as the
 * time between the last mark of one and the first of the next. `read()` resolves every mark in one submission
 * and one wait. Benchmarks only: Dawn quantizes timestamps unless the instance is created with
 * 'disable-dawn-features=timestamp_quantization' (nodeGpu flags); with quantization, marks may read equal.
 */
import { StemflowError } from '../errors.ts';
import type { GpuContext } from './device.ts';

export interface GpuMark {
  label: string;
  /** Milliseconds since the first mark. */
  ms: number;
}

export interface GpuTimer {
  /** Marks recorded so far (at most `capacity`). */
  readonly count: number;
  readonly capacity: number;
  mark(encoder: GPUCommandEncoder, label: string): void;
  /** Resolves the marks recorded so far (after their submissions); one wait. */
  read(): Promise<GpuMark[]>;
  /** Forgets the marks (after `read`), so the timer can be used again. */
  reset(): void;
  destroy(): void;
}

/** A timer of up to `capacity` marks, or null when the device has no 'timestamp-query'. */
export function createGpuTimer(ctx: GpuContext, capacity: number): GpuTimer | null {
  if (!ctx.features.has('timestamp-query')) return null;
  if (!Number.isInteger(capacity) || capacity < 1 || capacity > 4096) {
    throw new StemflowError('invalid', `A GPU timer holds 1 to 4096 marks, not ${capacity}.`);
  }
  const { device } = ctx;
  const querySet = device.createQuerySet({ label: 'gpu timer', type: 'timestamp', count: capacity });
  const resolved = device.createBuffer({
    label: 'gpu timer resolve',
    size: capacity * 8,
    usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC,
  });
  const labels: string[] = [];
  return {
    get count() {
      return labels.length;
    },
    capacity,
    mark(encoder, label) {
      if (labels.length >= capacity) {
        throw new StemflowError('invalid', `The GPU timer is full (${capacity} marks).`);
      }
      const pass = encoder.beginComputePass({
        label: `mark ${label}`,
        timestampWrites: { querySet, beginningOfPassWriteIndex: labels.length },
      });
      pass.end();
      labels.push(label);
    },
    async read() {
      const n = labels.length;
      if (n === 0) return [];
      const staging = device.createBuffer({
        label: 'gpu timer readback',
        size: n * 8,
        usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
      });
      try {
        const encoder = device.createCommandEncoder({ label: 'gpu timer read' });
        encoder.resolveQuerySet(querySet, 0, n, resolved, 0);
        encoder.copyBufferToBuffer(resolved, 0, staging, 0, n * 8);
        device.queue.submit([encoder.finish()]);
        await staging.mapAsync(GPUMapMode.READ);
        const ticks = new BigUint64Array(staging.getMappedRange().slice(0));
        staging.unmap();
        // Nanoseconds; differences stay far below 2^53 for any run we time.
        return labels.map((label, i) => ({ label, ms: Number(ticks[i] - ticks[0]) / 1e6 }));
      } finally {
        staging.destroy();
      }
    },
    reset() {
      labels.length = 0;
    },
    destroy() {
      querySet.destroy();
      resolved.destroy();
    },
  };
}

/** Sums of the time from each mark to the next, grouped by the first mark's label; and the whole span. */
export function summariseMarks(marks: readonly GpuMark[]): {
  byLabel: Record<string, number>;
  spanMs: number;
} {
  const byLabel: Record<string, number> = {};
  for (let i = 0; i + 1 < marks.length; i++) {
    const d = marks[i + 1].ms - marks[i].ms;
    byLabel[marks[i].label] = (byLabel[marks[i].label] ?? 0) + d;
  }
  return { byLabel, spanMs: marks.length ? marks[marks.length - 1].ms - marks[0].ms : 0 };
}
