import type { FileContext } from './context';

/** A local heap ("HEAP"): the names of an old-style group. Returns its data segment. */
export async function readLocalHeap(
  ctx: FileContext,
  address: number,
  signal?: AbortSignal,
): Promise<Uint8Array> {
  const what = 'local heap';
  const head = await ctx.readMeta(address, 8 + 2 * ctx.lengthSize + ctx.offsetSize, what, signal);
  const c = ctx.cursor(head, address, what);
  c.signature('HEAP');
  const version = c.u8();
  if (version !== 0) c.fail(`Unknown local heap version ${version}`);
  c.skip(3);
  const size = c.length();
  c.length(); // free list head
  const dataAddress = c.offset();
  if (size > ctx.source.size) c.fail('A heap larger than the file');
  return ctx.readMeta(dataAddress, size, 'local heap data', signal);
}

/** The NUL-terminated string at `offset` in a local heap. */
export function heapString(ctx: FileContext, heap: Uint8Array, offset: number, address: number): string {
  if (offset >= heap.length) throw ctx.error('corrupt', 'A name lies outside its local heap', address);
  const end = heap.indexOf(0, offset);
  if (end < 0) throw ctx.error('corrupt', 'An unterminated name in a local heap', address);
  return new TextDecoder().decode(heap.subarray(offset, end));
}
