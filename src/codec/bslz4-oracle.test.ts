import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bitshuffleFilterDecode, bslz4Decode, bslz4Encode } from './bslz4';
import { bslz4BlockTable } from './bslz4-table';
import { decodeChunk, type FilterSpec } from './filters';
import { expectSameBytes, expectStemflowError, expectStemflowErrorAsync } from './test-support';

/**
 * h5py with the bitshuffle HDF5 plugin (Debian's libh5bshuf, through hdf5plugin) is the independent oracle.
 * The python3 first on PATH may lack h5py, so /usr/bin/python3 is named.
 */
const PYTHON = '/usr/bin/python3';

const MAKE_VECTORS = `
import json, os, sys
import numpy as np
import h5py, hdf5plugin

out = sys.argv[1]
rng = np.random.default_rng(20240601)

def counts(shape, dtype, lam=0.05):
    info = np.iinfo(dtype)
    a = rng.poisson(lam, size=shape).astype(np.int64)
    flat = a.reshape(-1)
    hot = rng.integers(0, flat.size, 25)
    flat[hot] = rng.integers(50, 3000, 25)
    flat[flat.size // 3] = info.max
    return np.minimum(a, info.max).astype(dtype)

bslz4 = dict(hdf5plugin.Bitshuffle(nelems=0, cname='lz4'))
specs = [
    ('u8_96', counts((3, 96, 96), np.uint8), (1, 96, 96), bslz4),
    ('u16_96', counts((3, 96, 96), np.uint16), (1, 96, 96), bslz4),
    ('u16_192', counts((2, 192, 192), np.uint16), (1, 192, 192), bslz4),
    ('u16_192_dense', counts((1, 192, 192), np.uint16, 40.0), (1, 192, 192), bslz4),
    ('u16_random', rng.integers(0, 65536, (2, 64, 64)).astype(np.uint16), (1, 64, 64), bslz4),
    ('u32_96', counts((2, 96, 96), np.uint32), (1, 96, 96), bslz4),
    ('u16_33x35', counts((3, 33, 35), np.uint16), (1, 33, 35), bslz4),
    ('u8_33x35', counts((2, 33, 35), np.uint8), (1, 33, 35), bslz4),
    ('u32_33x35', counts((2, 33, 35), np.uint32), (1, 33, 35), bslz4),
    ('f64_33x35', rng.normal(size=(2, 33, 35)), (1, 33, 35), bslz4),
    ('s3_1155', np.array([bytes(rng.integers(65, 70, 3).astype(np.uint8)) for _ in range(2310)], dtype='S3'),
     (1155,), bslz4),
    ('u16_block256', counts((2, 96, 96), np.uint16), (1, 96, 96), dict(hdf5plugin.Bitshuffle(nelems=256, cname='lz4'))),
    ('u16_tiny', counts((4, 1, 5), np.uint16), (1, 1, 5), bslz4),
    ('u16_plain', counts((2, 33, 35), np.uint16), (1, 33, 35), dict(hdf5plugin.Bitshuffle(nelems=0, cname='none'))),
    ('u16_zstd', counts((1, 96, 96), np.uint16), (1, 96, 96), dict(hdf5plugin.Bitshuffle(nelems=0, cname='zstd'))),
    ('u16_gzip', counts((2, 96, 96), np.uint16), (1, 96, 96), dict(compression='gzip', compression_opts=4)),
    ('u16_gzip_shuffle_fletcher', counts((2, 33, 35), np.uint16), (1, 33, 35),
     dict(compression='gzip', shuffle=True, fletcher32=True)),
    ('u32_shuffle_bslz4', counts((2, 96, 96), np.uint32), (1, 96, 96), dict(shuffle=True, **bslz4)),
]

manifest = []
with h5py.File(os.path.join(out, 'vectors.h5'), 'w') as f:
    for name, data, chunks, kw in specs:
        ds = f.create_dataset(name, data=data, chunks=chunks, **kw)
    f.flush()
    for name, data, chunks, kw in specs:
        ds = f[name]
        plist = ds.id.get_create_plist()
        filters = []
        for i in range(plist.get_nfilters()):
            code, flags, cd, fname = plist.get_filter(i)
            filters.append({'id': int(code), 'cdValues': [int(v) for v in cd]})
        entry = {'name': name, 'dtype': ds.dtype.str, 'itemsize': ds.dtype.itemsize, 'shape': list(ds.shape),
                 'chunks': list(chunks), 'filters': filters, 'chunkList': []}
        for i in range(ds.id.get_num_chunks()):
            info = ds.id.get_chunk_info(i)
            mask, raw = ds.id.read_direct_chunk(info.chunk_offset)
            sel = tuple(slice(o, o + c) for o, c in zip(info.chunk_offset, chunks))
            base = '%s.c%d' % (name, i)
            with open(os.path.join(out, base + '.chunk'), 'wb') as g:
                g.write(raw)
            if name != 'u16_zstd':
                with open(os.path.join(out, base + '.raw'), 'wb') as g:
                    g.write(np.ascontiguousarray(ds[sel]).tobytes())
            entry['chunkList'].append({'offset': [int(o) for o in info.chunk_offset], 'filterMask': int(mask),
                                       'base': base})
        manifest.append(entry)
with open(os.path.join(out, 'manifest.json'), 'w') as g:
    json.dump(manifest, g)
`;

