import { walkBtreeV1 } from './btree-v1';
import type { FileContext } from './context';
import { heapString, readLocalHeap } from './local-heap';
import type { NamedLink } from './messages/link';

/** Lists an old-style group: v1 B-tree (type 0) of symbol table nodes ("SNOD") naming into a local heap. */
export async function readSymbolTableGroup(
  ctx: FileContext,
  btreeAddress: number,
  heapAddress: number,
  leafK: number,
  internalK: number,
  signal?: AbortSignal,
): Promise<NamedLink[]> {
  const snods: number[] = [];
  const [heap] = await Promise.all([
    readLocalHeap(ctx, heapAddress, signal),
    walkBtreeV1(
      ctx,
      btreeAddress,
      { type: 0, keySize: ctx.lengthSize, maxEntries: 2 * internalK, what: 'group B-tree' },
      (key, child) => {
        key.skip(ctx.lengthSize);
        snods.push(child);
      },
      signal,
    ),
  ]);
  const O = ctx.offsetSize;
  const entrySize = 2 * O + 24;
  const seen = new Set<number>();
  const nodes = await Promise.all(
    snods.map((child) => {
      if (seen.has(child)) throw ctx.error('corrupt', 'Two group B-tree entries share one node', child);
      seen.add(child);
      return ctx
        .readUpTo(child, 8 + 2 * leafK * entrySize, 'symbol table node', signal)
        .then((bytes) => ({ address: child, bytes }));
    }),
  );
  const out: NamedLink[] = [];
  for (const node of nodes) {
    const c = ctx.cursor(node.bytes, node.address, 'symbol table node');
    c.signature('SNOD');
    const version = c.u8();
    if (version !== 1) c.fail(`Unknown symbol table node version ${version}`);
    c.skip(1);
    const n = c.u16();
    for (let i = 0; i < n; i++) {
      const nameOffset = c.uint(O);
      const address = c.offset();
      const cacheType = c.u32();
      if (cacheType > 2) c.fail(`Unknown symbol table entry cache type ${cacheType}`);
      c.skip(4);
      const scratch = c.take(16);
      const name = heapString(ctx, heap, nameOffset, node.address);
      if (cacheType === 2) {
        const valueOffset = scratch[0] | (scratch[1] << 8) | (scratch[2] << 16) | (scratch[3] << 24);
        out.push({ name, kind: 'soft', target: heapString(ctx, heap, valueOffset >>> 0, node.address) });
      } else out.push({ name, kind: 'hard', address });
    }
  }
  return out;
}
