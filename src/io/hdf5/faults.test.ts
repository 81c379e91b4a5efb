import { describe, expect, it } from 'vitest';
import { isStemflowError, type StemflowError } from '../../errors';
import { lookup3 } from './checksum';
import { openHdf5 } from './index';
import { find, fixture, readU, reseal, source, testdata, writeU } from './test-support/mutate';

/** Opens the file, the dataset and its chunk table; returns the error (or null when all of it worked). */
async function attempt(bytes: Uint8Array, path: string, name = 'broken.h5'): Promise<StemflowError | null> {
  try {
    const h5 = await openHdf5(source(bytes, name));
    await h5.chunkTable(await h5.dataset(path));
    return null;
  } catch (e) {
    if (!isStemflowError(e)) throw e;
    return e;
  }
}

function expectKind(e: StemflowError | null, kinds: string[], file = 'broken.h5'): void {
  expect(e).not.toBeNull();
  expect(kinds).toContain(e!.kind);
  expect(e!.message).toContain(file);
}

/** v0 superblock: the end-of-file address is at byte 40. */
function setEof(bytes: Uint8Array): Uint8Array {
  writeU(bytes, 40, 8, bytes.length);
  return bytes;
}

describe('hostile and damaged files', () => {
  it('reports a truncated file, wherever it is cut', async () => {
    const whole = fixture('many_v1_u8_32.h5');
    const tree = find(whole, 'TREE', 200);
    const root = readU(whole, 64, 8); // root object header address of the v0 superblock's root entry
    for (const cut of [0, 5, 20, 50, root + 10, tree + 30, whole.length - 1]) {
      expectKind(await attempt(whole.slice(0, cut), '/data'), ['truncated', 'corrupt']);
    }
  });

  it('still fails cleanly when the end-of-file field is rewritten to match the cut', async () => {
    const whole = fixture('many_v1_u8_32.h5');
    const h5 = await openHdf5(source(whole));
    const ds = await h5.dataset('/data');
    const btree = ds.storage.address;
    for (const cut of [btree + 12, btree + 200, find(whole, 'TREE', btree + 8) + 40]) {
      expectKind(await attempt(setEof(whole.slice(0, cut)), '/data'), ['truncated', 'corrupt']);
    }
    // Cut inside the chunk data: the index is whole but chunks lie past the end.
    const last = whole.length - 100;
    const e = await attempt(setEof(whole.slice(0, last)), '/data');
    expectKind(e, ['truncated']);
  });

  it('rejects a flipped byte in checksummed structures', async () => {
    const whole = fixture('latest_fixed_u16_192.h5');
    for (const at of [12, find(whole, 'OHDR') + 7, find(whole, 'FAHD') + 9, find(whole, 'FADB') + 20]) {
      const bytes = whole.slice();
      bytes[at] ^= 0x10;
      expectKind(await attempt(bytes, '/data'), ['corrupt']);
    }
    const ea = fixture('many_ext_u16_32.h5');
    // Bytes that only the checksum guards: header parameters, index block elements, block offsets.
    for (const [sig, at] of [
      ['EAHD', 20],
      ['EAIB', 16],
      ['EASB', 15],
      ['EADB', 15],
    ] as const) {
      const bytes = ea.slice();
      bytes[find(ea, sig) + at] ^= 0x01;
      const e = await attempt(bytes, '/data');
      expectKind(e, ['corrupt']);
      expect(e!.message).toContain('checksum');
    }
    const bt2 = fixture('latest_btree2_u16_32.h5');
    for (const sig of ['BTHD', 'BTIN', 'BTLF']) {
      const bytes = bt2.slice();
      bytes[find(bt2, sig) + 8] ^= 0x01;
      expectKind(await attempt(bytes, '/data'), ['corrupt']);
    }
    const dense = testdata('dense_groups.h5');
    for (const [sig, at] of [
      ['FRHP', 20],
      ['FHIB', 14],
    ] as const) {
      const bytes = dense.slice();
      bytes[find(dense, sig) + at] ^= 0x01;
      expectKind(await attempt(bytes, '/links/link_00001_with_a_longer_name'), ['corrupt']);
    }
  });

  it('detects a version-1 B-tree whose child points back at its own node', async () => {
    const bytes = fixture('many_v1_u8_32.h5');
    const h5 = await openHdf5(source(bytes));
    const root = (await h5.dataset('/data')).storage.address;
    expect(bytes[root + 5]).toBeGreaterThan(0); // an internal node
    writeU(bytes, root + 24 + 40, 8, root); // first child pointer (after the first 40-byte key)
    const e = await attempt(bytes, '/data');
    expectKind(e, ['corrupt']);
    expect(e!.message).toMatch(/cycle|level/);
  });

  it('detects a version-2 B-tree cycle even when the checksum was recomputed', async () => {
    const bytes = fixture('latest_btree2_u16_32.h5');
    const hdr = find(bytes, 'BTHD');
    const nodeSize = readU(bytes, hdr + 6, 4);
    const recordSize = readU(bytes, hdr + 10, 2);
    expect(readU(bytes, hdr + 12, 2)).toBe(1);
    const root = readU(bytes, hdr + 16, 8);
    const nrec = readU(bytes, hdr + 24, 2);
    const countSize = Math.floor(Math.log2(Math.floor((nodeSize - 10) / recordSize)) / 8) + 1;
    const children = root + 6 + nrec * recordSize;
    writeU(bytes, children, 8, root);
    reseal(bytes, root, children + (nrec + 1) * (8 + countSize));
    const e = await attempt(bytes, '/data');
    expectKind(e, ['corrupt']);
    expect(e!.message).toMatch(/cycle|signature/);
  });

  it('reports a chunk whose stored size runs past the end of the file', async () => {
    const bytes = fixture('raw_u16_32.h5');
    const h5 = await openHdf5(source(bytes));
    const leaf = (await h5.dataset('/raw')).storage.address;
    expect(bytes[leaf + 5]).toBe(0);
    writeU(bytes, leaf + 24, 4, 0x7fffffff);
    const e = await attempt(bytes, '/raw', 'raw_u16_32.h5');
    expectKind(e, ['truncated'], 'raw_u16_32.h5');
  });

  it('rejects object header continuation loops and absurd counts', async () => {
    const bytes = fixture('many_fixed_u32_32.h5');
    const hdr = find(bytes, 'FAHD');
    writeU(bytes, hdr + 8, 8, 2 ** 40); // max number of entries
    reseal(bytes, hdr, hdr + 8 + 8 + 8);
    expectKind(await attempt(bytes, '/data'), ['corrupt']);
    const ea = fixture('many_ext_u16_32.h5');
    const eh = find(ea, 'EAHD');
    ea[eh + 7] = 3; // data block minimum elements: not a power of two
    reseal(ea, eh, eh + 12 + 6 * 8 + 8);
    expectKind(await attempt(ea, '/data'), ['corrupt']);
  });

  it('gives up on aborted reads', async () => {
    const ac = new AbortController();
    ac.abort();
    await expect(openHdf5(source(fixture('raw_u16_32.h5')), ac.signal)).rejects.toSatisfy((e) =>
      isStemflowError(e, 'aborted'),
    );
  });

  it('refuses a v1 B-tree chunk key whose datatype offset is not 0 (fuzz: source case 1985)', async () => {
    const bytes = fixture('raw_u16_32.h5');
    const tree = find(bytes, 'TREE', 1000); // the chunk index node (the first TREE is the root group's)
    // Key 3: 24-byte node header, 48 bytes per (key, child); the datatype offset is the key's last 8 bytes.
    writeU(bytes, tree + 24 + 3 * 48 + 32, 8, 0x20000000);
    const e = await attempt(bytes, '/raw');
    expectKind(e, ['corrupt']);
    expect(e!.message).toMatch(/datatype offset is not 0/);
  });
});

