/**
 * The exact series index on the GPU (src/series/packed-index.ts describes it; built by
 * src/series/packed-index-build.ts): its buffers, and a query (packed-query.wgsl) over the entries a mask
 * decomposes into, each acquisition's image kept on the GPU.
 */
import { readBuffer } from '../compute/readback';
import { StemflowError } from '../errors';
import { packStruct, structLayout } from '../gpu/uniform-layout';
import querySource from '../shaders/packed-query.wgsl?raw';
import { chooseIndexList } from './index-lists';
import { BLOCK, type IndexGeometry } from './packed-index';
import type { SeriesSlot } from './series-query';

const queryLayout = structLayout(querySource, 'Params');

/** u32 words of a chunk entry (`struct Chunk` in packed-query.wgsl). */
export const CHUNK_WORDS = 8;
/** Invocations of an index query workgroup unless asked otherwise. */
export const INDEX_QUERY_WORKGROUP = 256;
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
  /** The query's dispatches, fixed once the index is built (`planIndexDispatch`). */
  dispatch: IndexDispatch;
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

/** One dispatch of an index query: part of the chunks of one acquisition in one data buffer. */
interface IndexDispatchPart {
  /** The part's slot in the parameter buffer. */
  slot: number;
  threadFirst: number;
  threadCount: number;
}

/** The chunks of one acquisition in one data buffer: consecutive entries of the chunk table. */
interface IndexDispatchGroup {
  ix: IndexedAcquisition;
  buffer: number;
  first: number;
  count: number;
  parts: IndexDispatchPart[];
}

/**
 * The query's dispatches, fixed when the index is built: the chunk table (written once), each acquisition's
 * dispatch groups, one uniform slot per dispatch in one parameter buffer, and the bind groups (made once per
 * pipeline and slot). A query then writes the parameters of the groups it runs and dispatches; it creates no
 * buffer and no bind group.
 */
export interface IndexDispatch {
  groups: Map<number, IndexDispatchGroup[]>;
  params: GPUBuffer;
  stride: number;
  bindGroups: Map<string, GPUBindGroup>;
}

