import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isStemflowError, type StemflowError } from '../errors';
import { DEMO, fixture, loadOracle } from '../testing/fixtures';
import type { AcquisitionSource } from './acquisition-source';
import { openAcquisition } from './hdf5-acquisition';
import type { InputFile } from './input-file';
import { nodeInput } from './node-input';

const oracle = loadOracle();
const arina = oracle.acquisitions.arina;
const arinaFiles = [arina.master, ...arina.shards];
let opened: InputFile[] = [];

async function inputs(paths: string[]): Promise<InputFile[]> {
  const list = await Promise.all(paths.map(nodeInput));
  opened.push(...list);
  return list;
}

afterEach(async () => {
  await Promise.all(opened.map((i) => i.close?.()));
  opened = [];
});

async function hashAll(source: AcquisitionSource, batch = 7): Promise<string> {
  const hash = createHash('sha256');
  for (let first = 0; first < source.frameCount; first += batch) {
    hash.update(await source.readFrames(first, Math.min(batch, source.frameCount - first)));
  }
  return hash.digest('hex');
}

function frameSums(bytes: Uint8Array, frameBytes: number): number[] {
  const values = new Uint16Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 2);
  const per = frameBytes / 2;
  return Array.from({ length: values.length / per }, (_, f) =>
    values.subarray(f * per, (f + 1) * per).reduce((a, b) => a + b, 0),
  );
}

async function rejection(p: Promise<unknown>): Promise<StemflowError> {
  try {
    await p;
  } catch (e) {
    if (isStemflowError(e)) return e;
    throw e;
  }
  throw new Error('expected a StemflowError');
}

describe('ARINA master + shards', () => {
  it('closes every file it was opened with, the master (metadata only) included', async () => {
    const closed: string[] = [];
    const list = (await inputs(arinaFiles.map(fixture))).map((i) => ({
      ...i,
      close: async () => {
        closed.push(i.name);
        await i.close?.();
      },
    }));
    const source = await openAcquisition(list);
    await source.close();
    expect(closed.sort()).toEqual(list.map((i) => i.name).sort());
  });

  it('follows the external links in order and decodes every frame exactly (h5py oracle)', async () => {
    const source = await openAcquisition(await inputs(arinaFiles.map(fixture)));
    const s = source.summary;
    expect(s.kind).toBe('arina-master');
    expect(s.name).toBe('arina');
    expect(s.files.map((f) => [f.name, f.frames])).toEqual([
      ['arina_data_000001.h5', 24],
      ['arina_data_000002.h5', 24],
      ['arina_data_000003.h5', 12],
    ]);
    expect(s.frameCount).toBe(arina.frames);
    expect(s.scan).toEqual(arina.scan);
    expect(s.scanFromMetadata).toBe(false);
    expect(s.detector).toEqual(arina.detector);
    expect(s.dtype).toBe('uint16');
    expect(s.compression).toBe('bitshuffle/LZ4');
    expect(s.chunkIndex).toBe('btree-v1');
    expect(s.flaggedPixels).toBe(arina.pixel_mask.flagged);
    const mask = source.pixelMask!;
    expect(createHash('sha256').update(new Uint8Array(mask.buffer)).digest('hex')).toBe(
      arina.pixel_mask.sha256,
    );
    expect(Array.from(mask.keys()).filter((i) => mask[i] !== 0)).toEqual(arina.pixel_mask.flagged_indices);
    expect(s.calibration.detectorPixelSize![0]).toBeCloseTo(arina.calibration.x_pixel_size, 9);
    expect(s.calibration.detectorDistance).toBeCloseTo(arina.calibration.detector_distance, 6);
    expect(s.calibration.beamCenter![0]).toBeCloseTo(arina.calibration.beam_center_x, 4);
    expect(s.calibration.wavelength! / arina.calibration.incident_wavelength).toBeCloseTo(1, 6);
    expect(Math.abs(s.calibration.voltage! - 200e3)).toBeLessThan(50);
    expect(await hashAll(source)).toBe(arina.sha256);
    expect(frameSums(await source.readFrames(0, 60), source.frameBytes)).toEqual(arina.frame_sums);
  });

  it('reads frames at shard boundaries exactly, including the planted 65535', async () => {
    const source = await openAcquisition(await inputs(arinaFiles.map(fixture)));
    const all = await source.readFrames(0, 60);
    for (const first of [23, 24, 47, 48, 59]) {
      const one = await source.readFrames(first, 1);
      expect(one).toEqual(all.subarray(first * source.frameBytes, (first + 1) * source.frameBytes));
    }
    const f24 = new Uint16Array((await source.readFrames(24, 1)).buffer);
    expect(f24[47 * 96 + 47]).toBe(65535);
  });

  it('takes the shards alone, in any order, in shard-number order', async () => {
    const source = await openAcquisition(
      await inputs([arina.shards[2], arina.shards[0], arina.shards[1]].map(fixture)),
    );
    expect(source.summary.kind).toBe('arina-shards');
    expect(source.summary.flaggedPixels).toBe(0);
    expect(await hashAll(source, 13)).toBe(arina.sha256);
  });

  it('uses a scan shape the user gives, and refuses one that does not fit', async () => {
    const list = await inputs(arinaFiles.map(fixture));
    const source = await openAcquisition(list, { scan: [10, 6] });
    expect(source.summary.scan).toEqual([10, 6]);
    expect(source.summary.scanFromMetadata).toBe(true);
    const e = await rejection(openAcquisition(list, { scan: [7, 9] }));
    expect(e.kind).toBe('mismatch');
    expect(e.message).toMatch(/7 x 9 .* 63 frames, but the files hold 60/);
  });

  it('names the missing shard when the master links to a file that was not dropped', async () => {
    const e = await rejection(
      openAcquisition(await inputs([arina.master, arina.shards[0], arina.shards[2]].map(fixture))),
    );
    expect(e.kind).toBe('not-found');
    expect(e.message).toContain('arina_data_000002.h5');
    expect(e.file).toBe('arina_master.h5');
  });

  it('names the gap when shards alone skip a number', async () => {
    const e = await rejection(openAcquisition(await inputs([arina.shards[0], arina.shards[2]].map(fixture))));
    expect(e.kind).toBe('not-found');
    expect(e.message).toMatch(/number 2 is missing/);
  });

  it('refuses the same file twice and a shard whose frames have another shape', async () => {
    const dup = await rejection(
      openAcquisition(await inputs([fixture(arina.shards[0]), fixture(arina.shards[0])])),
    );
    expect(dup.kind).toBe('mismatch');
    const dir = mkdtempSync(join(tmpdir(), 'arina-'));
    copyFileSync(fixture(arina.shards[0]), join(dir, 'x_data_000001.h5'));
    copyFileSync(fixture(arina.shards[1]), join(dir, 'x_data_000002.h5'));
    const script = `import h5py, hdf5plugin, numpy as np, sys
with h5py.File(sys.argv[1], 'w') as f:
    f.create_dataset('/entry/data/data', data=np.ones((3, 33, 35), 'u2'), chunks=(1, 33, 35), **hdf5plugin.Bitshuffle(cname='lz4'))`;
    execFileSync('/usr/bin/python3', ['-c', script, join(dir, 'x_data_000003.h5')]);
    const names = ['x_data_000001.h5', 'x_data_000003.h5', 'x_data_000002.h5'];
    const e = await rejection(openAcquisition(await inputs(names.map((n) => join(dir, n)))));
    expect(e.kind).toBe('mismatch');
    expect(e.file).toBe('x_data_000003.h5');
    expect(e.message).toMatch(/33 x 35/);
  });
});

