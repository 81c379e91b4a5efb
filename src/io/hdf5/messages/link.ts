import type { Cursor } from '../cursor';

export type LinkInfo =
  | { kind: 'hard'; address: number }
  | { kind: 'soft'; target: string }
  | { kind: 'external'; file: string; path: string };

export type NamedLink = LinkInfo & { name: string };

/** Link message (0x06). */
export function parseLink(c: Cursor): NamedLink {
  const version = c.u8();
  if (version !== 1) c.fail(`Unknown link message version ${version}`);
  const flags = c.u8();
  const type = flags & 0x08 ? c.u8() : 0;
  if (flags & 0x04) c.skip(8); // creation order
  if (flags & 0x10) c.u8(); // character set
  const nameLength = c.uint(1 << (flags & 3));
  if (nameLength === 0) c.fail('A link without a name');
  const name = c.text(nameLength);
  if (type === 0) return { name, kind: 'hard', address: c.offset() };
  if (type === 1) return { name, kind: 'soft', target: c.text(c.u16()) };
  if (type === 64) {
    const n = c.u16();
    const v = c.ctx.cursor(c.take(n), c.address, 'external link');
    v.u8(); // version and flags
    const file = v.cstring();
    const path = v.remaining > 0 ? v.cstring() : '';
    return { name, kind: 'external', file, path };
  }
  return c.fail(`Unknown link type ${type} of link "${name}"`);
}

export interface LinkInfoMessage {
  heapAddress: number;
  nameIndexAddress: number;
}

/** Link info message (0x02): where a dense group keeps its links. */
export function parseLinkInfo(c: Cursor): LinkInfoMessage {
  const version = c.u8();
  if (version !== 0) c.fail(`Unknown link info message version ${version}`);
  const flags = c.u8();
  if (flags & 1) c.skip(8);
  const heapAddress = c.offset();
  const nameIndexAddress = c.offset();
  return { heapAddress, nameIndexAddress };
}

/** Symbol table message (0x11): an old-style group. */
export function parseSymbolTable(c: Cursor): { btreeAddress: number; heapAddress: number } {
  return { btreeAddress: c.offset(), heapAddress: c.offset() };
}
