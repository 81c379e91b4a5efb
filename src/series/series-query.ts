/**
 * One series query's encoding (src/series/series.ts): where each loaded acquisition's mask bits, needs and
 * frames live; the mask bits and "need" words of a query; the record table and dispatch groups of the
 * tans-query passes; the readback copies of the asked-for acquisitions' sums.
 */
import type { LaneGeometry } from '../archive/lanes';
import type { Archive, ArchiveAcquisition } from '../archive/reader';
import { StemflowError } from '../errors';
import { type DispatchChunk, encodeChunks } from '../gpu/chunked-dispatch';
import { structLayout } from '../gpu/uniform-layout';
import source from '../shaders/tans-query.wgsl?raw';
import { chooseQueryBits } from './series-host';
import type { SeriesBuffers } from './series-load';
import { type planSeries, RECORD_WORDS } from './series-plan';

const layout = structLayout(source, 'Params');

/**
 * Maps `bytes` of a query's readback for reading; a lost device (or a destroyed buffer) aborts the mapping, which
 * becomes a typed 'device' error. Both query paths (the lanes' and the index's) wait here.
 */
export async function mapQueryReadback(buffer: GPUBuffer, bytes: number): Promise<void> {
  try {
    await buffer.mapAsync(GPUMapMode.READ, 0, bytes);
  } catch (e) {
    throw new StemflowError(
      'device',
      `The GPU did not finish the series query (${e instanceof Error ? e.message || e.name : String(e)}); the device may have been lost. Release the series and load it again, or load fewer acquisitions.`,
    );
  }
}

/** A series' plan with its placements (what planSeries returns). */
type SeriesPlan = ReturnType<typeof planSeries>;

/** Where a loaded acquisition's bits, needs and frames live, and its flagged pixels. */
export interface SeriesSlot {
  bitsBase: number;
  needBase: number;
  frameBase: number;
  flagged: Uint8Array;
  /** The flagged pixels' indices, joined: acquisitions with the same key share query lists. */
  flaggedKey: string;
}

/** The slot of each chosen acquisition, in the order they were loaded. */
export function seriesSlots(archive: Archive, chosen: number[], pixels: number): Map<number, SeriesSlot> {
  const slot = new Map<number, SeriesSlot>();
  let bitsBase = 0;
  let needBase = 0;
  let frameBase = 0;
  for (const a of chosen) {
    const acq = archive.acquisitions[a];
    const flagged = new Uint8Array(pixels);
    if (acq.pixelMask) for (let i = 0; i < pixels; i++) flagged[i] = acq.pixelMask[i] !== 0 ? 1 : 0;
    const flaggedKey = [...flagged.keys()].filter((p) => flagged[p]).join(',');
    slot.set(a, { bitsBase, needBase, frameBase, flagged, flaggedKey });
    bitsBase += pixels;
    needBase += 2 * acq.geometry.slices;
    frameBase += acq.info.scan[0] * acq.info.scan[1];
  }
  return slot;
}

/** The mask bits and needs of every asked-for acquisition (full or delta, per acquisition). */
export function encodeQueryBits(
  archive: Archive,
  plan: SeriesPlan,
  slot: Map<number, SeriesSlot>,
  mask: Uint8Array,
  order: number[],
  mode: 'auto' | 'full' | 'delta',
  lastMask: Uint8Array | null,
  lastImages: Map<number, Float64Array>,
): {
  bitsAll: Uint32Array;
  needAll: Uint32Array;
  modes: ('full' | 'delta')[];
  decodedPixels: number[];
} {
  const bitsAll = new Uint32Array(plan.bitsWords);
  const needAll = new Uint32Array(plan.needWords);
  const modes: ('full' | 'delta')[] = [];
  const decodedPixels: number[] = [];
  for (const a of order) {
    const acq = archive.acquisitions[a];
    const s = slot.get(a) as SeriesSlot;
    const previous = mode !== 'full' && lastMask && lastImages.has(a) ? lastMask : null;
    const q = chooseQueryBits(mask, previous, s.flagged, acq.geometry, mode);
    modes.push(q.mode);
    decodedPixels.push(q.decoded);
    bitsAll.set(q.bits, s.bitsBase);
    needAll.set(q.need, s.needBase);
  }
  return { bitsAll, needAll, modes, decodedPixels };
}

/** Records of one data buffer that one pipeline runs: consecutive entries of the record table. */
export interface QueryGroup {
  key: string;
  pipeline: GPUComputePipeline;
  buffer: number;
  first: number;
  count: number;
  lanes: number;
}

/**
 * Dispatch groups by pipeline and data buffer: one dispatch (or a few of LANES_PER_DISPATCH) covers every
 * asked-for record in the buffer; a record table maps invocations to records. `used`: the data buffers
 * whose lanes run; `entries`: the records in the table.
 */
