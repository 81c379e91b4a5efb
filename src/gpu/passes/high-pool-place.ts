/**
 * GPU pass: one batch of a slotted uint16 high plane (resident-layout.ts, 'slots') from the batch's high scratch
 * into the slots of the (pixel, segment) pairs with high words in the batch (the batch's own hot bits), claiming
 * slots for pairs that have none yet.
 * Shader: src/shaders/high-pool-place.wgsl. CPU twin: src/kernels/high-pool-place.ts. Contract:
 * docs/pass-graph.md.
 *
 * `state` holds, per row buffer b, the pool's used slots at word b and the failed claims of the batch at word
 * rowBuffers + b (`encode` zeroes the failed words first with a queue write, so a readback after the pass holds
 * this batch's: encode, then submit, before encoding another batch).
 * Failed claims leave their pairs without a slot and lose nothing: the scratch still holds their words, and a
 * second run of the same batch with a larger pool places them (every step is idempotent).
 */
import { StemflowError } from '../../errors.ts';
import { checkHighScratch, placeGeometry } from '../../kernels/high-pool-place.ts';
import { checkBindable } from '../chunked-dispatch.ts';
import { bufferPixelRange } from '../resident-index.ts';
import { type ResidentLayout, residentParts } from '../resident-layout.ts';
import { shaderSource } from '../shader-source.ts';
import { packStruct, structLayout } from '../uniform-layout.ts';

const source = shaderSource['high-pool-place'];
const layout = structLayout(source, 'Params');
const THREADS = 64;

export interface HighPoolPlaceJob {
  layout: ResidentLayout;
  firstFrame: number;
  frames: number;
  /**
   * The batch's high scratch, one buffer per row buffer (rows of wordsPerPixel words from word firstFrame / 4),
   * and its own hot bits (batchHotWords a pixel): what detector-transpose got as its highScratch.
   */
  scratch: {
    buffers: readonly GPUBuffer[];
    wordsPerPixel: number;
    batchHot: GPUBuffer;
    batchHotWords: number;
  };
  /** The resident set of the slotted layout (its pools and slot table are used). */
  resident: readonly GPUBuffer[];
  /** 2 x rowBuffers u32: used slots, then this batch's failed claims (STORAGE | COPY_DST). */
  state: GPUBuffer;
  /** Slots per pool (default layout.hotSlots). */
  capacity?: readonly number[];
  /** Only these row buffers (default: all). */
  rowBuffers?: readonly number[];
}

export interface HighPoolPlacePass {
  /**
   * Records the pass (after zeroing the batch's failed counts). Its uniform buffers and bind groups are kept
   * per scratch buffer and rebuilt when a pool, the table, the batch's bits or the state buffer changes;
   * `destroy` frees them.
   */
  encode(encoder: GPUCommandEncoder, job: HighPoolPlaceJob): void;
  destroy(): void;
}

/** Bytes of the pass's `state` buffer for a layout. */
export function placeStateBytes(resident: ResidentLayout): number {
  return 8 * resident.rowBuffers;
}

