import { describe, expect, it } from 'vitest';
import { createGpuTimer, summariseMarks } from './gpu-timer.ts';
import { withGpu } from './test-harness.ts';

describe('gpu-timer', () => {
  withGpu(
    'marks around GPU work resolve in order, relative to the first; reset reuses the timer',
    async (ctx) => {
      expect(ctx.features.has('timestamp-query')).toBe(true);
      const timer = createGpuTimer(ctx, 3);
      if (!timer) throw new Error('no timer despite timestamp-query');
      try {
        const buffer = ctx.storage(1 << 20);
        const encoder = ctx.device.createCommandEncoder();
        timer.mark(encoder, 'a');
        encoder.clearBuffer(buffer);
        timer.mark(encoder, 'b');
        timer.mark(encoder, 'c');
        expect(() => timer.mark(encoder, 'd')).toThrow(/full \(3 marks\)/);
        ctx.device.queue.submit([encoder.finish()]);
        const marks = await timer.read();
        expect(marks.map((m) => m.label)).toEqual(['a', 'b', 'c']);
        expect(marks[0].ms).toBe(0);
        // Dawn may quantize timestamps (equal marks); they never run backwards.
        expect(marks[1].ms).toBeGreaterThanOrEqual(0);
        expect(marks[2].ms).toBeGreaterThanOrEqual(marks[1].ms);
        timer.reset();
        expect(timer.count).toBe(0);
        expect(await timer.read()).toEqual([]);
      } finally {
        timer.destroy();
      }
    },
  );
});

describe('summariseMarks', () => {
  it('adds each interval to the label of the mark that opens it', () => {
    const marks = [
      { label: 'copy', ms: 0 },
      { label: 'decode', ms: 1 },
      { label: 'gap', ms: 4 },
      { label: 'copy', ms: 4.5 },
      { label: 'decode', ms: 5 },
      { label: 'gap', ms: 7 },
    ];
    expect(summariseMarks(marks)).toEqual({ byLabel: { copy: 1.5, decode: 5, gap: 0.5 }, spanMs: 7 });
    expect(summariseMarks([])).toEqual({ byLabel: {}, spanMs: 0 });
  });
});