/** Data offset of the first message of `type` in chunk 0 of a version-2 object header ("OHDR" at `ohdr`). */
function messageIn(bytes: Uint8Array, ohdr: number, type: number): number {
  const flags = bytes[ohdr + 5];
  const width = 1 << (flags & 3);
  let at = ohdr + 6 + (flags & 0x20 ? 16 : 0) + (flags & 0x10 ? 4 : 0);
  const end = at + width + readU(bytes, at, width);
  at += width;
  while (at < end) {
    const size = readU(bytes, at + 1, 2);
    const data = at + 4 + (flags & 0x04 ? 2 : 0);
    if (bytes[at] === type) return data;
    at = data + size;
  }
  throw new Error(`no message of type ${type} in the header at ${ohdr}`);
}

/** Recomputes the checksum of chunk 0 of the version-2 object header at `ohdr`. */
function resealHeader(bytes: Uint8Array, ohdr: number): void {
  const flags = bytes[ohdr + 5];
  const width = 1 << (flags & 3);
  const sizeAt = ohdr + 6 + (flags & 0x20 ? 16 : 0) + (flags & 0x10 ? 4 : 0);
  reseal(bytes, ohdr, sizeAt + width + readU(bytes, sizeAt, width));
}

async function headerOf(bytes: Uint8Array, path: string): Promise<number> {
  return (await (await openHdf5(source(bytes))).dataset(path)).address;
}