/** Plans the query's dispatches for the acquisitions of an index (their order is the chunk table's). */
export function planIndexDispatch(
  device: GPUDevice,
  acquisitions: Map<number, IndexedAcquisition>,
  chunkTable: GPUBuffer,
  make: (label: string, size: number, usage: number) => GPUBuffer,
  /** Invocations of one dispatch at most (a power of two; default 2^20). */
  threadsPerDispatch = QUERY_THREADS_PER_DISPATCH,
): IndexDispatch {
  const chunkCount = [...acquisitions.values()].reduce((n, ix) => n + ix.geometry.chunks.length, 0);
  const table = new Uint32Array(Math.max(1, chunkCount) * CHUNK_WORDS);
  const groups = new Map<number, IndexDispatchGroup[]>();
  let entries = 0;
  let slots = 0;
  for (const [a, ix] of acquisitions) {
    const mine: IndexDispatchGroup[] = [];
    let threads = 0;
    ix.geometry.chunks.forEach((c, k) => {
      let group = mine.at(-1);
      if (!group || group.buffer !== ix.chunkBuffer[k]) {
        group = { ix, buffer: ix.chunkBuffer[k], first: entries, count: 0, parts: [] };
        mine.push(group);
        threads = 0;
      }
      table.set(
        [threads, c.frames, c.groups, ix.chunkBase[k], c.blocksBase, c.basesBase, c.first, 0],
        entries * CHUNK_WORDS,
      );
      // Each chunk's invocations padded to whole blocks: 64 invocations of a workgroup read one block.
      threads += Math.ceil(c.frames / BLOCK) * BLOCK;
      group.count++;
      entries++;
      // Parts of at most 2^20 invocations (the group's threads so far, recomputed at its last chunk).
      group.parts = [];
      for (let first = 0; first < threads; first += threadsPerDispatch)
        group.parts.push({
          slot: -1,
          threadFirst: first,
          threadCount: Math.min(threadsPerDispatch, threads - first),
        });
    });
    for (const g of mine) for (const part of g.parts) part.slot = slots++;
    groups.set(a, mine);
  }
  device.queue.writeBuffer(chunkTable, 0, table);
  const stride = Math.max(queryLayout.byteSize, device.limits.minUniformBufferOffsetAlignment);
  const params = make(
    'query parameters',
    Math.max(1, slots) * stride,
    GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST,
  );
  return { groups, params, stride, bindGroups: new Map() };
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
): void {
  const pipeline = index.pipelineFor(launch);
  const { groups, params, stride, bindGroups } = index.dispatch;
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
  for (const [list, at] of listAt) listWords.set(list, at);
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
  device.queue.writeBuffer(index.list, 0, listWords);
  // The parameters of every dispatch that runs, in its fixed slot.
  const block = new ArrayBuffer(params.size);
  const asked: { group: IndexDispatchGroup; i: number }[] = [];
  order.forEach((a, i) => {
    const ix = index.acquisitions.get(a) as IndexedAcquisition;
    for (const group of groups.get(a) ?? []) {
      asked.push({ group, i });
      for (const part of group.parts) {
        packStruct(
          queryLayout,
          {
            thread_first: part.threadFirst,
            thread_count: part.threadCount,
            chunk_first: group.first,
            chunk_count: group.count,
            list_base: listBase[i],
            list_count: lists[i].length,
            list_count_a: countA[i],
            delta: modes[i] === 'delta' ? 1 : 0,
            frames: ix.geometry.frames,
          },
          block,
          part.slot * stride,
        );
      }
    }
    // The flag is set by the query when a value needs its high word.
    encoder.clearBuffer(ix.out, ix.geometry.frames * 4, 4);
  });
  device.queue.writeBuffer(params, 0, block);
  const bindGroupOf = (group: IndexDispatchGroup, slot: number) => {
    const key = `${pipeline.label}|${slot}`;
    let bg = bindGroups.get(key);
    if (!bg) {
      bg = device.createBindGroup({
        label: `packed-query ${key}`,
        layout: pipeline.getBindGroupLayout(0),
        entries: [
          { binding: 0, resource: { buffer: params, offset: slot * stride, size: queryLayout.byteSize } },
          { binding: 1, resource: { buffer: group.ix.data[group.buffer] } },
          { binding: 2, resource: { buffer: group.ix.blocks } },
          { binding: 3, resource: { buffer: group.ix.bases } },
          { binding: 4, resource: { buffer: index.list } },
          { binding: 5, resource: { buffer: group.ix.image } },
          { binding: 6, resource: { buffer: index.chunkTable } },
          { binding: 7, resource: { buffer: group.ix.out } },
        ],
      });
      bindGroups.set(key, bg);
    }
    return bg;
  };
  // Every acquisition's first data buffer, then every second one: the dispatches of one acquisition write its
  // image, so each must wait for the one before; dispatches of different acquisitions need not.
  const pass = encoder.beginComputePass({ label: 'packed-query' });
  pass.setPipeline(pipeline);
  for (const { group } of [...asked].sort((x, y) => x.group.buffer - y.group.buffer)) {
    for (const part of group.parts) {
      pass.setBindGroup(0, bindGroupOf(group, part.slot));
      pass.dispatchWorkgroups(Math.ceil(part.threadCount / launch.workgroup));
    }
  }
  pass.end();
  order.forEach((a, i) => {
    const ix = index.acquisitions.get(a) as IndexedAcquisition;
    encoder.copyBufferToBuffer(ix.out, 0, staging, stagingOffsets[i], ix.geometry.frames * 4 + 4);
  });
}

/**
 * The exact images of an index query from the mapped readback: each acquisition's low words copied out as they are
 * into `into[i]` (a Uint32Array of its frames: every value fits 32 bits), or, when its flag says a value needs its
 * high word, null (read the resident image: `readIndexImage`). The caller allocates `into` while the GPU works.
 */
export function indexImages(
  words: Uint32Array,
  frames: number[],
  stagingOffsets: number[],
  into: Uint32Array[] = frames.map((n) => new Uint32Array(n)),
): (Uint32Array | null)[] {
  return frames.map((n, i) => {
    const at = stagingOffsets[i] / 4;
    if (words[at + n] !== 0) return null;
    into[i].set(words.subarray(at, at + n));
    return into[i];
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
