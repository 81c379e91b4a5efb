import type { FileContext } from './context';
import type { Cursor } from './cursor';

export interface BtreeV1Options {
  /** 0 = group nodes, 1 = raw data chunks. */
  type: 0 | 1;
  keySize: number;
  /** Expected maximum entries per node (2K), to read a node in one read; larger nodes cost a second read. */
  maxEntries: number;
  what: string;
}

/**
 * Called once per leaf entry with a cursor at the entry's key (the key to the left of its child); the
 * callback must consume exactly the key. `child` is the leaf's child: a symbol table node or a chunk address.
 */
export type BtreeV1Visit = (key: Cursor, child: number) => void;

const MAX_DEPTH = 64;

/** Walks a version-1 B-tree, level by level (reads of one level run together), visiting its leaf entries. */
export async function walkBtreeV1(
  ctx: FileContext,
  root: number,
  opts: BtreeV1Options,
  visit: BtreeV1Visit,
  signal?: AbortSignal,
): Promise<void> {
  const O = ctx.offsetSize;
  const headerSize = 8 + 2 * O;
  const stride = opts.keySize + O;
  const visited = new Set<number>();
  let level: { address: number; level: number }[] = [{ address: root, level: -1 }];
  for (let depth = 0; level.length > 0; depth++) {
    if (depth > MAX_DEPTH) throw ctx.error('corrupt', `The ${opts.what} is deeper than ${MAX_DEPTH} levels`);
    for (const n of level) {
      if (visited.has(n.address)) {
        throw ctx.error(
          'corrupt',
          `The ${opts.what} points back to one of its own nodes (a cycle)`,
          n.address,
        );
      }
      visited.add(n.address);
    }
    const nodes = await Promise.all(
      level.map(async (n) => {
        const guess = headerSize + opts.maxEntries * stride + opts.keySize;
        let bytes = await ctx.readUpTo(n.address, guess, opts.what, signal);
        const c = ctx.cursor(bytes, n.address, opts.what);
        c.signature('TREE');
        const type = c.u8();
        const nodeLevel = c.u8();
        const entries = c.u16();
        if (type !== opts.type) c.fail(`A B-tree node of type ${type} where type ${opts.type} was expected`);
        if (n.level >= 0 && nodeLevel !== n.level) {
          c.fail(`A B-tree node at level ${nodeLevel} where level ${n.level} was expected`);
        }
        const size = headerSize + entries * stride + opts.keySize;
        if (size > bytes.length) bytes = await ctx.read(n.address, size, opts.what, signal);
        return { address: n.address, level: nodeLevel, entries, bytes };
      }),
    );
    const next: { address: number; level: number }[] = [];
    for (const node of nodes) {
      const c = ctx.cursor(node.bytes, node.address, opts.what);
      for (let i = 0; i < node.entries; i++) {
        c.pos = headerSize + i * stride + opts.keySize;
        const child = c.offset();
        if (child < 0) c.fail('An undefined child pointer');
        if (node.level > 0) next.push({ address: child, level: node.level - 1 });
        else {
          c.pos = headerSize + i * stride;
          visit(c, child);
        }
      }
    }
    if (next.length + visited.size > ctx.source.size / headerSize) {
      throw ctx.error('corrupt', `The ${opts.what} has more nodes than the file can hold`);
    }
    level = next;
  }
}
