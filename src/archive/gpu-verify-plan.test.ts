import { describe, expect, it } from 'vitest';
import { isStemflowError } from '../errors';
import { planGpuVerify } from './gpu-verify-plan';

describe('planGpuVerify: the GPU verifier sized before anything is allocated', () => {
  // 16,384-frame records of 192 x 192 uint16, 16 lanes a frame, 16 records (the H200 benchmark).
  const base = {
    frameCount: 262144,
    maxFrames: 16384,
    pixels: 192 * 192,
    wordsPerFrame: (192 * 192) / 2,
    slices: 16,
    classes: 32,
    tableLog: 11,
    blocks: 1024,
    maxStoredBytes: 180_000_000,
    maxDataWords: 26_000_000,
    slots: 2,
    sets: 2,
    decodeScratchBytes: 4096 * 4 * 8192,
    limits: { maxBufferSize: 2 ** 32, maxStorageBufferBindingSize: 2 ** 31 - 4 },
  };
  const bytes = (plan: ReturnType<typeof planGpuVerify>, label: string) =>
    plan.buffers.find((b) => b.label === label)?.bytes;

  it('sizes every buffer: shared, per input set, per staging slot', () => {
    const plan = planGpuVerify(base);
    expect(bytes(plan, 'decoded')).toBe(16384 * 192 * 192 * 2);
    expect(bytes(plan, 'lane errors')).toBe(262144 * 16 * 4);
    expect(bytes(plan, 'compressed')).toBe(180_000_004);
    expect(bytes(plan, 'record data')).toBe(104_000_000);
    expect(bytes(plan, 'decode cells')).toBe(32 * 9 * 2048 * 4);
    expect(plan.setBytes).toBe(
      180_000_004 + 16384 * 8 + 104_000_000 + (16384 * 16 + 1) * 4 + 32 * 9 * 2048 * 4 + 192 * 192 * 4,
    );
    expect(plan.slotBytes).toBe(180_000_004 + 104_000_000);
    expect(plan.totalBytes).toBe(
      plan.sharedBytes + 2 * plan.setBytes + 2 * plan.slotBytes + base.decodeScratchBytes,
    );
    const one = planGpuVerify({ ...base, sets: 1, slots: 3 });
    expect(one.totalBytes).toBe(plan.totalBytes - plan.setBytes + plan.slotBytes);
  });

  it('refuses a plan over the budget with the numbers and the slots that fit', () => {
    const plan = planGpuVerify(base);
    expect(planGpuVerify({ ...base, budgetBytes: plan.totalBytes }).totalBytes).toBe(plan.totalBytes);
    let error: unknown;
    try {
      planGpuVerify({ ...base, slots: 4, budgetBytes: plan.totalBytes });
    } catch (e) {
      error = e;
    }
    expect(isStemflowError(error, 'budget')).toBe(true);
    expect((error as Error).message).toMatch(
      /4 staging slot\(s\) of 0\.26 GiB .* exceed the budget .*at most 2 slot\(s\) fit/,
    );
  });

  it("refuses a buffer over the GPU's binding limit", () => {
    expect(() =>
      planGpuVerify({ ...base, limits: { maxBufferSize: 2 ** 32, maxStorageBufferBindingSize: 2 ** 30 } }),
    ).toThrow(/decoded buffer needs 1207959552 bytes; this GPU allows 1073741824 per binding/);
  });
});
