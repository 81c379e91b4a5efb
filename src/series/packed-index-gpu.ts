/**
 * The exact series index on the GPU (src/series/packed-index.ts describes it): built once from a loaded series'
 * encoded records, then queried by packed-query.wgsl instead of decoding tANS lanes.
 *
 * Build, for every chunk of every acquisition, in two phases with one wait between them:
 * 1. sizes: decode the chunk's lanes into a scratch (tans-values.wgsl), find the blocks' widths and offsets and the groups'
 *    offsets (packed-index.wgsl `blocks_main`, `scan_main`); the chunks' totals are read back once;
 * 2. the data buffers are sized exactly from those totals and checked against the budget (an index that does not
 *    fit is refused with the numbers and the series answers from the encoded data as before), then each chunk is
 *    decoded again and packed (`pack_main`).
 * The lanes are decoded twice so that no buffer has to be sized for the worst case (16 bits a count); the
 * metadata (block tables, group offsets) is kept from the first phase. A lane that lies fails the build (typed).
 */

import { DTYPE_BITS } from '../archive/lanes';
import type { Archive } from '../archive/reader';
import { readBuffer } from '../compute/readback';
import { StemflowError } from '../errors';
import { type DispatchChunk, encodeChunks } from '../gpu/chunked-dispatch';
import { structLayout } from '../gpu/uniform-layout';
import indexSource from '../shaders/packed-index.wgsl?raw';
import querySource from '../shaders/packed-query.wgsl?raw';
import valuesSource from '../shaders/tans-values.wgsl?raw';
import { chunkFramesFor, type IndexGeometry, indexGeometry } from './packed-index';
import type { SeriesBuffers } from './series-load';
import type { planSeries } from './series-plan';

const valuesLayout = structLayout(valuesSource, 'Params');
const indexLayout = structLayout(indexSource, 'Params');
const queryLayout = structLayout(querySource, 'Params');

/** u32 words of a chunk entry (`struct Chunk` in packed-query.wgsl). */
export const CHUNK_WORDS = 8;
/** Decoded counts of one chunk (u32 each) while building: at most this many bytes (and the binding limit). */
export const INDEX_SCRATCH_BYTES = 1 << 30;
/** List entries an index query invocation reads together unless asked otherwise. */
export const INDEX_QUERY_STEP = 8;
/** Invocations of an index query workgroup unless asked otherwise. */
export const INDEX_QUERY_WORKGROUP = 64;
/** Frames an index query invocation sums unless asked otherwise. */
export const INDEX_QUERY_FRAMES = 1;
const QUERY_THREADS_PER_DISPATCH = 1 << 20;

const MiB = 1024 * 1024;
const fmt = (b: number) => `${(b / MiB).toFixed(1)} MiB`;

/**
 * The launch shape of an index query: frames an invocation sums (1, 2, 4, 8), invocations a workgroup (64, 128,
 * 256), list entries a step reads together (2, 4, 8; default 8).
 */
