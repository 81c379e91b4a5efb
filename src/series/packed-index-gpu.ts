/**
 * The exact series index on the GPU (src/series/packed-index.ts describes it; built by
 * src/series/packed-index-build.ts): its buffers, and a query (packed-query.wgsl) over the entries a mask
 * decomposes into, each acquisition's image kept on the GPU.
 */
import { readBuffer } from '../compute/readback';
import { StemflowError } from '../errors';
import { type DispatchChunk, encodeChunks } from '../gpu/chunked-dispatch';
import { structLayout } from '../gpu/uniform-layout';
import querySource from '../shaders/packed-query.wgsl?raw';
import { chooseIndexList, type IndexGeometry } from './packed-index';
import type { SeriesSlot } from './series-query';

const queryLayout = structLayout(querySource, 'Params');

/** u32 words of a chunk entry (`struct Chunk` in packed-query.wgsl). */
export const CHUNK_WORDS = 8;
/** Invocations of an index query workgroup unless asked otherwise. */
export const INDEX_QUERY_WORKGROUP = 64;
const QUERY_THREADS_PER_DISPATCH = 1 << 20;

/**
 * The launch shape of an index query: invocations a workgroup (64, 128 or 256). (Frames an invocation and entries
 * a step were tried as well and removed: no gain on the H200, docs/performance.md.)
 */
export interface IndexLaunch {
  workgroup: number;
}

export interface IndexedAcquisition {
  geometry: IndexGeometry;
  blocks: GPUBuffer;
  bases: GPUBuffer;
  data: GPUBuffer[];
  /** Per chunk: its data buffer and word offset there. */
  chunkBuffer: number[];
  chunkBase: number[];
  /** The image of the last mask queried, (lo, hi) u32 per frame: deltas add to it on the GPU. */
  image: GPUBuffer;
  /** The readback of a query: the image's low words, then a flag set when any high word is not 0. */
  out: GPUBuffer;
}

export interface SeriesIndex {
  acquisitions: Map<number, IndexedAcquisition>;
  dataBytes: number;
  metadataBytes: number;
  /** Sums, list and chunk table of the queries. */
  scratchBytes: number;
  buildMs: number;
  lines: string[];
  list: GPUBuffer;
  chunkTable: GPUBuffer;
  /** The query pipeline of a launch shape (src/shaders/packed-query.wgsl FRAMES, WORKGROUP_SIZE). */
  pipelineFor(launch: IndexLaunch): GPUComputePipeline;
  destroy(): void;
}

/** The query pipelines, one per launch shape (made when first asked for). */
export function queryPipelines(device: GPUDevice): (launch: IndexLaunch) => GPUComputePipeline {
  const module = device.createShaderModule({ label: 'packed-query.wgsl', code: querySource });
  const pipelines = new Map<string, GPUComputePipeline>();
  return ({ workgroup }) => {
    if (![64, 128, 256].includes(workgroup) || workgroup > device.limits.maxComputeInvocationsPerWorkgroup)
      throw new StemflowError('invalid', `A query workgroup of ${workgroup}: give 64, 128 or 256.`);
    const key = `${workgroup}`;
    let p = pipelines.get(key);
    if (!p) {
      p = device.createComputePipeline({
        label: `packed-query ${key}`,
        layout: 'auto',
        compute: {
          module,
          entryPoint: 'main',
          constants: { WORKGROUP_SIZE: workgroup },
        },
      });
      pipelines.set(key, p);
    }
    return p;
  };
}

/**
 * Encodes an index query: the lists (one per asked-for acquisition, in `order`) are written, every chunk of those
 * acquisitions runs (one dispatch group per acquisition and data buffer; an empty list too, so the resident image
 * always follows the mask), and each acquisition's low words and flag are copied into `staging` at
 * `stagingOffsets` (frames + 1 words each). Returns the parameter buffers (destroy after submit).
 */
