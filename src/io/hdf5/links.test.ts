import { describe, expect, it } from 'vitest';
import { isStemflowError } from '../../errors';
import { openHdf5 } from './index';
import { fixture, source, testdata } from './test-support/mutate';
import { loadOracles } from './test-support/oracle';

const shared = loadOracles().find((o) => o.dir.endsWith('test/fixtures'))!;

describe('links and groups', () => {
  it('reports the external links of the ARINA master file', async () => {
    const h5 = await openHdf5(source(fixture('arina_master.h5'), 'arina_master.h5'));
    const want = shared.files['arina_master.h5'].external_links;
    expect(Object.keys(want).length).toBe(3);
    for (const [path, [file, target]] of Object.entries(want)) {
      expect(await h5.getLink(path)).toEqual({ kind: 'external', file, path: target });
    }
    const listed = (await h5.listLinks('/entry/data')).filter((l) => l.kind === 'external');
    expect(Object.fromEntries(listed.map((l) => [`/entry/data/${l.name}`, l]))).toEqual(
      Object.fromEntries(
        Object.entries(want).map(([p, [file, path]]) => [
          p,
          { name: p.split('/').pop(), kind: 'external', file, path },
        ]),
      ),
    );
    const err = await h5.dataset('/entry/data/data_000002').catch((e) => e);
    expect(isStemflowError(err, 'not-found')).toBe(true);
    expect(err.message).toContain('arina_data_000002.h5');
  });

  it('reads superblocks v0 (with a user block), v2 and v3 and 4-byte addresses', async () => {
    const ub = await openHdf5(source(testdata('userblock.h5')));
    expect(ub.superblock).toMatchObject({ version: 0, baseAddress: 512, offsetSize: 8, lengthSize: 8 });
    expect((await openHdf5(source(testdata('superblock_v2.h5')))).superblock.version).toBe(2);
    expect((await openHdf5(source(testdata('dense_groups.h5')))).superblock.version).toBe(3);
    const small = await openHdf5(source(testdata('small_offsets.h5')));
    expect(small.superblock).toMatchObject({ version: 0, offsetSize: 4, lengthSize: 4 });
  });

  it('lists dense groups (fractal heap + v2 B-tree name index) and follows soft links', async () => {
    const h5 = await openHdf5(source(testdata('dense_groups.h5')));
    const links = await h5.listLinks('/links');
    expect(links.length).toBe(2000);
    expect(new Set(links.map((l) => l.name)).size).toBe(2000);
    expect(await h5.getLink('/links/link_01234_with_a_longer_name')).toEqual({
      kind: 'soft',
      target: '/many/d04',
    });
    const many = await h5.listLinks('/many');
    expect(many.length).toBe(34);
    expect(many.find((l) => l.name === 'ext')).toEqual({
      name: 'ext',
      kind: 'external',
      file: 'other_file.h5',
      path: '/entry/data/data',
    });
    expect((await h5.dataset('/many/soft_to_frames')).shape).toEqual([4, 8, 8]);
    const viaRelative = await h5.dataset('/many/relative_soft');
    expect(viaRelative.address).toBe((await h5.dataset('/many/d03')).address);
    const viaLinks = await h5.dataset('/links/link_00007_with_a_longer_name');
    expect(viaLinks.address).toBe((await h5.dataset('/many/d07')).address);
  });

  it('lists old-style groups of several symbol table nodes, with soft links', async () => {
    const h5 = await openHdf5(source(testdata('small_offsets.h5')));
    const links = await h5.listLinks('/old_style');
    expect(links.length).toBe(25);
    expect(links.find((l) => l.name === 'soft')).toEqual({
      name: 'soft',
      kind: 'soft',
      target: '/old_style/s05',
    });
    expect((await h5.dataset('/old_style/soft')).shape).toEqual([6]);
  });

  it('says what is missing', async () => {
    const h5 = await openHdf5(source(fixture('raw_u16_32.h5'), 'raw_u16_32.h5'));
    expect(await h5.getLink('/')).toMatchObject({ kind: 'hard' });
    const err = await h5.dataset('/nope').catch((e) => e);
    expect(isStemflowError(err, 'not-found')).toBe(true);
    expect(err.message).toContain('raw_u16_32.h5');
    await expect(h5.listLinks('/raw')).rejects.toSatisfy((e) => isStemflowError(e, 'not-found'));
    await expect(h5.dataset('/')).rejects.toSatisfy((e) => isStemflowError(e, 'not-found'));
  });
});