describe('stored chunks for the GPU decoder', () => {
  it("returns each frame's stored bytes exactly where h5py says they are, across shards", async () => {
    const source = await openAcquisition(await inputs(arinaFiles.map(fixture)));
    expect(source.storedCodec).toEqual({ gpu: true });
    const sizes = source.storedSizes();
    const stored = await source.readStored(20, 10, undefined, new Uint8Array(1 << 20));
    for (let k = 0; k < 10; k++) {
      const frame = 20 + k;
      const shard = arina.shards[Math.floor(frame / 24)];
      const [, offset, size] = oracle.files[shard].datasets['/entry/data/data'].chunk_info![frame % 24];
      expect(stored.sizes[k]).toBe(size);
      expect(sizes[frame]).toBe(size);
      const expected = readFileSync(fixture(shard)).subarray(offset, offset + size);
      expect(
        Buffer.from(stored.bytes.subarray(stored.offsets[k], stored.offsets[k] + size)).equals(expected),
      ).toBe(true);
    }
  });

  it('says why chunks that are not bitshuffle/LZ4 frames go to the CPU path', async () => {
    const gzip = await openAcquisition(await inputs([fixture('gzip_u16_32.h5')]), { dataset: '/gzip' });
    expect(gzip.storedCodec).toEqual({
      gpu: false,
      reason: expect.stringMatching(/bitshuffle\/LZ4 chunks only \(this is gzip\)/),
    });
    await expect(gzip.readStored(0, 1)).rejects.toThrow(/bitshuffle\/LZ4 chunks only/);
    const single = await openAcquisition(await inputs([fixture('latest_implicit_u16_32.h5')]), {
      dataset: '/single',
    });
    expect(single.storedCodec).toEqual({ gpu: false, reason: expect.stringMatching(/one chunk per frame/) });
  });
});

describe('single files, every chunk index and filter (h5py oracle)', () => {
  const cases = Object.entries(oracle.files).flatMap(([file, f]) =>
    Object.entries(f.datasets)
      .filter(([, d]) => d.shape.length === 3 && !file.startsWith('arina'))
      .map(([path, d]) => ({ file, path, d })),
  );
  it.each(cases)('$file $path', async ({ file, path, d }) => {
    const source = await openAcquisition(await inputs([fixture(file)]), { dataset: path });
    expect(source.summary.kind).toBe('single');
    expect(source.summary.frameCount).toBe(d.shape[0]);
    expect(source.summary.detector).toEqual(d.shape.slice(1));
    if (d.readable === false) {
      const e = await rejection(source.readFrames(0, 1));
      expect(e.kind).toBe(d.expected_error);
      expect(e.file).toBe(file);
      expect(e.frame).toBe(0);
      return;
    }
    expect(source.summary.chunkIndex).toBe(d.index ?? d.layout);
    expect(await hashAll(source, 5)).toBe(d.sha256);
  });
});

