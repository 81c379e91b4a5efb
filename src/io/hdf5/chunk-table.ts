import { ChunkSink, chunkBytes, downProducts, maxGridOrder, putLinear } from './chunk-grid';
import { indexBtreeV1, indexBtreeV2 } from './chunk-index-btree';
import { indexExtensibleArray } from './chunk-index-extensible-array';
import { indexFixedArray } from './chunk-index-fixed-array';
import type { FileContext } from './context';
import type { ChunkTable, DatasetInfo } from './types';

/** The byte offset, stored size and filter mask of every chunk of a dataset, straight from its index. */
export async function readChunkTable(
  ctx: FileContext,
  ds: DatasetInfo,
  chunkK: number,
  signal?: AbortSignal,
): Promise<ChunkTable> {
  const s = ds.storage;
  if (ds.layout === 'compact') {
    throw ctx.error(
      'invalid',
      `The dataset "${ds.path}" is stored inside its header (compact); it has no chunks`,
    );
  }
  const sink = new ChunkSink(ctx, ds);
  if (ds.layout === 'contiguous') {
    if (s.address >= 0 && s.size > 0) sink.putIndex(0, s.address, s.size, 0);
    return sink.table;
  }
  if (s.address < 0) return sink.table; // nothing written yet
  const full = chunkBytes(ds);
  const filtered = ds.filters.length > 0;
  switch (ds.chunkIndex) {
    case 'btree-v1':
      await indexBtreeV1(ctx, ds, chunkK, sink, signal);
      break;
    case 'btree-v2':
      await indexBtreeV2(ctx, ds, sink, signal);
      break;
    case 'single':
      sink.put(
        ds.shape.map(() => 0),
        s.address,
        s.chunkFlags & 2 ? s.singleFilteredSize : full,
        s.chunkFlags & 2 ? s.singleFilterMask : 0,
      );
      break;
    case 'implicit': {
      const grid = maxGridOrder(ctx, ds);
      const down = downProducts(grid.dims);
      const n = grid.dims.reduce((a, b) => a * b, 1);
      if (!Number.isFinite(n) || n * full > ctx.source.size * 2) {
        throw ctx.error('corrupt', `The implicit chunk index of "${ds.path}" covers more than the file`);
      }
      for (let i = 0; i < n; i++) putLinear(sink, grid, down, i, s.address + i * full, full, 0);
      break;
    }
    case 'fixed-array': {
      const grid = maxGridOrder(ctx, ds);
      const down = downProducts(grid.dims);
      const n = grid.dims.reduce((a, b) => a * b, 1);
      if (!Number.isFinite(n))
        throw ctx.error('corrupt', `"${ds.path}" is unlimited but has a fixed array index`);
      await indexFixedArray(
        ctx,
        s.address,
        filtered,
        full,
        n,
        (i, a, size, mask) => putLinear(sink, grid, down, i, a, size, mask),
        signal,
      );
      break;
    }
    case 'extensible-array': {
      const grid = maxGridOrder(ctx, ds);
      const down = downProducts(grid.dims);
      await indexExtensibleArray(
        ctx,
        s.address,
        filtered,
        full,
        (i, a, size, mask) => putLinear(sink, grid, down, i, a, size, mask),
        signal,
      );
      break;
    }
    default:
      throw ctx.error('unsupported', `The chunk index of "${ds.path}" is not supported`);
  }
  return sink.table;
}
