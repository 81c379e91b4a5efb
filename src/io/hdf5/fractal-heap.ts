import type { FileContext } from './context';

/** A fractal heap ("FRHP") reader for managed objects (the links of dense groups). */
export class FractalHeap {
  private readonly blocks = new Map<number, Promise<Uint8Array>>();

  private constructor(
    private readonly ctx: FileContext,
    readonly address: number,
    private readonly h: {
      idLength: number;
      checksummedDirect: boolean;
      maxManaged: number;
      width: number;
      startBlock: number;
      maxDirect: number;
      maxHeapBits: number;
      rootAddress: number;
      rootRows: number;
    },
  ) {}

  static async open(ctx: FileContext, address: number, signal?: AbortSignal): Promise<FractalHeap> {
    const what = 'fractal heap header';
    const L = ctx.lengthSize;
    const O = ctx.offsetSize;
    const size = 4 + 1 + 2 + 2 + 1 + 4 + L + O + L + O + 8 * L + 2 + L + L + 2 + 2 + O + 2;
    const bytes = await ctx.readMeta(address, size + 4, what, signal);
    const c = ctx.cursor(bytes, address, what);
    c.signature('FRHP');
    const version = c.u8();
    if (version !== 0) c.fail(`Unknown fractal heap version ${version}`);
    const idLength = c.u16();
    const filterLength = c.u16();
    const flags = c.u8();
    const maxManaged = c.u32();
    c.length(); // next huge object id
    c.offset(); // huge object B-tree
    c.length(); // free space
    c.offset(); // free space manager
    for (let k = 0; k < 6; k++) c.length(); // managed space, allocated, iterator, count, huge size, huge count
    c.length(); // tiny size
    c.length(); // tiny count
    const width = c.u16();
    const startBlock = c.length();
    const maxDirect = c.length();
    const maxHeapBits = c.u16();
    c.u16(); // starting rows of root indirect block
    const rootAddress = c.offset();
    const rootRows = c.u16();
    if (filterLength > 0) throw ctx.error('unsupported', 'A group whose link heap is compressed', address);
    ctx.verifyChecksum(bytes, c.pos, address, what);
    const pow2 = (x: number) => x > 0 && (x & (x - 1)) === 0;
    if (!pow2(width) || !pow2(startBlock) || !pow2(maxDirect) || maxDirect < startBlock || width > 65536) {
      c.fail('Impossible doubling-table parameters');
    }
    if (maxHeapBits < 1 || maxHeapBits > 53 || maxDirect > 1 << 30 || idLength > 64)
      c.fail('Impossible heap sizes');
    return new FractalHeap(ctx, address, {
      idLength,
      checksummedDirect: (flags & 2) !== 0,
      maxManaged,
      width,
      startBlock,
      maxDirect,
      maxHeapBits,
      rootAddress,
      rootRows,
    });
  }

  private get offsetBytes(): number {
    return Math.ceil(this.h.maxHeapBits / 8);
  }

  /** Reads the object a heap ID designates (managed objects only). */
  async object(id: Uint8Array, signal?: AbortSignal): Promise<Uint8Array> {
    const { ctx, h } = this;
    const type = (id[0] >> 4) & 3;
    if (id[0] >> 6 !== 0) throw ctx.error('corrupt', 'A fractal heap ID of an unknown version', this.address);
    if (type !== 0) {
      throw ctx.error(
        'unsupported',
        `A ${type === 1 ? 'huge' : 'tiny'} fractal heap object (a very long or tiny link)`,
      );
    }
    const lengthBytes = Math.min(Math.ceil(Math.log2(h.maxDirect) / 8), bytesFor(h.maxManaged));
    const c = ctx.cursor(id, this.address, 'fractal heap ID');
    c.skip(1);
    const offset = c.uint(this.offsetBytes);
    const length = c.uint(lengthBytes);
    return this.locate(offset, length, signal);
  }

  private rowBlockSize(row: number): number {
    return row === 0 ? this.h.startBlock : this.h.startBlock * 2 ** (row - 1);
  }