export function createHighPoolPlacePass(device: GPUDevice): HighPoolPlacePass {
  const pipeline = device.createComputePipeline({
    label: 'high-pool-place',
    layout: 'auto',
    compute: {
      module: device.createShaderModule({ label: 'high-pool-place.wgsl', code: source }),
      entryPoint: 'main',
    },
  });
  const maxGroups = device.limits.maxComputeWorkgroupsPerDimension;
  const stride = Math.max(layout.byteSize, device.limits.minUniformBufferOffsetAlignment);
  // Per scratch buffer: the uniform buffer (a slot per dispatch) and the bind groups of the buffers bound now.
  const kept = new Map<
    GPUBuffer,
    { params: GPUBuffer; chunks: number; key: GPUBuffer[]; groups: GPUBindGroup[] }
  >();
  return {
    encode(encoder, job) {
      const { layout: plan, firstFrame, frames, scratch, resident, state } = job;
      const g = placeGeometry(plan, firstFrame, frames);
      const parts = residentParts(plan, resident);
      const { hi, slotTable } = parts;
      const hot = scratch.batchHot;
      if (!hi || !slotTable) throw new StemflowError('invalid', 'No slotted high plane.');
      checkHighScratch(plan, firstFrame, frames, {
        ...scratch,
        bufferBytes: scratch.buffers.map((buffer) => buffer.size),
        batchHotBytes: hot.size,
      });
      const capacity = job.capacity ?? plan.hotSlots;
      if (state.size < placeStateBytes(plan)) {
        throw new StemflowError('invalid', 'The pool state buffer is too small.');
      }
      const which = job.rowBuffers ?? Array.from({ length: plan.rowBuffers }, (_, b) => b);
      // The batch's failed counts from zero: a queue write, ordered before this encoder's submission.
      device.queue.writeBuffer(state, 4 * plan.rowBuffers, new Uint32Array(plan.rowBuffers));
      // One compute pass, a dispatch (or a few) per row buffer.
      const compute = encoder.beginComputePass({ label: 'high-pool-place' });
      compute.setPipeline(pipeline);
      for (const b of which) {
        const { first, end } = bufferPixelRange(plan, b);
        const pool = hi[b];
        const target = scratch.buffers[b];
        if (pool.size < capacity[b] * plan.slotFrames) {
          throw new StemflowError('invalid', `Pool ${b} holds fewer than ${capacity[b]} slots.`);
        }
        const pixelBlocks = Math.ceil((end - first) / THREADS);
        const segments = g.segEnd - g.segFirst;
        // Whole segments per dispatch, within the workgroup limit.
        const perChunk = Math.max(1, Math.floor(maxGroups / pixelBlocks));
        const chunks = Math.ceil(segments / perChunk);
        const key = [pool, slotTable, hot, state];
        let entry = kept.get(target);
        if (!entry || entry.chunks < chunks || entry.key.some((k, i) => k !== key[i])) {
          for (const [what, buffer] of [
            ['slot pool', pool],
            ['high scratch', target],
            ['slot table', slotTable],
          ] as const) {
            checkBindable(device, buffer, `${what} ${b}`);
          }
          const size = Math.max(chunks, entry?.chunks ?? 0);
          const params =
            entry && entry.chunks >= size
              ? entry.params
              : device.createBuffer({
                  label: `high-pool-place buffer ${b} params`,
                  size: size * stride,
                  usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST,
                });
          if (entry && entry.params !== params) entry.params.destroy();
          const groups = Array.from({ length: size }, (_, c) =>
            device.createBindGroup({
              label: `high-pool-place buffer ${b} chunk ${c}`,
              layout: pipeline.getBindGroupLayout(0),
              entries: [
                { binding: 0, resource: { buffer: params, offset: c * stride, size: layout.byteSize } },
                { binding: 1, resource: { buffer: target } },
                { binding: 2, resource: { buffer: pool } },
                { binding: 3, resource: { buffer: slotTable } },
                { binding: 4, resource: { buffer: hot } },
                { binding: 5, resource: { buffer: state } },
              ],
            }),
          );
          entry = { params, chunks: size, key, groups };
          kept.set(target, entry);
        }
        const bytes = new ArrayBuffer(chunks * stride);
        for (let c = 0; c < chunks; c++) {
          const s = c * perChunk;
          packStruct(
            layout,
            {
              row_first_pixel: first,
              pixel_count: end - first,
              pixel_blocks: pixelBlocks,
              scratch_words_per_pixel: scratch.wordsPerPixel,
              batch_word0: g.batchWord0,
              batch_words: g.batchWords,
              seg_first: g.segFirst + s,
              segment_words: g.segmentWords,
              slot_words: g.slotWords,
              segments: plan.segments,
              batch_hot_words: scratch.batchHotWords,
              batch_seg_first: g.segFirst,
              capacity: capacity[b],
              state_used: b,
              state_failed: plan.rowBuffers + b,
            },
            bytes,
            c * stride,
          );
        }
        // Queue-ordered: the previous batch of this scratch was submitted before, and has run by then.
        device.queue.writeBuffer(entry.params, 0, bytes);
        for (let c = 0; c < chunks; c++) {
          compute.setBindGroup(0, entry.groups[c]);
          compute.dispatchWorkgroups(pixelBlocks * Math.min(perChunk, segments - c * perChunk));
        }
      }
      compute.end();
    },
    destroy() {
      for (const { params } of kept.values()) params.destroy();
      kept.clear();
    },
  };
}
