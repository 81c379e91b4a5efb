/**
 * The passes of the series index build (src/series/packed-index-build.ts), each encoded for one chunk: the decode of
 * its lanes into the scratch (tans-values.wgsl), the tile sums, block tables, group offsets and packing
 * (packed-index.wgsl). Parameters are one uniform slot per dispatch (src/gpu/chunked-dispatch.ts).
 */
import { DTYPE_BITS } from '../archive/lanes';
import type { Archive } from '../archive/reader';
import { StemflowError } from '../errors';
import { type DispatchChunk, encodeChunks } from '../gpu/chunked-dispatch';
import { structLayout } from '../gpu/uniform-layout';
import indexSource from '../shaders/packed-index.wgsl?raw';
import valuesSource from '../shaders/tans-values.wgsl?raw';
import type { IndexChunk, IndexGeometry } from './packed-index';
import type { SeriesBuffers } from './series-load';
import type { planSeries } from './series-plan';

const valuesLayout = structLayout(valuesSource, 'Params');
const indexLayout = structLayout(indexSource, 'Params');

/** The build's shared buffers: the decoded chunk (`virtualPixels` u32 a frame), lane errors, chunk totals. */
export interface BuildScratch {
  scratch: GPUBuffer;
  errors: GPUBuffer;
  totals: GPUBuffer;
  virtualPixels: number;
}

/** Encoders of the build's passes for one series (pipelines made once). */
export function buildPasses(
  device: GPUDevice,
  archive: Archive,
  plan: ReturnType<typeof planSeries>,
  buffers: SeriesBuffers,
  { scratch, errors, totals, virtualPixels }: BuildScratch,
) {
  const pipes = indexPipelines(device);
  const valuesFor = valuesPipelines(device);
  const params = (c: IndexChunk, chunk: number, dataBase: number) => ({
    pixels: virtualPixels,
    frames: c.frames,
    groups: c.groups,
    blocks_base: c.blocksBase,
    bases_base: c.basesBase,
    data_base: dataBase,
    chunk,
    frame_first: 0,
    src_cols: 0,
    src_rows: 0,
    src_base: 0,
    side: 0,
    tile_cols: 0,
    tiles: 0,
    level_base: 0,
  });
  // One invocation per (virtual pixel, group).
  const groupsOf = (c: IndexChunk) => Math.ceil((virtualPixels * c.groups) / 64);
  const pass = (
    e: GPUCommandEncoder,
    pipeline: GPUComputePipeline,
    label: string,
    bindings: [number, GPUBuffer][],
    chunks: DispatchChunk[],
  ) =>
    encodeChunks(
      e,
      {
        device,
        pipeline,
        layout: indexLayout,
        label,
        bindings: bindings.map(([binding, buffer]) => ({ binding, resource: { buffer } })),
      },
      chunks,
    );

  return {
    /**
     * One submission for chunk `c` of acquisition `a`: its lanes decoded into the scratch, the tile sums after the
     * pixels, then `rest(encoder)` (the passes that use them). Parameter buffers are freed after the submit.
     */
    chunk(a: number, g: IndexGeometry, c: IndexChunk, rest: (e: GPUCommandEncoder) => GPUBuffer[]): void {
      const acq = archive.acquisitions[a];
      const placement = plan.placements.find((p) => p.acquisition === a && p.record === c.record);
      if (!placement)
        throw new StemflowError('invalid', `Record ${c.record} of ${acq.info.name} is not loaded.`);
      const rec = acq.records[c.record];
      const encoder = device.createCommandEncoder({ label: 'series index build' });
      const decode = encodeChunks(
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
              pixels: acq.geometry.pixels,
              data_base: placement.dataBase,
              offsets_base: placement.offsetsBase,
              cells_base: placement.cellsBase,
              class_base: placement.classBase,
              data_words: rec.dataWords,
              cols: acq.info.detector[1],
              stride: virtualPixels,
            },
            workgroups: Math.ceil((c.frames * acq.geometry.slices) / 64),
          },
        ],
      );
      // The tile levels' sums after each frame's pixels, the smallest level from the pixels, each larger one from
      // the level below it: dispatches of at most 2^22 (frame, tile) invocations.
      const tiles = [...g.tiles].reverse().map((t, k, up) => {
        const below = up[k - 1];
        const count = t.rows * t.cols;
        const framesPer = Math.max(1, Math.floor(2 ** 22 / count));
        const parts: DispatchChunk[] = [];
        for (let f = 0; f < c.frames; f += framesPer) {
          const frames = Math.min(framesPer, c.frames - f);
          parts.push({
            params: {
              ...params(c, 0, 0),
              frames,
              frame_first: f,
              src_cols: below ? below.cols : g.detector[1],
              src_rows: below ? below.rows : g.detector[0],
              src_base: below ? below.base : 0,
              side: below ? t.side / below.side : t.side,
              tile_cols: t.cols,
              tiles: count,
              level_base: t.base,
            },
            workgroups: Math.ceil((frames * count) / 64),
          });
        }
        return pass(encoder, pipes.tiles, 'packed-index tiles', [[1, scratch]], parts);
      });
      const used = [decode, ...tiles, ...rest(encoder)];
      device.queue.submit([encoder.finish()]);
      for (const p of used) p.destroy();
    },
    /** Block tables and group words (`blocks_main`), then the group offsets and the chunk's total (`scan_main`). */
    sizes(
      e: GPUCommandEncoder,
      c: IndexChunk,
      chunk: number,
      blocks: GPUBuffer,
      bases: GPUBuffer,
    ): GPUBuffer[] {
      return [
        pass(
          e,
          pipes.blocks,
          'packed-index blocks',
          [
            [1, scratch],
            [2, blocks],
            [3, bases],
          ],
          [{ params: params(c, chunk, 0), workgroups: groupsOf(c) }],
        ),
        pass(
          e,
          pipes.scan,
          'packed-index scan',
          [
            [3, bases],
            [5, totals],
          ],
          [{ params: params(c, chunk, 0), workgroups: 1 }],
        ),
      ];
    },
    /** Every block at its width into `data` from word `dataBase` (`pack_main`). */
    pack(
      e: GPUCommandEncoder,
      c: IndexChunk,
      blocks: GPUBuffer,
      bases: GPUBuffer,
      data: GPUBuffer,
      dataBase: number,
    ): GPUBuffer[] {
      return [
        pass(
          e,
          pipes.pack,
          'packed-index pack',
          [
            [1, scratch],
            [2, blocks],
            [3, bases],
            [4, data],
          ],
          [{ params: params(c, 0, dataBase), workgroups: groupsOf(c) }],
        ),
      ];
    },
  };
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