  private async locate(offset: number, length: number, signal?: AbortSignal): Promise<Uint8Array> {
    const { ctx, h } = this;
    if (h.rootAddress < 0) throw ctx.error('corrupt', 'A link in an empty fractal heap', this.address);
    let blockAddress = h.rootAddress;
    let rows = h.rootRows;
    let local = offset; // offset relative to the current block's start in heap space
    let blockSize = h.startBlock;
    const maxDirectRows = Math.log2(h.maxDirect) - Math.log2(h.startBlock) + 2;
    for (let depth = 0; rows > 0; depth++) {
      if (depth > 16 || rows > 64)
        throw ctx.error('corrupt', 'A fractal heap deeper than possible', blockAddress);
      const entries = await this.indirectEntries(blockAddress, rows, signal);
      let row = 0;
      let rowStart = 0;
      while (row < rows && rowStart + this.rowBlockSize(row) * h.width <= local) {
        rowStart += this.rowBlockSize(row) * h.width;
        row++;
      }
      if (row >= rows) throw ctx.error('corrupt', 'A fractal heap offset past the heap', blockAddress);
      const size = this.rowBlockSize(row);
      const col = Math.floor((local - rowStart) / size);
      const child = entries[row * h.width + col];
      if (child < 0) throw ctx.error('corrupt', 'A link in an unallocated fractal heap block', blockAddress);
      local -= rowStart + col * size;
      blockAddress = child;
      blockSize = size;
      rows = row < maxDirectRows ? 0 : Math.log2(size) - Math.log2(h.startBlock * h.width) + 1;
    }
    const block = await this.directBlock(blockAddress, blockSize, signal);
    if (local + length > block.length || local < 5 + ctx.offsetSize + this.offsetBytes) {
      throw ctx.error('corrupt', 'A fractal heap object outside its block', blockAddress);
    }
    return block.subarray(local, local + length);
  }

  private async indirectEntries(address: number, rows: number, signal?: AbortSignal) {
    const { ctx, h } = this;
    const what = 'fractal heap indirect block';
    const O = ctx.offsetSize;
    const n = rows * h.width;
    const head = 5 + O + this.offsetBytes;
    const bytes = await ctx.readMeta(address, head + n * O + 4, what, signal);
    const c = ctx.cursor(bytes, address, what);
    c.signature('FHIB');
    if (c.u8() !== 0) c.fail('Unknown version');
    if (c.offset() !== this.address) c.fail('A block that belongs to another heap');
    c.skip(this.offsetBytes);
    const entries = Array.from({ length: n }, () => c.offset());
    ctx.verifyChecksum(bytes, c.pos, address, what);
    return entries;
  }

  private directBlock(address: number, size: number, signal?: AbortSignal): Promise<Uint8Array> {
    const hit = this.blocks.get(address);
    if (hit) return hit;
    const { ctx } = this;
    const what = 'fractal heap direct block';
    const p = ctx.read(address, size, what, signal).then((bytes) => {
      const c = ctx.cursor(bytes, address, what);
      c.signature('FHDB');
      if (c.u8() !== 0) c.fail('Unknown version');
      if (c.offset() !== this.address) c.fail('A block that belongs to another heap');
      c.skip(this.offsetBytes);
      if (this.h.checksummedDirect) {
        const at = c.pos;
        const stored = c.u32();
        const copy = bytes.slice();
        copy.fill(0, at, at + 4);
        const tmp = new Uint8Array(copy.length + 4);
        tmp.set(copy);
        new DataView(tmp.buffer).setUint32(copy.length, stored, true);
        ctx.verifyChecksum(tmp, copy.length, address, what);
      }
      return bytes;
    });
    p.catch(() => this.blocks.delete(address));
    this.blocks.set(address, p);
    return p;
  }
}

function bytesFor(n: number): number {
  return Math.floor(Math.log2(Math.max(1, n)) / 8) + 1;
}
