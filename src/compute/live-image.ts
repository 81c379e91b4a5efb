/**
 * The live virtual image of a mask being dragged, held on the GPU as exact u64 sums per scan position
 * (docs/pass-graph.md, stage 3). One step = one submission and one readback: start from zero, from the exact
 * frame totals over the unflagged pixels, or from the current image; add the listed pixels' scan images and
 * subtract others (`resident-virtual-image` in add and subtract mode). So a mask of more than half the
 * detector reads only its complement (image = totals - complement), and a nudge reads only the pixels that
 * changed, without leaving the GPU. Every buffer is made once and reused; only the small per-dispatch
 * parameter buffers are made per step.
 */
import { StemflowError } from '../errors.ts';
import type { GpuTimer } from '../gpu/gpu-timer.ts';
import type { ResidentVirtualImagePass } from '../gpu/passes/resident-virtual-image.ts';
import { groupPixelsByBuffer, type PixelGroup } from '../gpu/resident-index.ts';
import type { GpuLoad } from './gpu-load.ts';

/** Where a step starts: a zero image, the frame totals over unflagged pixels, or the current image. */
export type LiveStart = 'zero' | 'totals' | 'current';

export interface LiveStep {
  start: LiveStart;
  /** Sorted unflagged pixels whose scan images are added. */
  add: Uint32Array;
  /** Sorted unflagged pixels whose scan images are subtracted (disjoint from `add`). */
  subtract: Uint32Array;
  /** Benchmarks: GPU timestamps 'live' (start), 'readback' (the copy to the host) and 'end'. */
  timer?: GpuTimer;
}

export interface LiveImage {
  /** Whether 'totals' can start a step (the imager's flagged pixels are the load's). */
  readonly hasTotals: boolean;
  /**
   * Records and submits the step before returning (so steps apply in call order), then reads the image back.
   * Exact while sums stay below 2^53 (always for detectors below 2^21 pixels of counts < 2^32).
   */
  step(step: LiveStep): Promise<Float64Array>;
  /** Later steps fail; steps already submitted finish their readback, then every buffer is destroyed. */
  release(): void;
}

export function createLiveImage(
  device: GPUDevice,
  load: GpuLoad,
  pass: ResidentVirtualImagePass,
  flagged: Uint8Array | null,
): LiveImage {
  const layout = load.plan.resident;
  const bytes = layout.frames * 8;
  const hasTotals = sameFlags(flagged, load.flagged);
  const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC;
  const image = device.createBuffer({ label: 'live image', size: bytes, usage });
  const list = device.createBuffer({
    label: 'live pixel lists',
    size: Math.max(4, layout.pixels * 4),
    usage,
  });
  let totals: GPUBuffer | null = null;
  const idle: GPUBuffer[] = [];
  const all: GPUBuffer[] = [image, list];
  let released = false;
  // Readbacks not settled yet: release waits for them (destroying a buffer under its mapAsync rejects it).
  const mapping = new Set<Promise<void>>();
  const destroyAll = () => {
    for (const b of all) b.destroy();
    all.length = 0;
    idle.length = 0;
  };

  const totalsBuffer = () => {
    if (!totals) {
      totals = device.createBuffer({ label: 'live frame totals', size: bytes, usage });
      all.push(totals);
      device.queue.writeBuffer(totals, 0, load.frameTotals);
    }
    return totals;
  };
  const staging = () => {
    const b =
      idle.pop() ??
      device.createBuffer({
        label: 'live image readback',
        size: bytes,
        usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
      });
    if (!all.includes(b)) all.push(b);
    return b;
  };

  const step = async ({ start, add, subtract, timer }: LiveStep): Promise<Float64Array> => {
    if (released) throw new StemflowError('invalid', 'The live image was released.');
    if (add.length + subtract.length > layout.pixels) {
      throw new StemflowError(
        'invalid',
        `A live step lists more than the detector's ${layout.pixels} pixels.`,
      );
    }
    if (start === 'totals' && !hasTotals) {
      throw new StemflowError(
        'invalid',
        'The frame totals leave out other pixels than this mask session: start from zero.',
      );
    }
    const addGroups = groupPixelsByBuffer(layout, add);
    const subtractGroups: PixelGroup[] = groupPixelsByBuffer(layout, subtract).map((g) => ({
      ...g,
      start: g.start + add.length,
    }));
    if (add.length) device.queue.writeBuffer(list, 0, add);
    if (subtract.length) device.queue.writeBuffer(list, add.length * 4, subtract);
    const encoder = device.createCommandEncoder({ label: 'live image step' });
    timer?.mark(encoder, 'live');
    if (start === 'zero') encoder.clearBuffer(image);
    if (start === 'totals') encoder.copyBufferToBuffer(totalsBuffer(), 0, image, 0, bytes);
    const job = { layout, resident: load.resident, pixelList: list, image, clear: false };
    const params = [
      ...pass.encode(encoder, { ...job, groups: addGroups }),
      ...pass.encode(encoder, { ...job, groups: subtractGroups, subtract: true }),
    ];
    timer?.mark(encoder, 'readback');
    const target = staging();
    encoder.copyBufferToBuffer(image, 0, target, 0, bytes);
    timer?.mark(encoder, 'end');
    device.queue.submit([encoder.finish()]);
    for (const p of params) p.destroy();
    let settle = () => {};
    const settled = new Promise<void>((resolve) => {
      settle = resolve;
    });
    mapping.add(settled);
    try {
      await target.mapAsync(GPUMapMode.READ);
      const words = new Uint32Array(target.getMappedRange());
      try {
        return u64PairsToFloat64(words, 0, layout.frames);
      } finally {
        target.unmap();
        if (!released) idle.push(target);
      }
    } finally {
      mapping.delete(settled);
      settle();
    }
  };

  return {
    hasTotals,
    step,
    release() {
      if (released) return;
      released = true;
      if (mapping.size === 0) destroyAll();
      else void Promise.all(mapping).then(destroyAll);
    },
  };
}

function sameFlags(a: Uint8Array | null, b: Uint8Array): boolean {
  for (let p = 0; p < b.length; p++) if ((a?.[p] ? 1 : 0) !== (b[p] ? 1 : 0)) return false;
  return !a || a.length === b.length;
}

/**
 * (lo, hi) u32 pairs to float64: exact while values stay below 2^53, which they do here (a position's sum is at
 * most 36,864 pixels x (2^32 - 1) < 2^48 even for uint32 sources on a 192 x 192 detector).
 */
export function u64PairsToFloat64(words: Uint32Array, start: number, count: number): Float64Array {
  const out = new Float64Array(count);
  for (let i = 0; i < count; i++) {
    const hi = words[start + 2 * i + 1];
    if (hi >= 0x200000) throw new Error(`A sum at position ${i} reaches 2^53 and cannot be held exactly`);
    out[i] = words[start + 2 * i] + hi * 4294967296;
  }
  return out;
}