describe('bad input', () => {
  const shard = arina.shards[0];
  const bytes = readFileSync(fixture(shard));
  const firstChunk = oracle.files[shard].datasets['/entry/data/data'].chunk_info![0];
  const [, offset, size] = firstChunk;

  async function planted(mutate: (b: Buffer) => Buffer, name = 'planted_data_000001.h5') {
    const dir = mkdtempSync(join(tmpdir(), 'fault-'));
    writeFileSync(join(dir, name), mutate(Buffer.from(bytes)));
    return openAcquisition(await inputs([join(dir, name)]));
  }

  it('a file that is not HDF5 is refused with a sentence, not garbage', async () => {
    const e = await rejection(
      planted(() => Buffer.from('this is a text file, not HDF5\n'.repeat(40)), 'notes_data_000001.h5'),
    );
    expect(['corrupt', 'not-found']).toContain(e.kind);
    expect(e.file).toBe('notes_data_000001.h5');
  });

  it('a truncated shard names the file and the frame', async () => {
    const cut = offset + size + 10;
    const source = await planted((b) => b.subarray(0, cut)).catch((e) => e);
    const e = isStemflowError(source)
      ? source
      : await rejection((source as AcquisitionSource).readFrames(0, 24));
    expect(['truncated', 'corrupt']).toContain(e.kind);
    expect(e.file).toBe('planted_data_000001.h5');
  });

  it('a chunk whose header lies about its uncompressed size is a typed error for that frame', async () => {
    const source = await planted((b) => {
      b.writeUInt32BE(0xffff, offset + 4); // low word of the big-endian uint64 size: not 96*96*2
      return b;
    });
    const e = await rejection(source.readFrames(0, 2));
    expect(e.kind).toBe('corrupt');
    expect(e.frame).toBe(0);
    expect(await source.readFrames(1, 1)).toHaveLength(96 * 96 * 2);
  });

  it('a block length pointing past the chunk is a typed error, never an out-of-range read', async () => {
    const source = await planted((b) => {
      b.writeUInt32BE(0x7fffffff, offset + 12); // first block's compressed length
      return b;
    });
    const e = await rejection(source.readFrames(0, 1));
    expect(e.kind).toBe('truncated');
    expect(e.message).toMatch(/block/);
    expect(e.frame).toBe(0);
  });
});

describe('fuzz findings, kept as regressions (docs/robustness.md)', () => {
  async function mutated(name: string, edit: (b: Buffer) => void) {
    const dir = mkdtempSync(join(tmpdir(), 'finding-'));
    const bytes = Buffer.from(readFileSync(fixture(name)));
    edit(bytes);
    writeFileSync(join(dir, name), bytes);
    return inputs([join(dir, name)]);
  }

  it('a B-tree key flipped outside a fixed extent is corrupt, never a frame of zeros (seed 20251129 case 222)', async () => {
    const files = await mutated('many_v1_u8_32.h5', (b) => {
      for (const [at, bit] of [
        [3428, 7],
        [32040, 1],
        [29317, 5],
      ])
        b[at] ^= 1 << bit;
    });
    const e = await rejection(
      openAcquisition(files, { dataset: '/data' }).then((src) => src.readFrames(0, src.frameCount)),
    );
    expect(e.kind).toBe('corrupt');
  });

  it('a group that links to itself is searched within a bound (seed 20251129 case 569)', async () => {
    const files = await mutated('latest_implicit_u16_32.h5', (b) => {
      // The root group's address pointed at the superblock, checksum resealed, as the fuzzer wrote it.
      for (const [at, v] of [
        [98, 0o60],
        [175, 0o124],
        [176, 0o100],
        [177, 0o104],
        [178, 0o246],
      ])
        b[at] = v;
    });
    const t = performance.now();
    const outcome = await openAcquisition(files).then(
      (source) => source,
      (e) => e,
    );
    expect(performance.now() - t).toBeLessThan(20_000);
    // Either a typed error, or the walk found a dataset through the loop (the same object, so the same data).
    if (outcome instanceof Error) expect(isStemflowError(outcome)).toBe(true);
    else expect([10, 4]).toContain((outcome as AcquisitionSource).frameCount);
  });
});

describe('demo acquisition', () => {
  it('decodes exactly as h5py does', async () => {
    const demo = loadOracle(DEMO).acquisitions.demo;
    const source = await openAcquisition(
      await inputs([demo.master, ...demo.shards].map((n) => join(DEMO, n))),
    );
    expect(source.summary.scan).toEqual(demo.scan);
    expect(await hashAll(source, 512)).toBe(demo.sha256);
  });
});
