import type { FileContext } from './context';
import type { ChunkTable, DatasetInfo } from './types';

/** Collects chunk entries into a ChunkTable over the dataset's current chunk grid, checking each one. */
export class ChunkSink {
  readonly grid: number[];
  readonly table: ChunkTable;
  private readonly down: number[];

  constructor(
    private readonly ctx: FileContext,
    private readonly ds: DatasetInfo,
  ) {
    const chunk = ds.chunkShape ?? ds.shape.map((n) => Math.max(1, n));
    this.grid = ds.shape.map((n, d) => Math.ceil(n / chunk[d]));
    this.down = downProducts(this.grid);
    const total = this.grid.reduce((a, b) => a * b, 1);
    if (total > Math.max(ctx.source.size, 1 << 20)) {
      throw ctx.error(
        'corrupt',
        `The dataset "${ds.path}" declares ${total} chunks, more than the file could hold`,
      );
    }
    this.table = {
      grid: this.grid,
      address: new Float64Array(total).fill(-1),
      size: new Uint32Array(total),
      filterMask: new Uint32Array(total),
    };
  }

  /**
   * Adds a chunk at scaled coordinates (chunk indices). A chunk beyond the current extent of a dimension that
   * can grow is left out, as HDF5 does after a shrink; beyond a dimension that cannot grow it can only be a
   * corrupt index record (for example a flipped bit in a B-tree key), and dropping it would turn a frame into
   * fill values without a word, so it is an error.
   */
  put(scaled: ArrayLike<number>, address: number, size: number, mask: number): void {
    let index = 0;
    for (let d = 0; d < this.grid.length; d++) {
      if (scaled[d] >= this.grid[d]) {
        const max = this.ds.maxShape[d];
        if (max !== null && max <= this.ds.shape[d]) {
          throw this.ctx.error(
            'corrupt',
            `The chunk index of "${this.ds.path}" lists a chunk at ${Array.from(scaled).join(', ')} (in chunks), outside the dataset's fixed extent; the index is corrupt`,
            address,
          );
        }
        return;
      }
      index += scaled[d] * this.down[d];
    }
    this.putIndex(index, address, size, mask);
  }

  putIndex(index: number, address: number, size: number, mask: number): void {
    const { ctx, table } = this;
    if (address < 0) return;
    if (table.address[index] >= 0) {
      throw ctx.error('corrupt', `Two index entries claim the same chunk of "${this.ds.path}"`, address);
    }
    const abs = ctx.abs(address);
    if (abs < 48) {
      // The first 48 bytes always hold the signature and superblock: a chunk there is a corrupt address.
      throw ctx.error(
        'corrupt',
        `A chunk of "${this.ds.path}" claims to start inside the file's superblock`,
        address,
      );
    }
    if (!Number.isSafeInteger(abs + size) || abs + size > ctx.source.size) {
      throw ctx.error(
        'truncated',
        `A chunk of "${this.ds.path}" lies at bytes ${abs}-${abs + size}, past the end of the file (${ctx.source.size} bytes); the file is probably truncated`,
        address,
      );
    }
    if (size > 0xffffffff) throw ctx.error('corrupt', 'A chunk larger than 4 GiB', address);
    table.address[index] = abs;
    table.size[index] = size;
    table.filterMask[index] = mask >>> 0;
  }
}

export function downProducts(dims: number[]): number[] {
  const down = new Array<number>(dims.length);
  let p = 1;
  for (let d = dims.length - 1; d >= 0; d--) {
    down[d] = p;
    p *= dims[d];
  }
  return down;
}

/** Bytes of one full chunk. */
export function chunkBytes(ds: DatasetInfo): number {
  return (ds.chunkShape ?? []).reduce((a, b) => a * b, ds.storage.chunkElementSize || ds.dtype.size);
}

/**
 * The chunk grid over the maximum dimensions, with the unlimited dimension (if any) moved first: the order
 * the fixed array, extensible array and implicit indexes number their chunks in.
 */
export function maxGridOrder(ctx: FileContext, ds: DatasetInfo): { order: number[]; dims: number[] } {
  const chunk = ds.chunkShape!;
  const unlimited = ds.maxShape.map((m, d) => (m === null ? d : -1)).filter((d) => d >= 0);
  if (unlimited.length > 1) {
    throw ctx.error('corrupt', `"${ds.path}" has two unlimited dimensions but an array chunk index`);
  }
  const order = ds.shape.map((_, d) => d);
  if (unlimited.length === 1 && unlimited[0] > 0) {
    order.splice(unlimited[0], 1);
    order.unshift(unlimited[0]);
  }
  const dims = order.map((d) => {
    const m = ds.maxShape[d];
    return m === null ? Number.POSITIVE_INFINITY : Math.ceil(m / chunk[d]);
  });
  return { order, dims };
}

/** Puts the chunk with linear index `i` over `maxGridOrder` into the sink. */
export function putLinear(
  sink: ChunkSink,
  grid: { order: number[]; dims: number[] },
  down: number[],
  i: number,
  address: number,
  size: number,
  mask: number,
): void {
  const scaled = new Array<number>(grid.order.length);
  let rest = i;
  for (let k = 0; k < grid.order.length; k++) {
    const q = Math.floor(rest / down[k]);
    rest -= q * down[k];
    scaled[grid.order[k]] = q;
  }
  sink.put(scaled, address, size, mask);
}
