import { describe, expect, it } from 'vitest';
import { planGpuEncoder, readbackBytes } from './gpu-encoder-plan';
import { laneGeometry } from './lanes';

describe('planGpuEncoder', () => {
  const base = {
    dtype: 'uint16' as const,
    geometry: laneGeometry(192 * 192, 4),
    cols: 192,
    classes: 32,
    tableLog: 11,
    maxStoredBytes: 300_000_000,
    slots: 2,
    limits: { maxBufferSize: 2 ** 32, maxStorageBufferBindingSize: 2 ** 31 - 4 },
  };
  it('sizes a 16,384-frame 192x192 uint16 record slot', () => {
    const plan = planGpuEncoder({ ...base, frames: 16384 });
    const decoded = plan.buffers.find((b) => b.label === 'decoded')?.bytes;
    expect(decoded).toBe(16384 * 192 * 192 * 2);
    expect(plan.laneStride).toBe(4608 + 2);
    // The lane scratch is one for both slots, not one a slot.
    expect(plan.buffers.find((b) => b.label === 'lane scratch')).toBeUndefined();
    expect(plan.shared).toEqual([{ label: 'lane scratch', bytes: 16384 * 4 * 4610 * 4, bound: true }]);
    expect(plan.sharedBytes).toBe(16384 * 4 * 4610 * 4);
    // The default decode variant's scratch: 4,096 workgroups per dispatch x 2 blocks x 8 KiB and the pixel flags
    // as bits (a word per 32 pixels), once for the slots.
    const flagBits = (192 * 192) / 8;
    expect(plan.decodeScratchBytes).toBe(4096 * 2 * 8192 + flagBits);
    expect(plan.totalBytes).toBe(2 * plan.slotBytes + plan.sharedBytes + plan.decodeScratchBytes);
    expect(planGpuEncoder({ ...base, frames: 7 }).decodeScratchBytes).toBe(7 * 2 * 8192 + flagBits);
    expect(planGpuEncoder({ ...base, frames: 16384, decodeVariant: 'base' }).decodeScratchBytes).toBe(0);
  });
  it('sizes readbacks to the words needed + 25 % in 16 MiB steps, never above the plan, never below the need', () => {
    const MiB = 2 ** 20;
    expect(readbackBytes(4, 2 ** 30)).toBe(16 * MiB);
    expect(readbackBytes(103_000_000, 1_208_483_840)).toBe(128 * MiB);
    expect(readbackBytes(1_000_000_000, 1_208_483_840)).toBe(1_208_483_840);
    expect(readbackBytes(20 * MiB, 21 * MiB)).toBe(21 * MiB);
    expect(readbackBytes(4 * MiB + 4, 4 * MiB)).toBe(4 * MiB + 4);
  });
  it('refuses record slots and lent readbacks over the GPU budget, with the numbers', () => {
    const plan = planGpuEncoder({ ...base, frames: 16384, slots: 4, lendReadbacks: 3 });
    expect(plan.lendBytes).toBe(16384 * 4 * 4610 * 4);
    expect(plan.totalBytes).toBe(
      4 * plan.slotBytes + plan.sharedBytes + plan.decodeScratchBytes + 3 * plan.lendBytes,
    );
    const fits = 4 * plan.slotBytes + plan.sharedBytes + plan.decodeScratchBytes;
    expect(planGpuEncoder({ ...base, frames: 16384, slots: 4, budgetBytes: fits }).totalBytes).toBe(fits);
    expect(() => planGpuEncoder({ ...base, frames: 16384, slots: 4, budgetBytes: fits - 1 })).toThrow(
      /lane scratch 1\.13 GiB \+ decode scratch 0\.06 GiB/,
    );
    expect(() =>
      planGpuEncoder({
        ...base,
        frames: 16384,
        slots: 4,
        lendReadbacks: 3,
        budgetBytes: plan.totalBytes - 1,
      }),
    ).toThrow(
      /4 record slot\(s\) of [\d.]+ GiB \(16384 frames each\) \+ lane scratch 1\.13 GiB \+ decode scratch 0\.06 GiB \+ 3 lent readback\(s\) of [\d.]+ GiB = [\d.]+ GiB exceed the budget of [\d.]+ GiB; at most 3 slot\(s\) fit/,
    );
  });
  it("refuses a record whose buffers exceed the GPU's binding limit, with the numbers", () => {
    expect(() => planGpuEncoder({ ...base, frames: 32768 })).toThrow(
      /the decoded buffer of a 32768-frame record needs 2415919104 bytes; this GPU allows 2147483644 per binding/,
    );
  });
});