export interface IndexLaunch {
  frames: number;
  workgroup: number;
  step?: number;
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

type Plan = ReturnType<typeof planSeries>;

/**
 * Builds the index of every loaded acquisition, or returns why it was not built (the budget). `budgetBytes`: what
 * the index may take on top of the series.
 */
export async function buildSeriesIndex(
  device: GPUDevice,
  archive: Archive,
  plan: Plan,
  buffers: SeriesBuffers,
  options: { budgetBytes: number; scratchBytes?: number; signal?: AbortSignal },
): Promise<SeriesIndex | { refused: string }> {
  const t0 = performance.now();
  const maxBinding = Math.min(device.limits.maxStorageBufferBindingSize, device.limits.maxBufferSize);
  const first = archive.acquisitions[plan.acquisitions[0]];
  const pixels = first.geometry.pixels;
  const scratchCap = Math.min(options.scratchBytes ?? INDEX_SCRATCH_BYTES, maxBinding);
  // No larger than the longest record needs (chunks never span records).
  const longest = Math.max(
    ...plan.acquisitions.flatMap((a) => archive.acquisitions[a].records.map((r) => r.frames)),
  );
  const dtypeBits = DTYPE_BITS[first.info.dtype];
  const { virtualPixels } = indexGeometry([], first.info.detector, 1024, dtypeBits);
  const chunkFrames = Math.min(chunkFramesFor(virtualPixels, scratchCap), Math.ceil(longest / 1024) * 1024);
  const scratchBytes = chunkFrames * virtualPixels * 4;
  const geometries = new Map<number, IndexGeometry>();
  let metadataBytes = 0;
  let chunkCount = 0;
  let frames = 0;
  for (const a of plan.acquisitions) {
    const acq = archive.acquisitions[a];
    const g = indexGeometry(acq.records, acq.info.detector, chunkFrames, DTYPE_BITS[acq.info.dtype]);
    geometries.set(a, g);
    metadataBytes += 4 * (g.blocksWords + g.basesWords);
    chunkCount += g.chunks.length;
    frames += g.frames;
    if (g.blocksWords * 4 > maxBinding)
      return {
        refused: `the index's block table of ${acq.info.name} take ${fmt(g.blocksWords * 4)}; this GPU binds at most ${fmt(maxBinding)}`,
      };
  }
  // Per frame an image (8 B) and its readback words (4 B); a list has at most one entry a pixel (an entry covers a
  // pixel or a tile of them).
  const queryScratch =
    frames * 12 + plan.acquisitions.length * (pixels * 4 + 16) + chunkCount * CHUNK_WORDS * 4;
  const before = metadataBytes + scratchBytes + queryScratch;
  if (scratchBytes > maxBinding || before > options.budgetBytes)
    return {
      refused: `the index needs ${fmt(before)} before its data (block tables and group offsets ${fmt(metadataBytes)}, build scratch ${fmt(scratchBytes)}, query scratch ${fmt(queryScratch)}); its budget is ${fmt(options.budgetBytes)}`,
    };

  const owned: GPUBuffer[] = [];
  const make = (label: string, size: number, usage: number) => {
    const b = device.createBuffer({
      label: `series index ${label}`,
      size: Math.max(16, Math.ceil(size / 16) * 16),
      usage,
    });
    owned.push(b);
    return b;
  };
  const destroy = () => {
    for (const b of owned) b.destroy();
    owned.length = 0;
  };
  const RW = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC;
  const temporary: GPUBuffer[] = [];
  try {
    device.pushErrorScope('out-of-memory');
    const scratch = make('build scratch', scratchBytes, GPUBufferUsage.STORAGE);
    const errors = make('lane errors', 16, RW);
    const totals = make('chunk totals', chunkCount * 4, RW);
    const readback = make(
      'build readback',
      chunkCount * 4 + 16,
      GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
    );
    temporary.push(scratch, totals, readback);
    type PerAcquisition = { blocks: GPUBuffer; bases: GPUBuffer; image: GPUBuffer; out: GPUBuffer };
    const perAcq = new Map<number, PerAcquisition>();
    for (const a of plan.acquisitions) {
      const g = geometries.get(a) as IndexGeometry;
      perAcq.set(a, {
        blocks: make(`blocks ${a}`, g.blocksWords * 4, RW),
        bases: make(`offsets ${a}`, g.basesWords * 4, RW),
        image: make(`image ${a}`, g.frames * 8, RW),
        out: make(`readback words ${a}`, g.frames * 4 + 4, RW),
      });
    }
    const list = make(
      'mask list',
      plan.acquisitions.length * pixels * 4,
      GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST,
    );
    const chunkTable = make(
      'chunk table',
      chunkCount * CHUNK_WORDS * 4,
      GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST,
    );
    const oom = await device.popErrorScope();
    if (oom)
      throw new StemflowError('budget', `The GPU could not hold the series index's metadata: ${oom.message}`);

    const pipes = indexPipelines(device);
    const valuesFor = valuesPipelines(device);
    // Encodes one chunk's decode into the scratch, then `then(encoder)`.
    const encodeChunk = (
      a: number,
      c: IndexGeometry['chunks'][number],
      rest: (e: GPUCommandEncoder) => GPUBuffer[],
    ) => {
      const acq = archive.acquisitions[a];
      const placement = plan.placements.find((p) => p.acquisition === a && p.record === c.record);
      if (!placement)
        throw new StemflowError('invalid', `Record ${c.record} of ${acq.info.name} is not loaded.`);
      const rec = acq.records[c.record];
      const encoder = device.createCommandEncoder({ label: 'series index build' });
      const slicesLanes = c.frames * acq.geometry.slices;
      const params = [
        encodeChunks(
          encoder,
          {
            device,
            pipeline: valuesFor(DTYPE_BITS[acq.info.dtype], acq.info.tableLog, rec.tables.tokens),
            layout: valuesLayout,
            label: 'tans-values',
            bindings: [
              { binding: 1, resource: { buffer: buffers.data[placement.buffer] } },
              { binding: 2, resource: { buffer: buffers.offsets[placement.buffer] } },
              { binding: 3, resource: { buffer: buffers.cells[placement.buffer] } },
              { binding: 4, resource: { buffer: buffers.classMaps[placement.buffer] } },
              { binding: 5, resource: { buffer: scratch } },
              { binding: 6, resource: { buffer: errors } },
            ],
          },
          [
            {
              params: {
                frame_first: c.recordFrame,
                frames: c.frames,
                slices: acq.geometry.slices,
                slice_pixels: acq.geometry.slicePixels,
                pixels,
                data_base: placement.dataBase,
                offsets_base: placement.offsetsBase,
                cells_base: placement.cellsBase,
                class_base: placement.classBase,
                data_words: rec.dataWords,
                cols: acq.info.detector[1],
                stride: virtualPixels,
              },
              workgroups: Math.ceil(slicesLanes / 64),
            },
          ],
        ),
        ...rest(encoder),
      ];
      device.queue.submit([encoder.finish()]);
      for (const p of params) p.destroy();
    };
    const chunkParams = (c: IndexGeometry['chunks'][number], chunk: number, dataBase: number) => ({
      pixels: virtualPixels,
      frames: c.frames,
      groups: c.groups,
      blocks_base: c.blocksBase,
      bases_base: c.basesBase,
      data_base: dataBase,
      chunk,
      frame_first: 0,
      det_cols: 0,
      det_rows: 0,
      side: 0,
      tile_cols: 0,
      tiles: 0,
      level_base: 0,
    });
    const groupsOf = (c: IndexGeometry['chunks'][number]) => Math.ceil((virtualPixels * c.groups) / 64);
    // The tile levels' sums after each frame's pixels: dispatches of at most 2^22 (frame, tile) invocations.
    const encodeTiles = (
      e: GPUCommandEncoder,
      g: IndexGeometry,
      c: IndexGeometry['chunks'][number],
      at: number,
    ) =>
      g.tiles.map((t) => {
        const tiles = t.rows * t.cols;
        const framesPer = Math.max(1, Math.floor(2 ** 22 / tiles));
        const parts: DispatchChunk[] = [];
        for (let f = 0; f < c.frames; f += framesPer) {
          const frames = Math.min(framesPer, c.frames - f);
          parts.push({
            params: {
              ...chunkParams(c, at, 0),
              frames,
              frame_first: f,
              det_cols: g.detector[1],
              det_rows: g.detector[0],
              side: t.side,
              tile_cols: t.cols,
              tiles,
              level_base: t.base,
            },
            workgroups: Math.ceil((frames * tiles) / 64),
          });
        }
        return encodeChunks(
          e,
          {
            device,
            pipeline: pipes.tiles,
            layout: indexLayout,
            label: 'packed-index tiles',
            bindings: [{ binding: 1, resource: { buffer: scratch } }],
          },
          parts,
        );
      });

    // Phase 1: block tables and group offsets of every chunk, the totals read back once.
    device.pushErrorScope('out-of-memory');
    let chunk = 0;
    for (const a of plan.acquisitions) {
      const g = geometries.get(a) as IndexGeometry;
      const { blocks, bases } = perAcq.get(a) as { blocks: GPUBuffer; bases: GPUBuffer };
      for (const c of g.chunks) {
        const at = chunk++;
        encodeChunk(a, c, (e) => [
          ...encodeTiles(e, g, c, at),
          encodeChunks(
            e,
            {
              device,
              pipeline: pipes.blocks,
              layout: indexLayout,
              label: 'packed-index blocks',
              bindings: [
                { binding: 1, resource: { buffer: scratch } },
                { binding: 2, resource: { buffer: blocks } },
                { binding: 3, resource: { buffer: bases } },
              ],
            },
            [{ params: chunkParams(c, at, 0), workgroups: groupsOf(c) }],
          ),
          encodeChunks(
            e,
            {
              device,
              pipeline: pipes.scan,
              layout: indexLayout,
              label: 'packed-index scan',
              bindings: [
                { binding: 3, resource: { buffer: bases } },
                { binding: 5, resource: { buffer: totals } },
              ],
            },
            [{ params: chunkParams(c, at, 0), workgroups: 1 }],
          ),
        ]);
      }
    }
    const copy = device.createCommandEncoder();
    copy.copyBufferToBuffer(totals, 0, readback, 0, chunkCount * 4);
    copy.copyBufferToBuffer(errors, 0, readback, chunkCount * 4, 16);
    device.queue.submit([copy.finish()]);
    await readback.mapAsync(GPUMapMode.READ);
    const words = new Uint32Array(readback.getMappedRange().slice(0));
    readback.unmap();
    const failed = await device.popErrorScope();
    if (failed)
      throw new StemflowError('device', `The GPU could not build the series index: ${failed.message}`);
    if (words[chunkCount] !== 0)
      throw new StemflowError(
        'corrupt',
        `${words[chunkCount]} lane(s) of the series could not be decoded while building its index; the archive is damaged.`,
      );

    // Data buffers sized from the totals: each acquisition's chunks in order, a new buffer when one is full.
    const placed = new Map<number, { sizes: number[]; chunkBuffer: number[]; chunkBase: number[] }>();
    let dataBytes = 0;
    chunk = 0;
    for (const a of plan.acquisitions) {
      const g = geometries.get(a) as IndexGeometry;
      const sizes: number[] = [];
      const chunkBuffer: number[] = [];
      const chunkBase: number[] = [];
      for (let i = 0; i < g.chunks.length; i++) {
        const bytes = words[chunk++] * 4;
        if (bytes > maxBinding) {
          destroy();
          return {
            refused: `one index chunk of ${archive.acquisitions[a].info.name} takes ${fmt(bytes)}; this GPU binds at most ${fmt(maxBinding)}`,
          };
        }
        if (sizes.length === 0 || sizes[sizes.length - 1] + bytes > maxBinding) sizes.push(0);
        chunkBuffer.push(sizes.length - 1);
        chunkBase.push(sizes[sizes.length - 1] / 4);
        sizes[sizes.length - 1] += bytes;
        dataBytes += bytes;
      }
      placed.set(a, { sizes, chunkBuffer, chunkBase });
    }
    const total = dataBytes + metadataBytes + scratchBytes + queryScratch;
    if (total > options.budgetBytes) {
      destroy();
      return {
        refused: `the index needs ${fmt(dataBytes + metadataBytes + queryScratch)} (packed counts ${fmt(dataBytes)}, block tables and group offsets ${fmt(metadataBytes)}, query scratch ${fmt(queryScratch)}) and ${fmt(scratchBytes)} while it is built; its budget is ${fmt(options.budgetBytes)}`,
      };
    }

    device.pushErrorScope('out-of-memory');
    const acquisitions = new Map<number, IndexedAcquisition>();
    for (const a of plan.acquisitions) {
      const p = placed.get(a) as { sizes: number[]; chunkBuffer: number[]; chunkBase: number[] };
      const m = perAcq.get(a) as PerAcquisition;
      acquisitions.set(a, {
        geometry: geometries.get(a) as IndexGeometry,
        ...m,
        data: p.sizes.map((bytes, i) =>
          make(`data ${a}.${i}`, bytes, GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC),
        ),
        chunkBuffer: p.chunkBuffer,
        chunkBase: p.chunkBase,
      });
    }
    const oomData = await device.popErrorScope();
    if (oomData)
      throw new StemflowError(
        'budget',
        `The GPU could not hold the series index (${fmt(dataBytes)} of packed counts): ${oomData.message}`,
      );

    // Phase 2: each chunk decoded again and packed.
    device.pushErrorScope('out-of-memory');
    chunk = 0;
    for (const a of plan.acquisitions) {
      const ix = acquisitions.get(a) as IndexedAcquisition;
      ix.geometry.chunks.forEach((c, i) => {
        const at = chunk++;
        encodeChunk(a, c, (e) => [
          ...encodeTiles(e, ix.geometry, c, at),
          encodeChunks(
            e,
            {
              device,
              pipeline: pipes.pack,
              layout: indexLayout,
              label: 'packed-index pack',
              bindings: [
                { binding: 1, resource: { buffer: scratch } },
                { binding: 2, resource: { buffer: ix.blocks } },
                { binding: 3, resource: { buffer: ix.bases } },
                { binding: 4, resource: { buffer: ix.data[ix.chunkBuffer[i]] } },
              ],
            },
            [{ params: chunkParams(c, at, ix.chunkBase[i]), workgroups: groupsOf(c) }],
          ),
        ]);
      });
    }
    await device.queue.onSubmittedWorkDone();
    const failedPack = await device.popErrorScope();
    if (failedPack)
      throw new StemflowError('device', `The GPU could not build the series index: ${failedPack.message}`);
    for (const b of temporary) {
      b.destroy();
      owned.splice(owned.indexOf(b), 1);
    }
    const buildMs = performance.now() - t0;
    return {
      acquisitions,
      dataBytes,
      metadataBytes,
      scratchBytes: queryScratch,
      buildMs,
      lines: [
        `exact index: packed counts ${fmt(dataBytes)} (${((8 * dataBytes) / (frames * pixels)).toFixed(2)} bits a count, tiles of ${
          geometries
            .get(plan.acquisitions[0])
            ?.tiles.map((t) => `${t.side} x ${t.side}`)
            .join(' and ') || 'none'
        } included), block tables and group offsets ${fmt(metadataBytes)}, query scratch ${fmt(queryScratch)}; built in ${buildMs.toFixed(0)} ms`,
      ],
      list,
      chunkTable,
      pipelineFor: queryPipelines(device),
      destroy,
    };
  } catch (e) {
    destroy();
    throw e;
  }
}

function indexPipelines(device: GPUDevice) {
  const module = device.createShaderModule({ label: 'packed-index.wgsl', code: indexSource });
  const make = (entryPoint: string) =>
    device.createComputePipeline({
      label: `packed-index ${entryPoint}`,
      layout: 'auto',
      compute: { module, entryPoint },
    });
  return {
    tiles: make('tiles_main'),
    blocks: make('blocks_main'),
    scan: make('scan_main'),
    pack: make('pack_main'),
  };
}

function valuesPipelines(device: GPUDevice) {
  const module = device.createShaderModule({ label: 'tans-values.wgsl', code: valuesSource });
  const pipelines = new Map<string, GPUComputePipeline>();
  return (bits: number, tableLog: number, tokens: number) => {
    const key = `${bits}/${tableLog}/${tokens}`;
    let p = pipelines.get(key);
    if (!p) {
      p = device.createComputePipeline({
        label: `tans-values ${key}`,
        layout: 'auto',
        compute: {
          module,
          entryPoint: 'main',
          constants: { BITS: bits, TABLE_LOG: tableLog, TOKENS: tokens },
        },
      });
      pipelines.set(key, p);
    }
    return p;
  };
}

/** The query pipelines, one per launch shape (made when first asked for). */
export function queryPipelines(device: GPUDevice): (launch: IndexLaunch) => GPUComputePipeline {
  const module = device.createShaderModule({ label: 'packed-query.wgsl', code: querySource });
  const pipelines = new Map<string, GPUComputePipeline>();
  return ({ frames, workgroup, step = INDEX_QUERY_STEP }) => {
    if (![1, 2, 4, 8].includes(frames))
      throw new StemflowError('invalid', `${frames} frames an invocation: give 1, 2, 4 or 8.`);
    if (![64, 128, 256].includes(workgroup) || workgroup > device.limits.maxComputeInvocationsPerWorkgroup)
      throw new StemflowError('invalid', `A query workgroup of ${workgroup}: give 64, 128 or 256.`);
    if (![2, 4, 8].includes(step))
      throw new StemflowError('invalid', `${step} list entries a step: give 2, 4 or 8.`);
    const key = `${frames}x${workgroup}s${step}`;
    let p = pipelines.get(key);
    if (!p) {
      p = device.createComputePipeline({
        label: `packed-query ${key}`,
        layout: 'auto',
        compute: {
          module,
          entryPoint: 'main',
          constants: { WORKGROUP_SIZE: workgroup, FRAMES: frames, STEP: step },
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
  launch: IndexLaunch = { frames: INDEX_QUERY_FRAMES, workgroup: INDEX_QUERY_WORKGROUP },
): GPUBuffer[] {
  const F = launch.frames;
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
      group.threads += Math.ceil(c.frames / F);
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
 * The exact images of an index query from the mapped readback: each acquisition's low words converted at once,
 * or, when its flag says a value needs its high word, null (read the resident image: `readIndexImage`).
 */
export function indexImages(
  words: Uint32Array,
  frames: number[],
  stagingOffsets: number[],
): (Float64Array | null)[] {
  return frames.map((n, i) => {
    const at = stagingOffsets[i] / 4;
    return words[at + n] === 0 ? new Float64Array(words.subarray(at, at + n)) : null;
  });
}

/** The resident image of an acquisition, (lo, hi) per frame, read back whole (values of 2^32 and more). */
export async function readIndexImage(device: GPUDevice, ix: IndexedAcquisition): Promise<Float64Array> {
  const n = ix.geometry.frames;
  const bytes = await readBuffer(device, ix.image, 0, n * 8);
  const words = new Uint32Array(bytes.buffer, bytes.byteOffset, 2 * n);
  return Float64Array.from({ length: n }, (_, f) => words[2 * f] + words[2 * f + 1] * 2 ** 32);
}
