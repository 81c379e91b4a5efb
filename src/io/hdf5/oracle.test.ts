import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isStemflowError } from '../../errors';
import { nodeFileSource } from '../node-file-source';
import { openHdf5 } from './index';
import { loadOracles, numpyName, zlibDecoder } from './test-support/oracle';

const oracles = loadOracles();

describe('HDF5 reader against the h5py oracle', () => {
  it('has fixtures to check', () => {
    expect(oracles.length).toBeGreaterThan(0);
  });

  for (const oracle of oracles) {
    for (const [file, expected] of Object.entries(oracle.files)) {
      describe(file, () => {
        for (const [path, want] of Object.entries(expected.datasets)) {
          it(`${path}: metadata and every chunk's offset, size and filter mask`, async () => {
            const source = await nodeFileSource(join(oracle.dir, file));
            try {
              const h5 = await openHdf5(source);
              if (!/^(u?int|float)\d+$/.test(want.dtype)) {
                await expect(h5.dataset(path)).rejects.toSatisfy((e) => isStemflowError(e, 'unsupported'));
                return;
              }
              const ds = await h5.dataset(path);
              expect(ds.shape).toEqual(want.shape);
              expect(ds.maxShape).toEqual(want.maxshape);
              expect(numpyName(ds.dtype)).toBe(want.dtype);
              expect(ds.dtype.littleEndian).toBe(want.little_endian ?? true);
              expect(ds.layout).toBe(want.layout);
              expect(ds.chunkShape).toEqual(want.chunks);
              expect(ds.chunkIndex).toBe(want.index);
              expect(ds.filters.map((f) => ({ id: f.id, cd_values: f.cdValues }))).toEqual(want.filters);
              if (want.layout === 'chunked') {
                const table = await h5.chunkTable(ds);
                expect(table.grid).toEqual(want.shape.map((n, d) => Math.ceil(n / want.chunks![d])));
                const got = Array.from(table.address).filter((a) => a >= 0).length;
                expect(got).toBe(want.num_chunks);
                const down = table.grid.map((_, d) => table.grid.slice(d + 1).reduce((a, b) => a * b, 1));
                for (const [offset, byteOffset, size, mask] of want.chunk_info!) {
                  const i = offset.reduce((s, o, d) => s + (o / want.chunks![d]) * down[d], 0);
                  expect([table.address[i], table.size[i], table.filterMask[i]]).toEqual([
                    byteOffset,
                    size,
                    mask,
                  ]);
                }
              }
              const decodable = ds.filters.every((f) => f.id === 1 || f.id === 2);
              if (want.sha256 && decodable && want.readable) {
                const bytes = await h5.readDataset(ds, zlibDecoder);
                expect(createHash('sha256').update(bytes).digest('hex')).toBe(want.sha256);
              }
            } finally {
              await source.close();
            }
          });
        }
      });
    }
  }
});
