/**
 * Compaction of a loaded uint16 resident set's high byte plane (docs/pass-graph.md, "Resident"): only the hot
 * segments (pixel, segment with a value above 255) are ever read, so after the load they are copied into one
 * compact buffer per row buffer (slot k at byte k x slotFrames, pixel by pixel, `compactResidentLayout`)
 * and the full high-plane buffers are freed: resident memory drops from 2 bytes per value to 1 byte plus the
 * hot segments. Copies only (copyBufferToBuffer, one per run of consecutive hot segments of a pixel), so the
 * bytes are the full plane's exactly; the host reference is `compactResident` (kernels/detector-transpose.ts).
 * Row buffer by row buffer: a compact buffer is created and filled before its full buffer is destroyed, so the
 * peak is the resident set plus one compact buffer.
 */
import { StemflowError } from '../errors.ts';
import { residentWordIndex } from './resident-index.ts';
import { compactResidentLayout, type ResidentLayout, residentParts } from './resident-layout.ts';

export interface CompactedResident {
  layout: ResidentLayout;
  /** The new resident set: low plane (the same buffers), slot pools, hot bitmap, slot table. */
  resident: GPUBuffer[];
  /** Copy commands recorded (runs of hot segments). */
  copies: number;
  /** Bytes before and after. */
  bytesBefore: number;
  bytesAfter: number;
}

export async function compactHighPlane(
  device: GPUDevice,
  layout: ResidentLayout,
  resident: readonly GPUBuffer[],
  hotBitmap: Uint32Array,
): Promise<CompactedResident> {
  const parts = residentParts(layout, resident);
  if (!parts.hi || !parts.hot || layout.high !== 'full') {
    throw new StemflowError('invalid', 'Only a full uint16 high byte plane can be compacted.');
  }
  const { layout: compact, slotTable } = compactResidentLayout(layout, hotBitmap);
  const S = layout.segmentFrames;
  const rowBytes = layout.wordsPerPixel * 4;
  const tileSegments = layout.tileFrames / S;
  const created: GPUBuffer[] = [];
  const create = async (label: string, size: number) => {
    device.pushErrorScope('out-of-memory');
    const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
    const b = device.createBuffer({ label, size, usage });
    created.push(b);
    const oom = await device.popErrorScope();
    if (oom) {
      throw new StemflowError(
        'budget',
        `The GPU ran out of memory compacting the high byte plane (${size} bytes): ${oom.message}`,
      );
    }
    return b;
  };
  let copies = 0;
  try {
    const table = await create('resident slot table', compact.bufferBytes[compact.bufferBytes.length - 1]);
    device.queue.writeBuffer(table, 0, slotTable);
    const high: GPUBuffer[] = [];
    for (let b = 0; b < layout.rowBuffers; b++) {
      const target = await create(`resident high compact ${b}`, compact.bufferBytes[layout.rowBuffers + b]);
      high.push(target);
      const encoder = device.createCommandEncoder({ label: `compact high plane ${b}` });
      const first = b * layout.pixelsPerBuffer;
      const end = Math.min(layout.pixels, first + layout.pixelsPerBuffer);
      for (let p = first; p < end; p++) {
        const bits = p * layout.hotWordsPerPixel;
        const isHot = (g: number) => (hotBitmap[bits + (g >>> 5)] >>> (g & 31)) & 1;
        for (let g = 0; g < layout.segments; ) {
          if (!isHot(g)) {
            g++;
            continue;
          }
          // A run of hot segments within one row tile (tiles are whole segments): contiguous in the row buffer.
          const tile = Math.floor(g / tileSegments);
          let g1 = g + 1;
          while (g1 < layout.segments && isHot(g1) && Math.floor(g1 / tileSegments) === tile) g1++;
          const from = g * S;
          const bytes = Math.min(rowBytes, g1 * S) - from;
          // A pixel's hot segments have consecutive slots (compactResidentLayout).
          const to = (slotTable[p * layout.segments + g] - 1) * compact.slotFrames;
          const at = residentWordIndex(layout, p, from / 4).index * 4;
          encoder.copyBufferToBuffer(parts.hi[b], at, target, to, bytes);
          copies++;
          g = g1;
        }
      }
      device.queue.submit([encoder.finish()]);
      await device.queue.onSubmittedWorkDone();
      parts.hi[b].destroy();
    }
    return {
      layout: compact,
      resident: [...parts.lo, ...high, parts.hot, table],
      copies,
      bytesBefore: layout.totalBytes,
      bytesAfter: compact.totalBytes,
    };
  } catch (e) {
    for (const b of created) b.destroy();
    throw e;
  }
}
