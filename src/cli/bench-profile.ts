import { readBuffer } from '../compute/readback';
import type { GpuContext } from '../gpu/device';
import { planGpuLoad } from '../gpu/load-plan';
import { createAuditBuffer, createBslz4DecodePass } from '../gpu/passes/bslz4-decode';
import { createDetectorTransposePass, createResidentBuffers } from '../gpu/passes/detector-transpose';
import type { AcquisitionSource } from '../source/acquisition-source';

export interface PassProfile {
  batchFrames: number;
  batches: number;
  /** GPU time of one batch's pass, from repeated back-to-back dispatches (submit to completion / repeats). */
  decodeMs: number;
  transposeMs: number;
  /** Decoded bytes of one batch (frames x pixels x 2). */
  decodedBytes: number;
  /** (decode + transpose) x batches: the GPU time of the whole scan's load graph. */
  scanGpuMs: number;
  repeats: number;
}

/**
 * GPU time per pass, measured on the first batch of the real data: the batch is uploaded once, then each
 * pass runs `repeats` times in one submission and the wall time to completion is divided by `repeats`
 * (a warm-up run first). The resident layout is the full scan's, so the transpose writes where it would.
 */
export async function profileLoadPasses(
  ctx: GpuContext,
  source: AcquisitionSource,
  { batchFrames, repeats = 8 }: { batchFrames?: number; repeats?: number },
): Promise<PassProfile> {
  const { device } = ctx;
  const [rows, cols] = source.summary.detector;
  const pixels = rows * cols;
  const plan = planGpuLoad({
    frames: source.frameCount,
    detector: [rows, cols],
    elemSize: 2,
    chunkSizes: source.storedSizes(),
    limits: {
      maxBufferSize: ctx.limits.maxBufferSize,
      maxStorageBufferBindingSize: ctx.limits.maxStorageBufferBindingSize,
    },
    batchFrames,
    slots: 1,
  });
  const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC;
  const buffers: GPUBuffer[] = [];
  const make = (size: number) => {
    const b = device.createBuffer({ size: Math.ceil(size / 4) * 4, usage });
    buffers.push(b);
    return b;
  };
  try {
    const resident = createResidentBuffers(device, plan.resident);
    buffers.push(...resident);
    const flags = make(pixels * 4);
    const errors = make(plan.frames * 4);
    const totals = make(plan.frames * 8);
    const dpSums = make(pixels * 8);
    const audit = createAuditBuffer(device);
    buffers.push(audit);
    const compressed = make(plan.compressedSlotBytes);
    const index = make(plan.indexSlotBytes);
    const decoded = make(plan.decodedSlotBytes);
    const count = Math.min(plan.batchFrames, plan.frames);
    const stored = await source.readStored(0, count);
    device.queue.writeBuffer(
      compressed,
      0,
      stored.bytes.buffer,
      stored.bytes.byteOffset,
      Math.floor(stored.bytes.byteLength / 4) * 4,
    );
    const tail = stored.bytes.byteLength % 4;
    if (tail) {
      const last = new Uint8Array(4);
      last.set(stored.bytes.subarray(stored.bytes.byteLength - tail));
      device.queue.writeBuffer(compressed, stored.bytes.byteLength - tail, last);
    }
    const idx = new Uint32Array(count * 2);
    for (let f = 0; f < count; f++) {
      idx[2 * f] = stored.offsets[f];
      idx[2 * f + 1] = stored.sizes[f];
    }
    device.queue.writeBuffer(index, 0, idx);
    await device.queue.onSubmittedWorkDone();
    const decode = createBslz4DecodePass(device, { elemSize: 2 });
    const transpose = createDetectorTransposePass(device, { elemSize: 2 });
    const decodeJob = {
      compressed,
      compressedBytes: Math.ceil(stored.bytes.byteLength / 4) * 4,
      index,
      flags,
      decoded,
      errors,
      totals,
      audit,
      frameCount: count,
      pixels,
      wordsPerFrame: plan.wordsPerFrame,
    };
    const transposeJob = {
      layout: plan.resident,
      decoded,
      wordsPerFrame: plan.wordsPerFrame,
      firstFrame: 0,
      frames: count,
      resident,
      dpSums,
    };
    const time = async (encode: (e: GPUCommandEncoder) => GPUBuffer[], n: number) => {
      const encoder = device.createCommandEncoder();
      const params: GPUBuffer[] = [];
      for (let r = 0; r < n; r++) params.push(...encode(encoder));
      const t = performance.now();
      device.queue.submit([encoder.finish()]);
      await device.queue.onSubmittedWorkDone();
      const elapsed = performance.now() - t;
      for (const p of params) p.destroy();
      return elapsed / n;
    };
    const runDecode = (e: GPUCommandEncoder) => [decode.encode(e, decodeJob)];
    const runTranspose = (e: GPUCommandEncoder) => transpose.encode(e, transposeJob);
    await time(runDecode, 1);
    await time(runTranspose, 1);
    const decodeMs = await time(runDecode, repeats);
    const transposeMs = await time(runTranspose, repeats);
    const errorWords = new Uint32Array((await readBuffer(device, errors, 0, count * 4)).buffer);
    if (errorWords.some((e) => e !== 0)) throw new Error('profile batch failed to decode');
    return {
      batchFrames: count,
      batches: plan.batches,
      decodeMs,
      transposeMs,
      decodedBytes: count * pixels * 2,
      scanGpuMs: (decodeMs + transposeMs) * (plan.frames / count),
      repeats,
    };
  } finally {
    for (const b of buffers) b.destroy();
  }
}
