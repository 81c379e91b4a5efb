/**
 * The slotted uint16 high plane of a GPU load (gpu/resident-layout.ts 'slots', docs/pass-graph.md): each batch's
 * transpose writes its high bytes into the slot's high scratch, and high-pool-place moves the hot segments'
 * words into slot pools. The pools start at the plan's capacity; a batch that finds a pool full leaves its
 * unplaced pairs in its scratch (nothing is lost), and before that scratch is reused the host grows the pool
 * (a larger buffer, the old slots copied on the GPU) and runs the batch's place pass again. That is the only
 * extra wait of a load, and only a load whose data has more hot segments than the pools held waits so.
 */
import { StemflowError } from '../errors.ts';
import type { LoadPlan } from '../gpu/load-plan.ts';
import { formatBytes } from '../gpu/load-plan.ts';
import { createHighPoolPlacePass, placeStateBytes } from '../gpu/passes/high-pool-place.ts';
import { bufferPixelRange } from '../gpu/resident-index.ts';
import { batchHotWordsPerPixel, type ResidentLayout, slottedResidentLayout } from '../gpu/resident-layout.ts';

export interface HighSlotsBatch {
  firstFrame: number;
  frames: number;
}

export interface HighSlots {
  /** The resident layout and buffers now (pools replaced as they grow). */
  readonly layout: ResidentLayout;
  readonly resident: readonly GPUBuffer[];
  /** The transpose's highScratch for load slot `s`. */
  scratch(s: number): {
    buffers: readonly GPUBuffer[];
    wordsPerPixel: number;
    batchHot: GPUBuffer;
    batchHotWords: number;
  };
  /** Records the place pass of a batch in load slot `s` and the copy of its state. */
  encode(encoder: GPUCommandEncoder, s: number, batch: HighSlotsBatch): void;
  /** After submitting slot `s`'s batch: resolves when its state is readable (the batch is done). */
  submitted(s: number): Promise<void>;
  /** Once submitted(s) resolved: grows full pools and places the batch's remaining pairs, until none is left. */
  settle(s: number): Promise<void>;
  /** Pool growths so far (each a new buffer and a rerun of one batch's place pass). */
  readonly growths: number;
  /** Destroys the scratch, state and readback buffers (the resident buffers stay with the load). */
  destroyScratch(): void;
}

/**
 * `resident` is the load's resident set for `plan.resident` (slotted); `owned` is the load's list of buffers to
 * free on failure, which this keeps current as pools are replaced.
 */