/** The chunk index records of latest_btree2_u16_32.h5: (address, 3-byte size, mask, 3 scaled offsets). */
function btree2Layout(bytes: Uint8Array) {
  const hdr = find(bytes, 'BTHD');
  const recordSize = readU(bytes, hdr + 10, 2);
  expect(recordSize).toBe(8 + 3 + 4 + 24);
  expect(readU(bytes, hdr + 12, 2)).toBe(1); // depth 1: a root BTIN over BTLF leaves
  const root = readU(bytes, hdr + 16, 8);
  const rootRecords = readU(bytes, hdr + 24, 2);
  /** Byte of the first scaled offset (the frame index) of record `i` of the node at `node`. */
  const frameAt = (node: number, i: number) => node + 6 + i * recordSize + 15;
  return { root, rootRecords, frameAt };
}

/** Where the checksum of the node at `node` lies: the first 4 bytes that hold lookup3 of all before them. */
function checksumEnd(bytes: Uint8Array, node: number): number {
  for (let end = node + 6; end + 4 <= bytes.length; end++) {
    if (readU(bytes, end, 4) === lookup3(bytes.subarray(node, end))) return end;
  }
  throw new Error(`no checksum after ${node}`);
}

describe('fuzz rulings: metadata that h5py and stemflow read differently (hdf5 seed 20261129)', () => {
  it('refuses a dataspace whose size exceeds its maximum (cases 263, 2781, 382, 3437)', async () => {
    const whole = fixture('latest_implicit_u16_32.h5');
    // /single: dims (4, 32, 32), max (4, 32, 32); /implicit: dims (10, 32, 32), max (10, 32, 32).
    for (const [path, field, value] of [
      ['/single', 2, 288], // current size of the last dimension above its maximum (case 263)
      ['/implicit', 5, 0], // maximum of the last dimension 0 (case 382)
      ['/implicit', 3, 0], // maximum of the first dimension 0 (case 3437)
    ] as const) {
      const bytes = whole.slice();
      const ohdr = await headerOf(bytes, path);
      const space = messageIn(bytes, ohdr, 1);
      expect(bytes[space]).toBe(2); // version 2: version, rank, flags, type, then 8-byte sizes
      expect(bytes[space + 2] & 1).toBe(1); // maxima present
      writeU(bytes, space + 4 + field * 8, 8, value);
      resealHeader(bytes, ohdr);
      const e = await attempt(bytes, path);
      expectKind(e, ['corrupt']);
      expect(e!.message).toMatch(/above its maximum/);
    }
    expect(await attempt(whole, '/single')).toBeNull();
  });

  it('refuses a version-2 B-tree chunk index whose keys are out of order (cases 2948, 3153, 3225, ...)', async () => {
    const whole = fixture('latest_btree2_u16_32.h5');
    const { root, rootRecords, frameAt } = btree2Layout(whole);
    const leaf = find(whole, 'BTLF', find(whole, 'BTLF') + 4); // the second leaf
    const cases: [string, number, number][] = [
      // A root record raised above the next one: the library's search then never enters the subtree after
      // it and reads those frames as fill values (case 2948: frames 52-104).
      ['root record 0', frameAt(root, 0), 2 ** 40],
      // The root's last record raised: the root stays in order, but its right subtree is now below it
      // (case 3225).
      ['last root record', frameAt(root, rootRecords - 1), 2 ** 30],
      // A leaf record raised above its neighbour (cases 3153, 8416, 9361, 10450).
      ['leaf record 20', frameAt(leaf, 20), 4 * 2 ** 16],
      // A leaf record lowered below the root key on its left (the leaf lies right of root record 0).
      ['leaf record 0', frameAt(leaf, 0), 0],
    ];
    for (const [what, at, value] of cases) {
      const bytes = whole.slice();
      const node = what.startsWith('leaf') ? leaf : root;
      const end = checksumEnd(whole, node);
      writeU(bytes, at, 8, what === 'leaf record 0' ? value : value + readU(bytes, at, 8));
      reseal(bytes, node, end);
      const e = await attempt(bytes, '/data');
      expectKind(e, ['corrupt']);
      expect(e!.message, what).toMatch(/out of order/);
    }
    const h5 = await openHdf5(source(whole));
    const table = await h5.chunkTable(await h5.dataset('/data'));
    expect(Array.from(table.address).every((a) => a > 0)).toBe(true); // the unmutated tree: all 300 chunks
  });

  it('refuses a number whose bit offset and precision do not fit it (cases 3310, 6141)', async () => {
    const whole = fixture('latest_ext_u16_96.h5');
    const ohdr = await headerOf(whole, '/data');
    const type = messageIn(whole, ohdr, 3);
    expect(readU(whole, type + 4, 4)).toBe(2); // a 2-byte unsigned integer
    for (const [offset, precision, kind] of [
      [128, 16, 'corrupt'], // bits past the element (case 3310: libhdf5 reads bits from outside it)
      [0, 0, 'corrupt'], // no bits (case 6141: libhdf5 reads zeros)
      [0, 17, 'corrupt'],
      [0, 12, 'unsupported'], // valid, but the padding bits would have to be masked
      [4, 12, 'unsupported'],
    ] as const) {
      const bytes = whole.slice();
      writeU(bytes, type + 8, 2, offset);
      writeU(bytes, type + 10, 2, precision);
      resealHeader(bytes, ohdr);
      expectKind(await attempt(bytes, '/data'), [kind]);
    }
  });
});