export function encodeIndexQuery(
  device: GPUDevice,
  encoder: GPUCommandEncoder,
  index: SeriesIndex,
  order: number[],
  lists: Uint32Array[],
  modes: ('full' | 'delta')[],
  staging: GPUBuffer,
  stagingOffsets: number[],
  launch: IndexLaunch = { workgroup: INDEX_QUERY_WORKGROUP },
): GPUBuffer[] {
  const pipeline = index.pipelineFor(launch);
  const chunkCount = [...index.acquisitions.values()].reduce((n, ix) => n + ix.geometry.chunks.length, 0);
  const table = new Uint32Array(Math.max(1, chunkCount) * CHUNK_WORDS);
  // One dispatch group per (acquisition, data buffer): its chunks share the acquisition's list.
  const groups: {
    ix: IndexedAcquisition;
    buffer: number;
    first: number;
    count: number;
    threads: number;
    list: number;
  }[] = [];
  let entries = 0;
  // The lists back to back, a list shared by several acquisitions once (each at most `pixels` entries).
  const listAt = new Map<Uint32Array, number>();
  let listEnd = 0;
  const listBase = lists.map((list) => {
    let at = listAt.get(list);
    if (at === undefined) {
      at = listEnd;
      listAt.set(list, at);
      listEnd += list.length;
    }
    return at;
  });
  const listWords = new Uint32Array(Math.max(4, listEnd));
  // A list holds its A entries (bits 1), then its B entries (bits 2): the query sums the two ranges apart.
  const countA = lists.map((list) => {
    const b = list.findIndex((e) => e >>> 30 !== 1);
    const a = b < 0 ? list.length : b;
    for (let i = a; i < list.length; i++)
      if (list[i] >>> 30 !== 2)
        throw new StemflowError(
          'invalid',
          'An index query list must hold its A entries first, then its B entries.',
        );
    return a;
  });
  for (const [list, at] of listAt) listWords.set(list, at);
  order.forEach((a, i) => {
    const ix = index.acquisitions.get(a) as IndexedAcquisition;
    ix.geometry.chunks.forEach((c, k) => {
      let group = groups.at(-1);
      if (!group || group.ix !== ix || group.buffer !== ix.chunkBuffer[k]) {
        group = { ix, buffer: ix.chunkBuffer[k], first: entries, count: 0, threads: 0, list: i };
        groups.push(group);
      }
      table.set(
        [group.threads, c.frames, c.groups, ix.chunkBase[k], c.blocksBase, c.basesBase, c.first, 0],
        entries * CHUNK_WORDS,
      );
      group.threads += c.frames;
      group.count++;
      entries++;
    });
    // The flag is set by the query when a value needs its high word.
    encoder.clearBuffer(ix.out, ix.geometry.frames * 4, 4);
  });
  device.queue.writeBuffer(index.list, 0, listWords);
  device.queue.writeBuffer(index.chunkTable, 0, table, 0, Math.max(1, entries) * CHUNK_WORDS);
  const params: GPUBuffer[] = [];
  // Every acquisition's first data buffer, then every second one: the dispatches of one acquisition write its
  // image, so each must wait for the one before; dispatches of different acquisitions need not.
  const rounds = [...groups].sort((x, y) => x.buffer - y.buffer);
  for (const g of rounds) {
    const chunks: DispatchChunk[] = [];
    for (let first = 0; first < g.threads; first += QUERY_THREADS_PER_DISPATCH) {
      const count = Math.min(QUERY_THREADS_PER_DISPATCH, g.threads - first);
      chunks.push({
        params: {
          thread_first: first,
          thread_count: count,
          chunk_first: g.first,
          chunk_count: g.count,
          list_base: listBase[g.list],
          list_count: lists[g.list].length,
          // The list's A entries come first (chooseIndexList).
          list_count_a: countA[g.list],
          delta: modes[g.list] === 'delta' ? 1 : 0,
          frames: g.ix.geometry.frames,
        },
        workgroups: Math.ceil(count / launch.workgroup),
      });
    }
    params.push(
      encodeChunks(
        encoder,
        {
          device,
          pipeline,
          layout: queryLayout,
          label: 'packed-query',
          bindings: [
            { binding: 1, resource: { buffer: g.ix.data[g.buffer] } },
            { binding: 2, resource: { buffer: g.ix.blocks } },
            { binding: 3, resource: { buffer: g.ix.bases } },
            { binding: 4, resource: { buffer: index.list } },
            { binding: 5, resource: { buffer: g.ix.image } },
            { binding: 6, resource: { buffer: index.chunkTable } },
            { binding: 7, resource: { buffer: g.ix.out } },
          ],
        },
        chunks,
      ),
    );
  }
  order.forEach((a, i) => {
    const ix = index.acquisitions.get(a) as IndexedAcquisition;
    encoder.copyBufferToBuffer(ix.out, 0, staging, stagingOffsets[i], ix.geometry.frames * 4 + 4);
  });
  return params;
}

/**
 * The exact images of an index query from the mapped readback: each acquisition's low words copied out as they are
 * (a Uint32Array: every value fits 32 bits), or, when its flag says a value needs its high word, null (read the
 * resident image: `readIndexImage`).
 */
export function indexImages(
  words: Uint32Array,
  frames: number[],
  stagingOffsets: number[],
): (Uint32Array | null)[] {
  return frames.map((n, i) => {
    const at = stagingOffsets[i] / 4;
    return words[at + n] === 0 ? words.slice(at, at + n) : null;
  });
}

/** The resident image of an acquisition, (lo, hi) per frame, read back whole (values of 2^32 and more). */
export async function readIndexImage(device: GPUDevice, ix: IndexedAcquisition): Promise<Float64Array> {
  const n = ix.geometry.frames;
  const bytes = await readBuffer(device, ix.image, 0, n * 8);
  const words = new Uint32Array(bytes.buffer, bytes.byteOffset, 2 * n);
  return Float64Array.from({ length: n }, (_, f) => words[2 * f] + words[2 * f + 1] * 2 ** 32);
}

/**
 * Each asked-for acquisition's list for a mask: its full mask, or the delta from `previousFor(a)` (the mask its
 * resident image holds, or null), whichever needs fewer entries. Acquisitions with the same flagged pixels and tile
 * levels and the same previous mask (or none) share one list.
 */
export function indexLists(
  ix: SeriesIndex,
  slot: Map<number, SeriesSlot>,
  mask: Uint8Array,
  order: number[],
  mode: 'auto' | 'full' | 'delta',
  previousFor: (a: number) => Uint8Array | null,
): { lists: Uint32Array[]; modes: ('full' | 'delta')[]; decodedPixels: number[] } {
  const lists: Uint32Array[] = [];
  const modes: ('full' | 'delta')[] = [];
  const decodedPixels: number[] = [];
  const shared = new Map<string, ReturnType<typeof chooseIndexList>>();
  for (const a of order) {
    const s = slot.get(a) as SeriesSlot;
    const geometry = (ix.acquisitions.get(a) as IndexedAcquisition).geometry;
    const previous = previousFor(a);
    const key = `${previous ? 1 : 0}|${geometry.tiles.map((t) => t.side).join()}|${s.flaggedKey}`;
    let q = shared.get(key);
    if (!q) {
      q = chooseIndexList(mask, previous, s.flagged, mode, geometry);
      shared.set(key, q);
    }
    lists.push(q.list);
    modes.push(q.mode);
    decodedPixels.push(q.list.length);
  }
  return { lists, modes, decodedPixels };
}