export function queryGroups(
  archive: Archive,
  plan: SeriesPlan,
  slot: Map<number, SeriesSlot>,
  order: number[],
  needAll: Uint32Array,
  pipelineFor: (acq: ArchiveAcquisition) => GPUComputePipeline,
): { groups: QueryGroup[]; table: Uint32Array; used: Set<number>; entries: number } {
  const asked = new Set(order);
  const groups: QueryGroup[] = [];
  const table = new Uint32Array(plan.placements.length * RECORD_WORDS);
  const used = new Set<number>();
  let entries = 0;
  // Placements are in buffer order, so a group's records are consecutive entries of the table.
  for (const p of plan.placements) {
    if (!asked.has(p.acquisition)) continue;
    const acq = archive.acquisitions[p.acquisition];
    const s = slot.get(p.acquisition) as SeriesSlot;
    const g: LaneGeometry = acq.geometry;
    const active = neededPixelsCount(needAll, s.needBase, g.slices);
    if (active === 0) continue;
    const rec = acq.records[p.record];
    const pipeline = pipelineFor(acq);
    const key = `${pipeline.label}|${p.buffer}`;
    let group = groups.at(-1);
    if (!group || group.key !== key) {
      group = { key, pipeline, buffer: p.buffer, first: entries, count: 0, lanes: 0 };
      groups.push(group);
    }
    table.set(
      [
        group.lanes,
        rec.frames,
        g.slices,
        g.slicePixels,
        g.pixels,
        p.dataBase,
        p.offsetsBase,
        p.cellsBase,
        p.classBase,
        p.sumsBase,
        rec.dataWords,
        acq.info.detector[1],
        s.bitsBase,
        s.needBase,
        2 * plan.bufferFrames[p.buffer],
        0,
      ],
      entries * RECORD_WORDS,
    );
    group.lanes += rec.frames * active;
    group.count++;
    entries++;
    used.add(p.buffer);
  }
  return { groups, table, used, entries };
}

/** Encodes the tans-query dispatches of every group; returns their parameter buffers (destroy after submit). */
export function encodeQueryGroups(
  device: GPUDevice,
  encoder: GPUCommandEncoder,
  groups: QueryGroup[],
  buffers: SeriesBuffers,
  launch: { workgroupSize: number; lanesPerDispatch: number },
): GPUBuffer[] {
  const { data, offsets, cells, classMaps, bits, need, sums, recordTable } = buffers;
  const { workgroupSize, lanesPerDispatch } = launch;
  const params: GPUBuffer[] = [];
  for (const group of groups) {
    const chunks: DispatchChunk[] = [];
    for (let first = 0; first < group.lanes; first += lanesPerDispatch) {
      const count = Math.min(lanesPerDispatch, group.lanes - first);
      chunks.push({
        params: {
          lane_first: first,
          lane_count: count,
          record_first: group.first,
          record_count: group.count,
        },
        workgroups: Math.ceil(count / workgroupSize),
      });
    }
    params.push(
      encodeChunks(
        encoder,
        {
          device,
          pipeline: group.pipeline,
          layout,
          label: 'tans-query',
          bindings: [
            { binding: 1, resource: { buffer: data[group.buffer] } },
            { binding: 2, resource: { buffer: offsets[group.buffer] } },
            { binding: 3, resource: { buffer: cells[group.buffer] } },
            { binding: 4, resource: { buffer: classMaps[group.buffer] } },
            { binding: 5, resource: { buffer: bits } },
            { binding: 6, resource: { buffer: need } },
            { binding: 7, resource: { buffer: sums[group.buffer] } },
            { binding: 8, resource: { buffer: recordTable } },
          ],
        },
        chunks,
      ),
    );
  }
  return params;
}

/**
 * Only the asked-for acquisitions' frames come back, each acquisition's records in frame order: accumulator A
 * (8 B a frame), and for an acquisition computed as a delta accumulator B after it. Returns each
 * acquisition's byte offset in the staging buffer and the bytes written.
 */
export function encodeReadbackCopies(
  encoder: GPUCommandEncoder,
  archive: Archive,
  plan: SeriesPlan,
  order: number[],
  modes: ('full' | 'delta')[],
  used: Set<number>,
  sums: GPUBuffer[],
  staging: GPUBuffer,
): { stagingOffsets: number[]; stagingBytes: number } {
  let stagingAt = 0;
  const stagingOffsets = order.map((a, i) => {
    const at = stagingAt;
    const acq = archive.acquisitions[a];
    stagingAt += acq.info.scan[0] * acq.info.scan[1] * (modes[i] === 'delta' ? 16 : 8);
    return at;
  });
  order.forEach((a, i) => {
    const acq = archive.acquisitions[a];
    const n = acq.info.scan[0] * acq.info.scan[1];
    for (const p of plan.placements) {
      if (p.acquisition !== a) continue;
      const rec = acq.records[p.record];
      const planes = modes[i] === 'delta' ? [0, 1] : [0];
      for (const plane of planes) {
        const at = stagingOffsets[i] + (plane * n + rec.firstFrame) * 8;
        if (used.has(p.buffer)) {
          const from = (plane * plan.bufferFrames[p.buffer] + p.sumsBase) * 8;
          encoder.copyBufferToBuffer(sums[p.buffer], from, staging, at, rec.frames * 8);
        } else {
          // No lane of this buffer ran (the mask needs no pixel): the sums are zero.
          encoder.clearBuffer(staging, at, rec.frames * 8);
        }
      }
    }
  });
  return { stagingOffsets, stagingBytes: stagingAt };
}

function neededPixelsCount(needAll: Uint32Array, base: number, slices: number): number {
  let n = 0;
  for (let s = 0; s < slices; s++) if (needAll[base + s] > 0) n++;
  return n;
}

/** Whether two masks include the same pixels (any nonzero value includes). */
export function sameMask(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if ((a[i] !== 0) !== (b[i] !== 0)) return false;
  return true;
}
