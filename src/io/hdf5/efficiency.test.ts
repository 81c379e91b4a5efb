import { describe, expect, it } from 'vitest';
import type { ByteSource } from '../byte-source';
import { openHdf5 } from './index';
import { fixture, source } from './test-support/mutate';

/** A source that counts reads and bytes. */
function counting(bytes: Uint8Array) {
  const inner = source(bytes);
  const stats = { reads: 0, bytes: 0 };
  const src: ByteSource = {
    name: inner.name,
    size: inner.size,
    read(offset, length, signal) {
      stats.reads++;
      stats.bytes += length;
      return inner.read(offset, length, signal);
    },
  };
  return { src, stats };
}

async function indexCost(name: string, path = '/data') {
  const bytes = fixture(name);
  const { src, stats } = counting(bytes);
  const h5 = await openHdf5(src);
  const ds = await h5.dataset(path);
  const before = { ...stats };
  const t0 = performance.now();
  const table = await h5.chunkTable(ds);
  return {
    ms: performance.now() - t0,
    reads: stats.reads - before.reads,
    bytes: stats.bytes - before.bytes,
    total: stats.bytes,
    size: bytes.length,
    chunks: table.address.length,
  };
}

describe('reads only what it needs', () => {
  it('reads a paged fixed array in one read of its data block', async () => {
    const c = await indexCost('many_fixed_u32_32.h5');
    expect(c.chunks).toBe(1100);
    expect(c.reads).toBeLessThanOrEqual(2); // header (often cached) + data block with all its pages
    expect(c.total).toBeLessThan(c.size / 10);
  });

  it('reads each version-1 B-tree node once', async () => {
    const c = await indexCost('many_v1_u8_32.h5');
    expect(c.chunks).toBe(320);
    expect(c.reads).toBeLessThanOrEqual(1 + Math.ceil(320 / 32)); // root + half-full leaves at worst
    expect(c.total).toBeLessThan(c.size / 5);
  });

  it('reads the extensible array and the version-2 B-tree in a few reads', async () => {
    const ea = await indexCost('many_ext_u16_32.h5');
    expect(ea.reads).toBeLessThanOrEqual(30);
    const bt = await indexCost('latest_btree2_u16_32.h5');
    expect(bt.reads).toBeLessThanOrEqual(1 + Math.ceil(300 / 20));
    expect(bt.total).toBeLessThan(bt.size / 4);
  });

  it('opens a shard and indexes it quickly', async () => {
    const c = await indexCost('arina_data_000001.h5', '/entry/data/data');
    expect(c.chunks).toBe(24);
    expect(c.ms).toBeLessThan(250);
  });
});
