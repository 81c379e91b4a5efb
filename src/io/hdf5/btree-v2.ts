import type { FileContext } from './context';
import type { Cursor } from './cursor';

/** Header of a version-2 B-tree ("BTHD"). */
export interface BtreeV2Header {
  address: number;
  type: number;
  nodeSize: number;
  recordSize: number;
  depth: number;
  rootAddress: number;
  rootRecords: number;
  totalRecords: number;
}

const PREFIX = 10; // signature, version, type, checksum
const MAX_DEPTH = 32;

export async function readBtreeV2Header(
  ctx: FileContext,
  address: number,
  signal?: AbortSignal,
): Promise<BtreeV2Header> {
  const what = 'version 2 B-tree header';
  const size = 16 + ctx.offsetSize + 2 + ctx.lengthSize + 4;
  const bytes = await ctx.readMeta(address, size, what, signal);
  const c = ctx.cursor(bytes, address, what);
  c.signature('BTHD');
  const version = c.u8();
  if (version !== 0) c.fail(`Unknown version 2 B-tree version ${version}`);
  const type = c.u8();
  const nodeSize = c.u32();
  const recordSize = c.u16();
  const depth = c.u16();
  c.skip(2); // split and merge percents
  const rootAddress = c.offset();
  const rootRecords = c.u16();
  const totalRecords = c.length();
  ctx.verifyChecksum(bytes, c.pos, address, what);
  if (nodeSize < PREFIX + recordSize || nodeSize > 1 << 24 || recordSize === 0) {
    c.fail(`Impossible node size ${nodeSize} or record size ${recordSize}`);
  }
  if (depth > MAX_DEPTH) c.fail(`A depth of ${depth}`);
  if (totalRecords * recordSize > ctx.source.size * 2) c.fail(`An impossible record count ${totalRecords}`);
  return { address, type, nodeSize, recordSize, depth, rootAddress, rootRecords, totalRecords };
}

function bytesFor(n: number): number {
  return Math.floor(Math.log2(Math.max(1, n)) / 8) + 1;
}

/** Sizes of the child-pointer fields of internal nodes, per the library's derivation from the node size. */
function nodeLayout(h: BtreeV2Header, O: number) {
  const maxRecords = [Math.floor((h.nodeSize - PREFIX) / h.recordSize)];
  const cumMax = [maxRecords[0]];
  const cumSize = [0];
  const recordCountSize = bytesFor(maxRecords[0]);
  for (let d = 1; d <= h.depth; d++) {
    const pointer = O + recordCountSize + (d > 1 ? cumSize[d - 1] : 0);
    maxRecords[d] = Math.floor((h.nodeSize - (PREFIX + pointer)) / (h.recordSize + pointer));
    cumMax[d] = (maxRecords[d] + 1) * cumMax[d - 1] + maxRecords[d];
    cumSize[d] = bytesFor(cumMax[d]);
  }
  return { maxRecords, cumSize, recordCountSize };
}

/** Lexicographic comparison of two record keys. */
function compareKeys(a: number[], b: number[]): number {
  for (let k = 0; k < a.length; k++) if (a[k] !== b[k]) return a[k] < b[k] ? -1 : 1;
  return 0;
}

interface PendingNode {
  address: number;
  records: number;
  depth: number;
  /** Keys every record of this subtree must lie strictly between (null: no bound on that side). */
  low: number[] | null;
  high: number[] | null;
}

/**
 * Walks a version-2 B-tree, level by level (reads of one level run together), calling `visit` with a cursor at
 * each record (in no particular order); the callback must consume exactly one record.
 *
 * With `key` (reads a record's search key at the cursor), the walk also checks the B-tree's order: the records
 * of a node strictly increase, and every record of the subtree between two records of its parent lies between
 * them. The HDF5 library finds records by searching down that order, so a record out of it (a damaged key, even
 * under a recomputed checksum) hides it and its neighbours from the library, which reads fill values there,
 * while a walk that visits every node would read them: such a tree is 'corrupt', not something two readers can
 * agree on (fuzz: hdf5 seed 20261129 cases 2948, 3153, 3225, 8416, 9361, 10450, 10787).
 */
export async function walkBtreeV2(
  ctx: FileContext,
  h: BtreeV2Header,
  what: string,
  visit: (record: Cursor) => void,
  signal?: AbortSignal,
  key?: (record: Cursor) => number[],
): Promise<void> {
  if (h.rootAddress < 0 || h.totalRecords === 0) return;
  const O = ctx.offsetSize;
  const layout = nodeLayout(h, O);
  const visited = new Set<number>();
  let seen = 0;
  let level: PendingNode[] = [
    { address: h.rootAddress, records: h.rootRecords, depth: h.depth, low: null, high: null },
  ];
  while (level.length > 0) {
    for (const n of level) {
      if (visited.has(n.address)) {
        throw ctx.error('corrupt', `The ${what} points back to one of its own nodes (a cycle)`, n.address);
      }
      visited.add(n.address);
      if (n.records > layout.maxRecords[n.depth]) {
        throw ctx.error('corrupt', `A node of the ${what} claims ${n.records} records`, n.address);
      }
    }
    const nodes = await Promise.all(
      level.map(async (n) => ({ n, bytes: await ctx.read(n.address, h.nodeSize, what, signal) })),
    );
    const next: PendingNode[] = [];
    for (const { n, bytes } of nodes) {
      const c = ctx.cursor(bytes, n.address, what);
      c.signature(n.depth > 0 ? 'BTIN' : 'BTLF');
      const version = c.u8();
      if (version !== 0) c.fail(`Unknown B-tree node version ${version}`);
      if (c.u8() !== h.type) c.fail('A node whose record type differs from its header');
      const first = c.pos;
      c.skip(n.records * h.recordSize);
      const children: { address: number; records: number }[] = [];
      if (n.depth > 0) {
        for (let i = 0; i <= n.records; i++) {
          const address = c.offset();
          const count = c.uint(layout.recordCountSize);
          if (n.depth > 1) c.uint(layout.cumSize[n.depth - 1]);
          if (address < 0) c.fail('An undefined child pointer');
          children.push({ address, records: count });
        }
      }
      ctx.verifyChecksum(bytes, c.pos, n.address, what);
      const keys: (number[] | null)[] = [n.low];
      for (let i = 0; i < n.records; i++) {
        c.pos = first + i * h.recordSize;
        if (key) {
          const k = key(c);
          const before = keys[keys.length - 1];
          const after = i === n.records - 1 ? n.high : null;
          if ((before && compareKeys(before, k) >= 0) || (after && compareKeys(k, after) >= 0)) {
            const other = before && compareKeys(before, k) >= 0 ? before : after!;
            throw ctx.error(
              'corrupt',
              `The ${what} is out of order: the record with key (${k.join(', ')}) is not ${other === before ? 'after' : 'before'} (${other.join(', ')}); a key is damaged`,
              n.address,
            );
          }
          keys.push(k);
          c.pos = first + i * h.recordSize;
        }
        visit(c);
      }
      keys.push(n.high);
      children.forEach((child, i) => {
        next.push({ ...child, depth: n.depth - 1, low: keys[i] ?? null, high: keys[i + 1] ?? null });
      });
      seen += n.records;
    }
    if (visited.size + next.length > ctx.source.size / PREFIX) {
      throw ctx.error('corrupt', `The ${what} has more nodes than the file can hold`);
    }
    level = next;
  }
  if (seen !== h.totalRecords) {
    throw ctx.error('corrupt', `The ${what} holds ${seen} records but its header says ${h.totalRecords}`);
  }
}
