import { describe, expect, it } from 'vitest';
import { isStemflowError } from '../errors';
import { planGpuVerify, planVerifyPieces } from './gpu-verify-plan';

describe('planGpuVerify: the GPU verifier sized before anything is allocated', () => {
  // 16,384-frame records of 192 x 192 uint16, 16 lanes a frame, 16 records (the H200 benchmark).
  const base = {
    frameCount: 262144,
    maxFrames: 16384,
    maxRecordFrames: 16384,
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
    expect(bytes(plan, 'lane errors')).toBe(4); // one counter: only counts come back
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
    // Pieces of half a record: the decoded scratch and the chunk index halve; the lane offsets stay the
    // record's (the compare pass reads a piece's from an offset).
    const half = planGpuVerify({ ...base, maxFrames: 8192 });
    expect(bytes(half, 'decoded')).toBe(8192 * 192 * 192 * 2);
    expect(bytes(half, 'index')).toBe(8192 * 8);
    expect(bytes(half, 'lane offsets')).toBe((16384 * 16 + 1) * 4);
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

describe('planVerifyPieces: records split into pieces of whole mismatch blocks', () => {
  // Two records of 7 and 5 frames, 2 lanes a frame, blocks of 3 frames; lane k holds k + 1 words.
  const offsets = (frames: number) => {
    const o = new Uint32Array(frames * 2 + 1);
    for (let k = 0; k < frames * 2; k++) o[k + 1] = o[k] + k + 1;
    return o;
  };
  const records = [
    { frames: 7, firstFrame: 0, offsets: offsets(7) },
    { frames: 5, firstFrame: 7, offsets: offsets(5) },
  ];
  const storedSizes = Array.from({ length: 12 }, (_, f) => 100 + f);
  const plan = (pieceFrames: number) =>
    planVerifyPieces(records, { slices: 2, blockFrames: 3, pieceFrames, storedSizes });

  it('covers every frame, lane word and block once, in order', () => {
    const pieces = plan(4); // rounded down to 3 frames: one block
    expect(pieces.map((p) => [p.record, p.firstFrame, p.start, p.frames, p.blockBase])).toEqual([
      [0, 0, 0, 3, 0],
      [0, 3, 3, 3, 1],
      [0, 6, 6, 1, 2],
      [1, 7, 0, 3, 3],
      [1, 10, 3, 2, 4],
    ]);
    // Words of lanes [2 start, 2 (start + frames)): the sum of k + 1 over them.
    const words = (a: number, b: number) => (b * (b + 1)) / 2 - (a * (a + 1)) / 2;
    expect(pieces.map((p) => [p.from, p.to])).toEqual([
      [0, words(0, 6)],
      [words(0, 6), words(0, 12)],
      [words(0, 12), words(0, 14)],
      [0, words(0, 6)],
      [words(0, 6), words(0, 10)],
    ]);
    expect(pieces.map((p) => p.storedBytes)).toEqual([303, 312, 106, 324, 221]);
  });

  it('one piece a record when pieces are larger; at least one block; refuses a bad size', () => {
    expect(plan(1000).map((p) => [p.frames, p.to])).toEqual([
      [7, records[0].offsets[14]],
      [5, records[1].offsets[10]],
    ]);
    expect(plan(1).map((p) => p.frames)).toEqual([3, 3, 1, 3, 2]);
    expect(plan(6).map((p) => p.frames)).toEqual([6, 1, 5]);
    for (const bad of [0, 2.5, Number.NaN]) {
      expect(() => plan(bad)).toThrow(/positive integer/);
    }
  });
});
