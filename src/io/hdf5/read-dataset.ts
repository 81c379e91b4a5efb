import { throwIfAborted } from '../../errors';
import { chunkBytes, downProducts } from './chunk-grid';
import type { FileContext } from './context';
import type { ChunkDecoder, ChunkTable, DatasetInfo } from './types';

const MAX_BYTES = 256 * 1024 * 1024;

/** Reads a whole (small) dataset into little-endian C-order bytes. */
export async function readWholeDataset(
  ctx: FileContext,
  ds: DatasetInfo,
  table: () => Promise<ChunkTable>,
  decode: ChunkDecoder,
  signal?: AbortSignal,
): Promise<Uint8Array> {
  const size = ds.dtype.size;
  const total = ds.shape.reduce((a, b) => a * b, size);
  if (total > MAX_BYTES) {
    throw ctx.error('budget', `The dataset "${ds.path}" (${total} bytes) is too large to read whole`);
  }
  let out: Uint8Array;
  if (ds.layout === 'compact') {
    const data = ds.storage.compactData!;
    if (data.length < total)
      throw ctx.error('corrupt', `The compact data of "${ds.path}" is too short`, ds.address);
    out = data.slice(0, total);
  } else if (ds.layout === 'contiguous') {
    out =
      ds.storage.address < 0
        ? filled(ds, total)
        : (await ctx.read(ds.storage.address, total, ds.path, signal)).slice();
  } else {
    out = filled(ds, total);
    await assembleChunks(ctx, ds, await table(), decode, out, signal);
  }
  if (!ds.dtype.littleEndian && size > 1) {
    for (let i = 0; i < out.length; i += size) out.subarray(i, i + size).reverse();
  }
  return out;
}

function filled(ds: DatasetInfo, total: number): Uint8Array {
  const out = new Uint8Array(total);
  const fill = ds.fillValue;
  if (fill?.some((b) => b !== 0)) for (let i = 0; i < total; i += fill.length) out.set(fill, i);
  return out;
}

async function assembleChunks(
  ctx: FileContext,
  ds: DatasetInfo,
  table: ChunkTable,
  decode: ChunkDecoder,
  out: Uint8Array,
  signal?: AbortSignal,
): Promise<void> {
  const chunk = ds.chunkShape!;
  const rank = chunk.length;
  const esize = ds.dtype.size;
  const expected = chunkBytes(ds);
  const gridDown = downProducts(table.grid);
  const outDown = downProducts(ds.shape);
  const chunkDown = downProducts(chunk);
  const skipPartial = (ds.storage.chunkFlags & 1) !== 0;
  for (let i = 0; i < table.address.length; i++) {
    throwIfAborted(signal);
    if (table.address[i] < 0) continue;
    const origin = table.grid.map((_, d) => (Math.floor(i / gridDown[d]) % table.grid[d]) * chunk[d]);
    const extent = origin.map((o, d) => Math.min(chunk[d], ds.shape[d] - o));
    const partial = extent.some((e, d) => e < chunk[d]);
    const raw = await ctx.source.read(table.address[i], table.size[i], signal);
    const data =
      ds.filters.length > 0 && !(skipPartial && partial)
        ? await decode(raw, ds.filters, table.filterMask[i], expected)
        : raw;
    if (data.length < expected) {
      throw ctx.error('corrupt', `A chunk of "${ds.path}" decodes to ${data.length} bytes, not ${expected}`);
    }
    // Copy rows along the last dimension.
    const rowBytes = extent[rank - 1] * esize;
    const rows = extent.slice(0, -1).reduce((a, b) => a * b, 1);
    const idx = new Array<number>(rank).fill(0);
    for (let r = 0; r < rows; r++) {
      let src = 0;
      let dst = 0;
      for (let d = 0; d < rank; d++) {
        src += idx[d] * chunkDown[d];
        dst += (origin[d] + idx[d]) * outDown[d];
      }
      out.set(data.subarray(src * esize, src * esize + rowBytes), dst * esize);
      for (let d = rank - 2; d >= 0; d--) {
        if (++idx[d] < extent[d]) break;
        idx[d] = 0;
      }
    }
  }
}
