import type { Cursor } from '../cursor';

export type ChunkIndexKind =
  | 'btree-v1'
  | 'single'
  | 'implicit'
  | 'fixed-array'
  | 'extensible-array'
  | 'btree-v2';

/** Decoded data layout message (0x08). Addresses are relative, as stored. */
export interface Layout {
  version: number;
  kind: 'compact' | 'contiguous' | 'chunked' | 'virtual';
  /** Contiguous: data address; chunked: index address (B-tree, array header, single chunk, implicit base). */
  address: number;
  /** Contiguous: size in bytes. */
  size: number;
  compactData: Uint8Array | null;
  /** Chunked: chunk dims in elements, without the trailing element-size dim. */
  chunkShape: number[] | null;
  /** Chunked: the trailing dim (element size in bytes). */
  chunkElementSize: number;
  index: ChunkIndexKind | null;
  /** Layout v4 chunk flags: bit 0 = partial edge chunks are not filtered; bit 1 = single chunk is filtered. */
  chunkFlags: number;
  singleFilteredSize: number;
  singleFilterMask: number;
  fixedArrayPageBits: number;
  earray: {
    maxBits: number;
    indexElements: number;
    minPointers: number;
    minElements: number;
    pageBits: number;
  } | null;
  btree2: { nodeSize: number; splitPercent: number; mergePercent: number } | null;
}

const INDEX_TYPES: (ChunkIndexKind | null)[] = [
  null,
  'single',
  'implicit',
  'fixed-array',
  'extensible-array',
  'btree-v2',
];

export function parseLayout(c: Cursor): Layout {
  const version = c.u8();
  const out: Layout = {
    version,
    kind: 'contiguous',
    address: -1,
    size: 0,
    compactData: null,
    chunkShape: null,
    chunkElementSize: 0,
    index: null,
    chunkFlags: 0,
    singleFilteredSize: 0,
    singleFilterMask: 0,
    fixedArrayPageBits: 0,
    earray: null,
    btree2: null,
  };
  if (version === 1 || version === 2) return parseOld(c, out);
  if (version !== 3 && version !== 4) c.fail(`Unknown data layout message version ${version}`);
  const cls = c.u8();
  if (cls === 0) {
    out.kind = 'compact';
    const n = c.u16();
    out.compactData = c.take(n);
    out.size = n;
  } else if (cls === 1) {
    out.kind = 'contiguous';
    out.address = c.offset();
    out.size = c.length();
  } else if (cls === 2 && version === 3) {
    out.kind = 'chunked';
    const rank = c.u8();
    out.address = c.offset();
    setChunkDims(
      c,
      out,
      Array.from({ length: rank }, () => c.u32()),
    );
    out.index = 'btree-v1';
  } else if (cls === 2) {
    out.kind = 'chunked';
    out.chunkFlags = c.u8();
    const rank = c.u8();
    const encoded = c.u8();
    if (encoded < 1 || encoded > 8) c.fail(`A chunk dimension size of ${encoded} bytes`);
    setChunkDims(
      c,
      out,
      Array.from({ length: rank }, () => c.uint(encoded)),
    );
    const type = c.u8();
    out.index = INDEX_TYPES[type] ?? null;
    if (!out.index) c.fail(`Unknown chunk index type ${type}`);
    if (type === 1 && out.chunkFlags & 2) {
      out.singleFilteredSize = c.length();
      out.singleFilterMask = c.u32();
    } else if (type === 3) {
      out.fixedArrayPageBits = c.u8();
    } else if (type === 4) {
      out.earray = {
        maxBits: c.u8(),
        indexElements: c.u8(),
        minPointers: c.u8(),
        minElements: c.u8(),
        pageBits: c.u8(),
      };
    } else if (type === 5) {
      out.btree2 = { nodeSize: c.u32(), splitPercent: c.u8(), mergePercent: c.u8() };
    }
    out.address = c.offset();
  } else if (cls === 3) {
    out.kind = 'virtual';
  } else {
    c.fail(`Unknown data layout class ${cls}`);
  }
  return out;
}

function parseOld(c: Cursor, out: Layout): Layout {
  const rank = c.u8();
  const cls = c.u8();
  c.skip(5);
  if (cls !== 0) out.address = c.offset();
  const dims = Array.from({ length: rank }, () => c.u32());
  if (cls === 2) {
    out.kind = 'chunked';
    out.index = 'btree-v1';
    setChunkDims(c, out, dims);
  } else if (cls === 1) {
    out.kind = 'contiguous';
    out.size = -1; // computed from the dataspace and datatype
  } else if (cls === 0) {
    out.kind = 'compact';
    const n = c.u32();
    out.compactData = c.take(n);
    out.size = n;
  } else c.fail(`Unknown data layout class ${cls}`);
  return out;
}

function setChunkDims(c: Cursor, out: Layout, dims: number[]): void {
  if (dims.length < 1 || dims.length > 33) c.fail(`A chunk of rank ${dims.length - 1}`);
  if (dims.some((d) => d === 0)) c.fail('A chunk dimension of 0');
  out.chunkShape = dims.slice(0, -1);
  out.chunkElementSize = dims[dims.length - 1];
}
