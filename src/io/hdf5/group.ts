import { readBtreeV2Header, walkBtreeV2 } from './btree-v2';
import type { FileContext } from './context';
import { FractalHeap } from './fractal-heap';
import { type NamedLink, parseLink, parseLinkInfo, parseSymbolTable } from './messages/link';
import { MSG, type ObjectHeader } from './object-header';
import type { Superblock } from './superblock';
import { readSymbolTableGroup } from './symbol-table-group';

/** Every link of a group: old-style symbol table, compact link messages, or dense (fractal heap + name index). */
export async function readGroupLinks(
  ctx: FileContext,
  sb: Superblock,
  header: ObjectHeader,
  signal?: AbortSignal,
): Promise<NamedLink[] | null> {
  const links: NamedLink[] = [];
  let isGroup = false;
  for (const m of header.messages) {
    if (m.type === MSG.link) {
      links.push(parseLink(ctx.cursor(m.data, m.address, 'link message')));
      isGroup = true;
    } else if (m.type === MSG.symbolTable) {
      const t = parseSymbolTable(ctx.cursor(m.data, m.address, 'symbol table message'));
      links.push(
        ...(await readSymbolTableGroup(
          ctx,
          t.btreeAddress,
          t.heapAddress,
          sb.groupLeafK,
          sb.groupInternalK,
          signal,
        )),
      );
      isGroup = true;
    } else if (m.type === MSG.linkInfo) {
      isGroup = true;
      const info = parseLinkInfo(ctx.cursor(m.data, m.address, 'link info message'));
      if (info.heapAddress >= 0 && info.nameIndexAddress >= 0) {
        links.push(...(await readDenseLinks(ctx, info.heapAddress, info.nameIndexAddress, signal)));
      }
    } else if (m.type === MSG.groupInfo) isGroup = true;
  }
  return isGroup ? links : null;
}

async function readDenseLinks(
  ctx: FileContext,
  heapAddress: number,
  indexAddress: number,
  signal?: AbortSignal,
): Promise<NamedLink[]> {
  const [heap, header] = await Promise.all([
    FractalHeap.open(ctx, heapAddress, signal),
    readBtreeV2Header(ctx, indexAddress, signal),
  ]);
  if (header.type !== 5) {
    throw ctx.error('corrupt', `A group name index of record type ${header.type} (5 expected)`, indexAddress);
  }
  const ids: Uint8Array[] = [];
  await walkBtreeV2(
    ctx,
    header,
    'group name index',
    (c) => {
      c.skip(4); // name hash
      ids.push(c.take(header.recordSize - 4));
    },
    signal,
  );
  return Promise.all(
    ids.map(async (id) => {
      const object = await heap.object(id, signal);
      return parseLink(ctx.cursor(object, heapAddress, 'link message in a fractal heap'));
    }),
  );
}
