import { bitSet, checkArrayClient, decodeArrayElements, type EmitChunk } from './array-elements';
import type { FileContext } from './context';

/** Fixed array chunk index ("FAHD" + "FADB", with pages when there are more than 2^pageBits entries). */
export async function indexFixedArray(
  ctx: FileContext,
  address: number,
  filtered: boolean,
  fullSize: number,
  expectedEntries: number,
  emit: EmitChunk,
  signal?: AbortSignal,
): Promise<void> {
  const what = 'fixed array chunk index';
  const O = ctx.offsetSize;
  const head = await ctx.readMeta(address, 8 + ctx.lengthSize + O + 4, what, signal);
  const c = ctx.cursor(head, address, what);
  c.signature('FAHD');
  if (c.u8() !== 0) c.fail('Unknown version');
  const client = c.u8();
  const entrySize = c.u8();
  const pageBits = c.u8();
  const n = c.length();
  const dblock = c.offset();
  ctx.verifyChecksum(head, c.pos, address, what);
  checkArrayClient(ctx, client, entrySize, filtered, address, what);
  if (n !== expectedEntries) c.fail(`${n} entries where the dataset has ${expectedEntries} chunks`);
  if (pageBits > 32) c.fail('Impossible page size');
  if (n * entrySize > ctx.source.size) c.fail('More entries than the file can hold');
  if (dblock < 0 || n === 0) return;
  const pageN = 2 ** pageBits;
  const npages = n > pageN ? Math.ceil(n / pageN) : 0;
  const bitmapSize = Math.ceil(npages / 8);
  const prefix = 10 + O + bitmapSize;
  const total = npages ? prefix + n * entrySize + 4 * npages : prefix + n * entrySize;
  const bytes = await ctx.read(dblock, total, 'fixed array data block', signal);
  const d = ctx.cursor(bytes, dblock, 'fixed array data block');
  d.signature('FADB');
  if (d.u8() !== 0) d.fail('Unknown version');
  if (d.u8() !== client) d.fail('A client ID that differs from its header');
  if (d.offset() !== address) d.fail('A data block that belongs to another array');
  const bitmap = d.take(bitmapSize);
  if (!npages) {
    ctx.verifyChecksum(bytes, prefix - 4 + n * entrySize, dblock, 'fixed array data block');
    decodeArrayElements(ctx, bytes, prefix - 4, n, entrySize, client, fullSize, 0, dblock, emit);
    return;
  }
  ctx.verifyChecksum(bytes, prefix - 4, dblock, 'fixed array data block');
  let at = prefix;
  for (let p = 0; p < npages; p++) {
    const count = Math.min(pageN, n - p * pageN);
    if (bitSet(bitmap, p)) {
      const page = bytes.subarray(at, at + count * entrySize + 4);
      ctx.verifyChecksum(page, count * entrySize, dblock + at, 'fixed array data block page');
      decodeArrayElements(ctx, page, 0, count, entrySize, client, fullSize, p * pageN, dblock + at, emit);
    }
    at += count * entrySize + 4;
  }
}
