import { describe, expect, it } from 'vitest';
import { isStemflowError, type StemflowError } from '../../errors';
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
