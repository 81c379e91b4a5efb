import type { FileContext } from './context';
import type { Cursor } from './cursor';

/** One header message: its type, flags and raw body (decoded by the message modules). */
export interface HeaderMessage {
  readonly type: number;
  readonly flags: number;
  readonly data: Uint8Array;
  /** Relative file address of `data[0]`. */
  readonly address: number;
}

export interface ObjectHeader {
  readonly address: number;
  readonly version: 1 | 2;
  readonly messages: HeaderMessage[];
}

export const MSG = {
  nil: 0x00,
  dataspace: 0x01,
  linkInfo: 0x02,
  datatype: 0x03,
  fillValueOld: 0x04,
  fillValue: 0x05,
  link: 0x06,
  externalFiles: 0x07,
  layout: 0x08,
  groupInfo: 0x0a,
  filterPipeline: 0x0b,
  continuation: 0x10,
  symbolTable: 0x11,
} as const;

const MAX_CHUNKS = 4096;
const MAX_MESSAGES = 65536;

interface Pending {
  address: number;
  length: number;
}

/** Reads an object header (version 1 or 2) with all its continuation chunks. */
export async function readObjectHeader(
  ctx: FileContext,
  address: number,
  signal?: AbortSignal,
): Promise<ObjectHeader> {
  const what = 'object header';
  const first = await ctx.readMeta(address, Math.min(16, ctx.source.size - ctx.abs(address)), what, signal);
  const isV2 = first[0] === 0x4f && first[1] === 0x48 && first[2] === 0x44 && first[3] === 0x52; // "OHDR"
  const messages: HeaderMessage[] = [];
  const pending: Pending[] = [];
  const seen = new Set<number>([address]);
  if (isV2) {
    const prefix = await ctx.readMeta(
      address,
      Math.min(40, ctx.source.size - ctx.abs(address)),
      what,
      signal,
    );
    const c = ctx.cursor(prefix, address, what);
    c.signature('OHDR');
    const version = c.u8();
    if (version !== 2) c.fail(`Unknown object header version ${version}`);
    const flags = c.u8();
    if (flags & 0x20) c.skip(16); // access, modification, change, birth times
    if (flags & 0x10) c.skip(4); // attribute storage phase change values
    const chunk0 = c.uint(1 << (flags & 3));
    if (chunk0 > ctx.source.size) c.fail('A chunk size larger than the file');
    const whole = await ctx.readMeta(address, c.pos + chunk0 + 4, what, signal);
    ctx.verifyChecksum(whole, c.pos + chunk0, address, what);
    parseV2Messages(
      ctx.cursor(whole.subarray(0, c.pos + chunk0), address, what),
      c.pos,
      flags,
      messages,
      pending,
    );
    for (let n = 0; pending.length > 0; n++) {
      const next = pending.shift()!;
      checkContinuation(ctx, next, seen, n, what);
      const block = await ctx.readMeta(next.address, next.length, what, signal);
      const bc = ctx.cursor(block, next.address, 'object header continuation block');
      bc.signature('OCHK');
      ctx.verifyChecksum(block, next.length - 4, next.address, 'object header continuation block');
      parseV2Messages(
        ctx.cursor(block.subarray(0, next.length - 4), next.address, what),
        4,
        flags,
        messages,
        pending,
      );
    }
    return { address, version: 2, messages };
  }
  const c = ctx.cursor(first, address, what);
  const version = c.u8();
  if (version !== 1) {
    c.fail(`Unknown object header version ${version} (neither version 1 nor an "OHDR" signature)`);
  }
  c.skip(1);
  c.u16(); // number of messages
  c.u32(); // reference count
  const size = c.u32();
  pending.push({ address: address + 16, length: size });
  seen.add(address + 16);
  for (let n = 0; pending.length > 0; n++) {
    const next = pending.shift()!;
    if (n > 0) checkContinuation(ctx, next, seen, n, what);
    else if (next.length > ctx.source.size) c.fail('A header size larger than the file');
    const block = await ctx.readMeta(next.address, next.length, what, signal);
    parseV1Messages(ctx.cursor(block, next.address, what), messages, pending);
  }
  return { address, version: 1, messages };
}

function checkContinuation(ctx: FileContext, p: Pending, seen: Set<number>, n: number, what: string): void {
  if (seen.has(p.address) || n > MAX_CHUNKS) {
    throw ctx.error(
      'corrupt',
      `The ${what} continues into itself (a loop of continuation blocks)`,
      p.address,
    );
  }
  seen.add(p.address);
  if (p.length > ctx.source.size || p.length < 8) {
    throw ctx.error(
      'corrupt',
      `An ${what} continuation block has an impossible length ${p.length}`,
      p.address,
    );
  }
}

function parseV1Messages(c: Cursor, out: HeaderMessage[], pending: Pending[]): void {
  while (c.remaining >= 8) {
    const type = c.u16();
    const size = c.u16();
    const flags = c.u8();
    c.skip(3);
    const address = c.address + c.pos;
    const data = c.take(size);
    push(c, { type, flags, data, address }, out, pending);
  }
}

function parseV2Messages(
  c: Cursor,
  start: number,
  hdrFlags: number,
  out: HeaderMessage[],
  pending: Pending[],
) {
  c.pos = start;
  const headerSize = hdrFlags & 0x04 ? 6 : 4;
  while (c.remaining >= headerSize) {
    const type = c.u8();
    const size = c.u16();
    const flags = c.u8();
    if (hdrFlags & 0x04) c.skip(2); // creation order
    const address = c.address + c.pos;
    const data = c.take(size);
    push(c, { type, flags, data, address }, out, pending);
  }
}

function push(c: Cursor, m: HeaderMessage, out: HeaderMessage[], pending: Pending[]): void {
  if (out.length >= MAX_MESSAGES) c.fail('Too many header messages');
  // Flag combinations no writer sets, refused by the HDF5 library ("bad flag combination for message"):
  // shared (bit 1) and not shareable (bit 2); "was unknown" (bit 5) without "mark if unknown" (bit 4) or with
  // "fail if unknown and open for write" (bit 3).
  const f = m.flags;
  if ((f & 0x06) === 0x06 || (f & 0x20 && (f & 0x18) !== 0x10)) {
    c.fail(`A header message (type ${m.type}) with the impossible flags 0x${f.toString(16)}`);
  }
  if (m.type === MSG.continuation) {
    const mc = c.ctx.cursor(m.data, m.address, 'continuation message');
    pending.push({ address: mc.offset(), length: mc.length() });
    return;
  }
  if (m.type !== MSG.nil) out.push(m);
}

export function findMessage(h: ObjectHeader, type: number): HeaderMessage | undefined {
  return h.messages.find((m) => m.type === type);
}