export function createHighSlots(
  device: GPUDevice,
  plan: LoadPlan,
  resident: GPUBuffer[],
  owned: GPUBuffer[],
  make: (label: string, size: number, usage: number) => GPUBuffer,
): HighSlots {
  let layout = plan.resident;
  const n = layout.rowBuffers;
  const wordsPerPixel = plan.highScratchWordsPerPixel;
  const batchHotWords = batchHotWordsPerPixel(layout, plan.batchFrames);
  const STORAGE = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
  const state = make('high pools state', placeStateBytes(layout), STORAGE);
  const slots = Array.from({ length: plan.slots }, (_, s) => ({
    scratch: Array.from({ length: n }, (_, b) => {
      const { first, end } = bufferPixelRange(layout, b);
      return make(`slot ${s} high scratch ${b}`, (end - first) * wordsPerPixel * 4, GPUBufferUsage.STORAGE);
    }),
    batchHot: make(`slot ${s} batch hot bits`, plan.pixels * batchHotWords * 4, GPUBufferUsage.STORAGE),
    readback: make(
      `slot ${s} pools state`,
      placeStateBytes(layout),
      GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
    ),
    batch: null as HighSlotsBatch | null,
    /** Pool capacities the batch's last place pass ran with. */
    capacity: [] as number[],
  }));
  const place = createHighPoolPlacePass(device);
  let growths = 0;

  const encodePlace = (encoder: GPUCommandEncoder, s: number, rowBuffers?: number[]) => {
    const slot = slots[s];
    const batch = slot.batch!;
    place.encode(encoder, {
      layout,
      ...batch,
      scratch: { buffers: slot.scratch, wordsPerPixel, batchHot: slot.batchHot, batchHotWords },
      resident,
      state,
      rowBuffers,
    });
    encoder.copyBufferToBuffer(state, 0, slot.readback, 0, placeStateBytes(layout));
    slot.capacity = [...layout.hotSlots];
  };

  const mapState = (s: number) => {
    const mapped = slots[s].readback.mapAsync(GPUMapMode.READ);
    // Awaited by the load; a load that fails first destroys the buffer, and this rejection is then expected.
    mapped.catch(() => {});
    return mapped;
  };

  /** The pool of row buffer b at `capacity` slots: a new buffer holding the old slots. */
  const grow = (encoder: GPUCommandEncoder, b: number, need: number) => {
    const old = resident[n + b];
    const capacity = Math.min(plan.maxPoolSlots[b], Math.max(2 * layout.hotSlots[b], need));
    if (need > plan.maxPoolSlots[b]) {
      throw new StemflowError(
        'budget',
        `Row buffer ${b}'s hot segments need ${need} slots of ${layout.slotFrames} bytes, more than one GPU binding holds (${plan.maxPoolSlots[b]}).`,
      );
    }
    const capacities = [...layout.hotSlots];
    capacities[b] = capacity;
    const next = slottedResidentLayout(layout, capacities);
    const bytes = next.bufferBytes[n + b];
    const peak = plan.peakBytes - plan.residentBytes + next.totalBytes + old.size;
    if (plan.budgetBytes !== undefined && peak > plan.budgetBytes) {
      throw new StemflowError(
        'budget',
        `This acquisition has more segments with counts above 255 than its high-byte slot pools held: growing pool ${b} to ${formatBytes(bytes)} needs ${formatBytes(peak)} at peak, more than the budget of ${formatBytes(plan.budgetBytes)}`,
      );
    }
    const buffer = device.createBuffer({
      label: `resident high pool ${b} (grown)`,
      size: bytes,
      usage: STORAGE,
    });
    owned.push(buffer);
    encoder.copyBufferToBuffer(old, 0, buffer, 0, layout.hotSlots[b] * layout.slotFrames);
    resident[n + b] = buffer;
    layout = next;
    growths++;
    return old;
  };

  return {
    get layout() {
      return layout;
    },
    get resident() {
      return resident;
    },
    get growths() {
      return growths;
    },
    scratch: (s) => ({
      buffers: slots[s].scratch,
      wordsPerPixel,
      batchHot: slots[s].batchHot,
      batchHotWords,
    }),
    encode(encoder, s, batch) {
      slots[s].batch = batch;
      encodePlace(encoder, s);
    },
    submitted: mapState,
    async settle(s) {
      const slot = slots[s];
      for (;;) {
        const words = new Uint32Array(slot.readback.getMappedRange().slice(0));
        slot.readback.unmap();
        const failed = Array.from(words.subarray(n, 2 * n));
        const rows = failed.flatMap((f, b) => (f > 0 ? [b] : []));
        if (rows.length === 0) return;
        const encoder = device.createCommandEncoder({
          label: `grow high pools, batch at ${slot.batch!.firstFrame}`,
        });
        const retired: GPUBuffer[] = [];
        device.pushErrorScope('out-of-memory');
        let oom: GPUError | null;
        try {
          for (const b of rows) {
            // Grown since this batch ran: the room may already be there; else the pool doubles (at least).
            if (layout.hotSlots[b] <= slot.capacity[b])
              retired.push(grow(encoder, b, layout.hotSlots[b] + failed[b]));
          }
          encodePlace(encoder, s, rows);
          device.queue.submit([encoder.finish()]);
          for (const old of retired) {
            old.destroy();
            owned.splice(owned.indexOf(old), 1);
          }
        } finally {
          oom = await device.popErrorScope();
        }
        if (oom) {
          throw new StemflowError(
            'budget',
            `The GPU ran out of memory growing the high-byte slot pools: ${oom.message}`,
          );
        }
        await mapState(s);
      }
    },
    destroyScratch() {
      for (const slot of slots) for (const b of [...slot.scratch, slot.batchHot, slot.readback]) b.destroy();
      state.destroy();
      place.destroy();
    },
  };
}