describe('fuzz rulings: damage the HDF5 library refuses (hdf5 seed 20261129, h5py-fails)', () => {
  it('refuses a superblock whose base address lies past its end-of-file address (case 6098)', async () => {
    const bytes = fixture('odd_u16_33x35.h5');
    expect(bytes[8]).toBe(0); // version 0: the base address is at byte 24
    bytes[28] ^= 0x80; // base address 2^39
    const e = await attempt(bytes, '/data');
    expectKind(e, ['corrupt']);
    expect(e!.message).toMatch(/base address 549755813888 lies past its end-of-file/);
  });

  it("refuses an unknown cache type in the root group's symbol table entry (case 11176)", async () => {
    const bytes = fixture('raw_u16_32.h5');
    expect(readU(bytes, 72, 4)).toBe(1); // v0 superblock: the root entry's cache type (B-tree and heap cached)
    bytes[72] = 129;
    expectKind(await attempt(bytes, '/raw'), ['corrupt']);
  });

  it('refuses header message flags that no writer sets (case 3450)', async () => {
    const whole = fixture('contiguous_u16.h5');
    const ohdr = await headerOf(whole, '/data');
    expect(whole[ohdr]).toBe(1); // a version-1 object header: messages from byte 16, 8-byte message headers
    let at = ohdr + 16;
    while (readU(whole, at, 2) !== 3) at += 8 + readU(whole, at + 2, 2);
    for (const flags of [0x21, 0x06, 0x31 | 0x08]) {
      const bytes = whole.slice();
      bytes[at + 4] = flags; // the datatype message's flags
      const e = await attempt(bytes, '/data');
      expectKind(e, ['corrupt']);
      expect(e!.message).toMatch(/impossible flags/);
    }
    const ok = whole.slice();
    ok[at + 4] = 0x31; // "was unknown" with "mark if unknown": a valid combination
    expect(await attempt(ok, '/data')).toBeNull();
  });
});
