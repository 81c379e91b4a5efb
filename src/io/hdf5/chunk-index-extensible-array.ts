import { bitSet, checkArrayClient, decodeArrayElements, type EmitChunk } from './array-elements';
import type { FileContext } from './context';

interface Header {
  address: number;
  client: number;
  entrySize: number;
  maxBits: number;
  indexElements: number;
  minElements: number;
  minPointers: number;
  pageBits: number;
  maxIndexSet: number;
  indexBlock: number;
}

/** Extensible array chunk index: header, index block, secondary blocks, data blocks (paged when large). */
export async function indexExtensibleArray(
  ctx: FileContext,
  address: number,
  filtered: boolean,
  fullSize: number,
  emit: EmitChunk,
  signal?: AbortSignal,
): Promise<void> {
  const h = await readHeader(ctx, address, filtered, signal);
  if (h.indexBlock < 0 || h.maxIndexSet === 0) return;
  const O = ctx.offsetSize;
  const log2 = Math.log2;
  // Super blocks: u holds 2^floor(u/2) data blocks of 2^ceil(u/2) * minElements elements.
  const nsblks = 1 + h.maxBits - log2(h.minElements);
  const iblockSblks = 2 * log2(h.minPointers);
  const ndblkAddrs = 2 * (h.minPointers - 1);
  const nsblkAddrs = Math.max(0, nsblks - iblockSblks);
  const what = 'extensible array index block';
  const ibSize = 10 + O + h.indexElements * h.entrySize + (ndblkAddrs + nsblkAddrs) * O;
  const ib = await ctx.read(h.indexBlock, ibSize, what, signal);
  const c = ctx.cursor(ib, h.indexBlock, what);
  c.signature('EAIB');
  if (c.u8() !== 0) c.fail('Unknown version');
  if (c.u8() !== h.client) c.fail('A client ID that differs from its header');
  if (c.offset() !== address) c.fail('An index block that belongs to another array');
  const elementsAt = c.pos;
  c.skip(h.indexElements * h.entrySize);
  const dblkAddrs = Array.from({ length: ndblkAddrs }, () => c.offset());
  const sblkAddrs = Array.from({ length: nsblkAddrs }, () => c.offset());
  ctx.verifyChecksum(ib, c.pos, h.indexBlock, what);
  const limit = h.maxIndexSet;
  decodeArrayElements(
    ctx,
    ib,
    elementsAt,
    Math.min(h.indexElements, limit),
    h.entrySize,
    h.client,
    fullSize,
    0,
    h.indexBlock,
    emit,
  );
  const offBytes = Math.ceil(h.maxBits / 8);
  const pageN = 2 ** h.pageBits;
  const jobs: Promise<void>[] = [];
  let start = h.indexElements;
  let dblkIndex = 0;
  for (let u = 0; u < nsblks && start < limit; u++) {
    const ndblks = 2 ** Math.floor(u / 2);
    const nelmts = 2 ** Math.ceil(u / 2) * h.minElements;
    if (u < iblockSblks) {
      for (let j = 0; j < ndblks; j++, dblkIndex++, start += nelmts) {
        if (start >= limit) break;
        const a = dblkAddrs[dblkIndex];
        if (a >= 0)
          jobs.push(
            readDataBlock(ctx, h, a, start, nelmts, limit, offBytes, 0, null, 0, fullSize, emit, signal),
          );
      }
    } else {
      const sAddr = sblkAddrs[u - iblockSblks];
      const first = start;
      start += ndblks * nelmts;
      if (sAddr >= 0) {
        jobs.push(
          readSecondaryBlock(
            ctx,
            h,
            sAddr,
            first,
            ndblks,
            nelmts,
            limit,
            offBytes,
            pageN,
            fullSize,
            emit,
            signal,
          ),
        );
      }
    }
  }
  await Promise.all(jobs);
}