const WRITE_BACK = String.raw`
import json, os, sys
import numpy as np
import h5py, hdf5plugin

src_dir, rt_dir = sys.argv[1], sys.argv[2]
jobs = json.load(open(os.path.join(rt_dir, 'jobs.json')))
with h5py.File(os.path.join(src_dir, 'vectors.h5'), 'r') as src, \
        h5py.File(os.path.join(rt_dir, 'ours.h5'), 'w') as dst:
    for job in jobs:
        ref = src[job['name']]
        ds = dst.create_dataset(job['name'], shape=ref.shape, dtype=ref.dtype, chunks=ref.chunks,
                                **hdf5plugin.Bitshuffle(nelems=0, cname='lz4'))
        for c in job['chunks']:
            with open(os.path.join(rt_dir, c['base'] + '.ours'), 'rb') as g:
                ds.id.write_direct_chunk(tuple(c['offset']), g.read(), 0)
    dst.flush()
    for job in jobs:
        ds = dst[job['name']]
        for c in job['chunks']:
            sel = tuple(slice(o, o + n) for o, n in zip(c['offset'], ds.chunks))
            with open(os.path.join(rt_dir, c['base'] + '.back'), 'wb') as g:
                g.write(np.ascontiguousarray(ds[sel]).tobytes())
`;

interface ChunkEntry {
  offset: number[];
  filterMask: number;
  base: string;
}

interface DatasetEntry {
  name: string;
  dtype: string;
  itemsize: number;
  shape: number[];
  chunks: number[];
  filters: FilterSpec[];
  chunkList: ChunkEntry[];
}

let dir = '';
let manifest: DatasetEntry[] = [];

function dataset(name: string): DatasetEntry {
  const d = manifest.find((m) => m.name === name);
  if (!d) throw new Error(`no dataset ${name} in the oracle manifest`);
  return d;
}

function read(base: string, ext: string): Uint8Array {
  return new Uint8Array(readFileSync(join(dir, `${base}.${ext}`)));
}

function chunkBytes(d: DatasetEntry): number {
  return d.chunks.reduce((a, b) => a * b, 1) * d.itemsize;
}

