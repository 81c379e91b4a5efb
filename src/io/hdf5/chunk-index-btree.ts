import { walkBtreeV1 } from './btree-v1';
import { readBtreeV2Header, walkBtreeV2 } from './btree-v2';
import { type ChunkSink, chunkBytes } from './chunk-grid';
import type { FileContext } from './context';
import type { DatasetInfo } from './types';

/** Version-1 B-tree (type 1) chunk index: keys hold size, filter mask and element offsets. */
export async function indexBtreeV1(
  ctx: FileContext,
  ds: DatasetInfo,
  chunkK: number,
  sink: ChunkSink,
  signal?: AbortSignal,
): Promise<void> {
  const rank = ds.shape.length;
  const chunk = ds.chunkShape!;
  const keySize = 8 + 8 * (rank + 1);
  const scaled = new Array<number>(rank);
  await walkBtreeV1(
    ctx,
    ds.storage.address,
    { type: 1, keySize, maxEntries: 2 * chunkK, what: `chunk index of "${ds.path}"` },
    (c, child) => {
      const size = c.u32();
      const mask = c.u32();
      for (let d = 0; d < rank; d++) {
        const offset = c.u64();
        if (offset % chunk[d] !== 0) c.fail('A chunk offset that is not a multiple of the chunk size');
        scaled[d] = offset / chunk[d];
      }
      // The key's last offset is into the datatype, always 0 (the HDF5 library cannot find a chunk whose key
      // says otherwise and reads fill values; refuse it rather than read the chunk). Fuzz: source case 1985.
      if (c.u64() !== 0) c.fail('A chunk key whose datatype offset is not 0');
      sink.put(scaled, child, size, mask);
    },
    signal,
  );
}

/** Version-2 B-tree chunk index: record type 10 (unfiltered) or 11 (filtered), keyed by scaled offsets. */
export async function indexBtreeV2(
  ctx: FileContext,
  ds: DatasetInfo,
  sink: ChunkSink,
  signal?: AbortSignal,
): Promise<void> {
  const what = `chunk index of "${ds.path}"`;
  const h = await readBtreeV2Header(ctx, ds.storage.address, signal);
  const rank = ds.shape.length;
  const O = ctx.offsetSize;
  const filtered = ds.filters.length > 0;
  const expectedType = filtered ? 11 : 10;
  if (h.type !== expectedType) {
    throw ctx.error(
      'corrupt',
      `The ${what} has records of type ${h.type}, expected ${expectedType}`,
      h.address,
    );
  }
  const sizeBytes = h.recordSize - O - 4 - 8 * rank;
  if (filtered ? sizeBytes < 1 || sizeBytes > 8 : h.recordSize !== O + 8 * rank) {
    throw ctx.error('corrupt', `The ${what} has records of an impossible size ${h.recordSize}`, h.address);
  }
  const full = chunkBytes(ds);
  const scaled = new Array<number>(rank);
  await walkBtreeV2(
    ctx,
    h,
    what,
    (c) => {
      const address = c.offset();
      const size = filtered ? c.uint(sizeBytes) : full;
      const mask = filtered ? c.u32() : 0;
      for (let d = 0; d < rank; d++) scaled[d] = c.u64();
      if (address < 0) c.fail('A chunk with an undefined address');
      sink.put(scaled, address, size, mask);
    },
    signal,
    // The library searches this tree by the chunk's scaled offsets, compared dimension by dimension.
    (c) => {
      c.skip(O + (filtered ? sizeBytes + 4 : 0));
      return Array.from({ length: rank }, () => c.u64());
    },
  );
}