async function readHeader(ctx: FileContext, address: number, filtered: boolean, signal?: AbortSignal) {
  const what = 'extensible array chunk index';
  const L = ctx.lengthSize;
  const head = await ctx.readMeta(address, 12 + 6 * L + ctx.offsetSize + 4, what, signal);
  const c = ctx.cursor(head, address, what);
  c.signature('EAHD');
  if (c.u8() !== 0) c.fail('Unknown version');
  const client = c.u8();
  const entrySize = c.u8();
  const maxBits = c.u8();
  const indexElements = c.u8();
  const minElements = c.u8();
  const minPointers = c.u8();
  const pageBits = c.u8();
  for (let k = 0; k < 4; k++) c.length(); // super/data block counts and sizes
  const maxIndexSet = c.length();
  c.length(); // elements realized
  const indexBlock = c.offset();
  ctx.verifyChecksum(head, c.pos, address, what);
  checkArrayClient(ctx, client, entrySize, filtered, address, what);
  const pow2 = (x: number) => x > 0 && (x & (x - 1)) === 0;
  if (
    !pow2(minElements) ||
    !pow2(minPointers) ||
    maxBits > 64 ||
    maxBits < Math.log2(minElements) ||
    pageBits > 32
  ) {
    c.fail('Impossible array parameters');
  }
  const h: Header = {
    address,
    client,
    entrySize,
    maxBits,
    indexElements,
    minElements,
    minPointers,
    pageBits,
    maxIndexSet,
    indexBlock,
  };
  return h;
}

async function readSecondaryBlock(
  ctx: FileContext,
  h: Header,
  address: number,
  first: number,
  ndblks: number,
  nelmts: number,
  limit: number,
  offBytes: number,
  pageN: number,
  fullSize: number,
  emit: EmitChunk,
  signal?: AbortSignal,
): Promise<void> {
  const what = 'extensible array secondary block';
  const O = ctx.offsetSize;
  const npages = nelmts > pageN ? nelmts / pageN : 0;
  const bitmapSize = npages ? Math.ceil((ndblks * npages) / 8) : 0;
  const bytes = await ctx.read(address, 10 + O + offBytes + bitmapSize + ndblks * O, what, signal);
  const c = ctx.cursor(bytes, address, what);
  c.signature('EASB');
  if (c.u8() !== 0) c.fail('Unknown version');
  if (c.u8() !== h.client) c.fail('A client ID that differs from its header');
  if (c.offset() !== h.address) c.fail('A block that belongs to another array');
  c.skip(offBytes);
  const bitmap = c.take(bitmapSize);
  const addrs = Array.from({ length: ndblks }, () => c.offset());
  ctx.verifyChecksum(bytes, c.pos, address, what);
  await Promise.all(
    addrs.map((a, j) =>
      a >= 0 && first + j * nelmts < limit
        ? readDataBlock(
            ctx,
            h,
            a,
            first + j * nelmts,
            nelmts,
            limit,
            offBytes,
            npages,
            bitmap,
            j * npages,
            fullSize,
            emit,
            signal,
          )
        : undefined,
    ),
  );
}

async function readDataBlock(
  ctx: FileContext,
  h: Header,
  address: number,
  first: number,
  nelmts: number,
  limit: number,
  offBytes: number,
  npages: number,
  bitmap: Uint8Array | null,
  bitmapStart: number,
  fullSize: number,
  emit: EmitChunk,
  signal?: AbortSignal,
): Promise<void> {
  const what = 'extensible array data block';
  const prefix = 10 + ctx.offsetSize + offBytes;
  const e = h.entrySize;
  const size = npages ? prefix + nelmts * e + 4 * npages : prefix + nelmts * e;
  const bytes = await ctx.read(address, size, what, signal);
  const c = ctx.cursor(bytes, address, what);
  c.signature('EADB');
  if (c.u8() !== 0) c.fail('Unknown version');
  if (c.u8() !== h.client) c.fail('A client ID that differs from its header');
  if (c.offset() !== h.address) c.fail('A block that belongs to another array');
  // The block offset is informational: HDF5 1.10 stores an inexact one for data blocks of the index block.
  c.skip(offBytes);
  const count = Math.min(nelmts, limit - first);
  if (!npages) {
    ctx.verifyChecksum(bytes, prefix - 4 + nelmts * e, address, what);
    decodeArrayElements(ctx, bytes, prefix - 4, count, e, h.client, fullSize, first, address, emit);
    return;
  }
  ctx.verifyChecksum(bytes, prefix - 4, address, what);
  const pageN = nelmts / npages;
  for (let p = 0; p < npages && p * pageN < count; p++) {
    if (!bitmap || !bitSet(bitmap, bitmapStart + p)) continue;
    const at = prefix + p * (pageN * e + 4);
    const page = bytes.subarray(at, at + pageN * e + 4);
    ctx.verifyChecksum(page, pageN * e, address + at, 'extensible array data block page');
    const n = Math.min(pageN, count - p * pageN);
    decodeArrayElements(ctx, page, 0, n, e, h.client, fullSize, first + p * pageN, address + at, emit);
  }
}
