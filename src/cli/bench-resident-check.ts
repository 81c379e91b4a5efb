/**
 * An exactness check of `stemflow bench load` (src/cli/bench.ts): sampled resident rows of a load against the
 * synthetic acquisition's values.
 */
import type { generateSynthetic } from '../bench/synthetic';
import type { GpuLoad } from '../compute/gpu-load';
import { readBuffer } from '../compute/readback';
import type { GpuContext } from '../gpu/device';
import { locatePixel } from '../gpu/resident-index';
import { residentParts } from '../gpu/resident-layout';
import { residentValueAt } from '../kernels/detector-transpose';

/**
 * Sampled resident rows read back and compared with the synthetic values, value by value (uint16: the low and
 * high planes, the high byte taken only where the hot bit is set), and every hot bit of those pixels checked
 * against the values of its segment.
 */
export async function checkResidentRows(
  ctx: GpuContext,
  load: GpuLoad,
  acq: ReturnType<typeof generateSynthetic>,
): Promise<boolean> {
  const layout = load.plan.resident;
  const pixels = layout.pixels;
  const sample = [
    0,
    1,
    Math.floor(pixels / 2) + Math.floor(Math.sqrt(pixels) / 2),
    pixels - 1,
    layout.pixelsPerBuffer - 1,
    Math.min(pixels - 1, layout.pixelsPerBuffer),
  ];
  const rowBytes = layout.wordsPerPixel * 4;
  for (const p of sample) {
    const { buffer, runs } = locatePixel(layout, p);
    // This pixel's rows as a one-pixel resident set (one untiled row at word 0), with its own hot bitmap words.
    const one = { ...layout, pixels: 1, pixelsPerBuffer: 1, rowBuffers: 1, tileWords: layout.wordsPerPixel };
    const readRow = async (from: GPUBuffer) => {
      const row = new Uint8Array(rowBytes);
      for (const r of runs)
        row.set(await readBuffer(ctx.device, from, r.wordOffset * 4, r.words * 4), r.rowWord * 4);
      return row;
    };
    const rows: Uint8Array[] = [await readRow(load.resident[buffer])];
    const high = load.resident[layout.rowBuffers + buffer];
    const bits = load.hotBitmap?.subarray(p * layout.hotWordsPerPixel, (p + 1) * layout.hotWordsPerPixel);
    if (layout.high === 'full') rows.push(await readRow(high));
    // A slotted high plane: the pixel's slots, in segment order, with its own slot table (1, 2, ...).
    let table: Uint32Array | null = null;
    if (layout.high === 'slots') {
      const { slotTable } = residentParts(layout, load.resident);
      const entries = new Uint32Array(
        (await readBuffer(ctx.device, slotTable!, p * layout.segments * 4, layout.segments * 4)).buffer,
      );
      table = new Uint32Array(layout.segments);
      const slots: Uint8Array[] = [];
      for (let g = 0; g < layout.segments; g++) {
        if (entries[g] === 0) continue;
        slots.push(
          await readBuffer(ctx.device, high, (entries[g] - 1) * layout.slotFrames, layout.slotFrames),
        );
        table[g] = slots.length;
      }
      const joined = new Uint8Array(Math.max(4, slots.length * layout.slotFrames));
      for (const [i, s] of slots.entries()) joined.set(s, i * layout.slotFrames);
      rows.push(joined);
    }
    if (bits) rows.push(new Uint8Array(bits.buffer, bits.byteOffset, bits.byteLength));
    if (table) rows.push(new Uint8Array(table.buffer));
    const words = rows.map((r) => new Uint32Array(r.buffer, r.byteOffset, r.byteLength / 4));
    const hot = new Set<number>();
    for (let i = 0; i < layout.frames; i++) {
      const v = acq.values[acq.chunkOf(i)][p];
      if (residentValueAt(one, words, 0, i) !== v) return false;
      if (v > 255) hot.add(Math.floor(i / layout.segmentFrames));
    }
    for (let g = 0; g < layout.segments; g++) {
      const bit = (words[2][g >>> 5] >>> (g & 31)) & 1;
      if (bit !== (hot.has(g) ? 1 : 0)) return false;
    }
  }
  return true;
}