beforeAll(() => {
  if (!existsSync(PYTHON))
    throw new Error(`${PYTHON} (with h5py and hdf5plugin) is needed for the oracle tests`);
  dir = mkdtempSync(join(tmpdir(), 'stemflow-bslz4-'));
  execFileSync(PYTHON, ['-c', MAKE_VECTORS, dir], { stdio: ['ignore', 'ignore', 'pipe'] });
  manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as DatasetEntry[];
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const BSLZ4_SETS = [
  'u8_96',
  'u16_96',
  'u16_192',
  'u16_192_dense',
  'u16_random',
  'u32_96',
  'u16_33x35',
  'u8_33x35',
  'u32_33x35',
  'f64_33x35',
  's3_1155',
  'u16_block256',
  'u16_tiny',
];

describe('bitshuffle/LZ4 against h5py', () => {
  it('the oracle wrote the expected datasets', () => {
    expect(manifest.map((m) => m.name)).toEqual(
      expect.arrayContaining([...BSLZ4_SETS, 'u16_plain', 'u16_zstd']),
    );
    const d = dataset('u16_192');
    expect(d.filters).toEqual([{ id: 32008, cdValues: [0, expect.any(Number), 2, 0, 2] }]);
    expect(d.chunkList.length).toBe(2);
  });

  for (const name of BSLZ4_SETS) {
    it(`decodes every chunk of ${name} byte-identically to h5py`, () => {
      const d = dataset(name);
      const expectedBytes = chunkBytes(d);
      const filter = d.filters.find((f) => f.id === 32008);
      expect(filter).toBeDefined();
      for (const c of d.chunkList) {
        const chunk = read(c.base, 'chunk');
        const raw = read(c.base, 'raw');
        expect(raw.length).toBe(expectedBytes);
        expectSameBytes(bslz4Decode(chunk, d.itemsize, expectedBytes), raw, c.base);
        expectSameBytes(
          bitshuffleFilterDecode(chunk, filter!.cdValues, expectedBytes),
          raw,
          `${c.base} (cd_values)`,
        );
      }
    });
  }

  it('reads the block table of a 192x192 uint16 chunk as 9 blocks, no tail, and 96x96 as 2 + 1', () => {
    const t192 = bslz4BlockTable(read(dataset('u16_192').chunkList[0].base, 'chunk'), 2);
    expect([t192.uncompressedBytes, t192.blockBytes, t192.blocks.count, t192.tail.length]).toEqual([
      73728, 8192, 9, 0,
    ]);
    expect(Array.from(t192.blocks.dstOffset)).toEqual(Array.from({ length: 9 }, (_, i) => i * 8192));
    const t96 = bslz4BlockTable(read(dataset('u16_96').chunkList[0].base, 'chunk'), 2);
    expect([t96.blocks.count, ...t96.blocks.dstLength]).toEqual([3, 8192, 8192, 2048]);
    const odd = bslz4BlockTable(read(dataset('u16_33x35').chunkList[0].base, 'chunk'), 2);
    expect([odd.blocks.count, odd.blocks.dstLength[0], odd.tail.dstOffset, odd.tail.length]).toEqual([
      1, 2304, 2304, 6,
    ]);
    const b256 = bslz4BlockTable(read(dataset('u16_block256').chunkList[0].base, 'chunk'), 2);
    expect([b256.blockBytes, b256.blocks.count]).toEqual([512, 36]);
  });

  it('decodes plain bitshuffle (compression 0) through cd_values', () => {
    const d = dataset('u16_plain');
    expect(d.filters[0].cdValues[4]).toBe(0);
    for (const c of d.chunkList) {
      expectSameBytes(
        bitshuffleFilterDecode(read(c.base, 'chunk'), d.filters[0].cdValues, chunkBytes(d)),
        read(c.base, 'raw'),
      );
    }
  });

  it('reports bitshuffle/zstd as unsupported', () => {
    const d = dataset('u16_zstd');
    expect(d.filters[0].cdValues[4]).toBe(3);
    const e = expectStemflowError(
      () => bitshuffleFilterDecode(read(d.chunkList[0].base, 'chunk'), d.filters[0].cdValues, chunkBytes(d)),
      'unsupported',
    );
    expect(e.message).toMatch(/zstd/);
  });

  it('decodes every chunk of every dataset through the HDF5 filter pipeline (decodeChunk)', async () => {
    let checked = 0;
    for (const d of manifest) {
      if (d.name === 'u16_zstd') continue;
      for (const c of d.chunkList) {
        const out = await decodeChunk(
          read(c.base, 'chunk'),
          d.filters,
          d.itemsize,
          chunkBytes(d),
          c.filterMask,
        );
        expectSameBytes(out, read(c.base, 'raw'), c.base);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(30);
    expect(dataset('u16_gzip_shuffle_fletcher').filters.map((f) => f.id)).toEqual([2, 1, 3]);
    expect(dataset('u32_shuffle_bslz4').filters.map((f) => f.id)).toEqual([2, 32008]);
  });

  it('detects a flipped byte through the Fletcher-32 checksum', async () => {
    const d = dataset('u16_gzip_shuffle_fletcher');
    const chunk = read(d.chunkList[0].base, 'chunk');
    const inflated = await decodeChunk(chunk, d.filters.slice(2), d.itemsize, chunk.length - 4);
    expect(inflated.length).toBe(chunk.length - 4);
    const bad = chunk.slice();
    bad[bad.length - 1] ^= 0x01;
    await expectStemflowErrorAsync(() => decodeChunk(bad, d.filters, d.itemsize, chunkBytes(d)), 'corrupt');
  });

  it('our encoder writes chunks that h5py reads back identically', () => {
    const rt = join(dir, 'rt');
    mkdirSync(rt);
    const jobs = BSLZ4_SETS.filter((n) => n !== 'u16_block256').map((name) => {
      const d = dataset(name);
      for (const c of d.chunkList) {
        const encoded = bslz4Encode(read(c.base, 'raw'), d.itemsize);
        expectSameBytes(
          bslz4Decode(encoded, d.itemsize, chunkBytes(d)),
          read(c.base, 'raw'),
          `${c.base} (ours)`,
        );
        writeFileSync(join(rt, `${c.base}.ours`), encoded);
      }
      return { name, chunks: d.chunkList };
    });
    writeFileSync(join(rt, 'jobs.json'), JSON.stringify(jobs));
    execFileSync(PYTHON, ['-c', WRITE_BACK, dir, rt], { stdio: ['ignore', 'ignore', 'pipe'] });
    let checked = 0;
    for (const job of jobs) {
      for (const c of job.chunks) {
        const back = new Uint8Array(readFileSync(join(rt, `${c.base}.back`)));
        expectSameBytes(back, read(c.base, 'raw'), `${c.base} (h5py read of ours)`);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(20);
  });
});
