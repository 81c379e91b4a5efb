import type { FileContext } from './context';

export type EmitChunk = (index: number, address: number, size: number, mask: number) => void;

/**
 * Decodes `count` chunk entries of a fixed or extensible array: client 0 = address only (size `fullSize`),
 * client 1 = address, chunk size (entrySize - offsetSize - 4 bytes), filter mask.
 */
export function decodeArrayElements(
  ctx: FileContext,
  bytes: Uint8Array,
  at: number,
  count: number,
  entrySize: number,
  client: number,
  fullSize: number,
  firstIndex: number,
  address: number,
  emit: EmitChunk,
): void {
  const c = ctx.cursor(bytes, address, 'chunk index block');
  c.pos = at;
  c.need(count * entrySize);
  const sizeBytes = entrySize - ctx.offsetSize - 4;
  for (let i = 0; i < count; i++) {
    const chunk = c.offset();
    if (client === 1) {
      const size = c.uint(sizeBytes);
      const mask = c.u32();
      emit(firstIndex + i, chunk, size, mask);
    } else emit(firstIndex + i, chunk, fullSize, 0);
  }
}

/** Checks the client ID and entry size of an array header against the dataset. */
export function checkArrayClient(
  ctx: FileContext,
  client: number,
  entrySize: number,
  filtered: boolean,
  address: number,
  what: string,
): void {
  if (client !== (filtered ? 1 : 0)) {
    throw ctx.error('corrupt', `The ${what} is for ${client ? 'filtered' : 'unfiltered'} chunks`, address);
  }
  const sizeBytes = entrySize - ctx.offsetSize - 4;
  if (filtered ? sizeBytes < 1 || sizeBytes > 8 : entrySize !== ctx.offsetSize) {
    throw ctx.error('corrupt', `The ${what} has entries of an impossible size ${entrySize}`, address);
  }
}

/** Bit `i` of an HDF5 bitmap (most significant bit first). */
export function bitSet(bits: Uint8Array, i: number): boolean {
  return (bits[i >> 3] & (0x80 >> (i & 7))) !== 0;
}
