import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bslz4Decode } from '../codec/bslz4';
import { generateSynthetic } from './synthetic';
import { SHARD_FRAMES, shardPaths, syntheticSource, writeChunkFile } from './synthetic-source';

describe('synthetic ARINA-like acquisition', () => {
  it('is deterministic, decodes exactly, and looks like 4D-STEM (sparse, bright centre, rare > 255)', () => {
    const a = generateSynthetic({ scan: [8, 8], detector: 96, distinct: 40, seed: 7 });
    const b = generateSynthetic({ scan: [8, 8], detector: 96, distinct: 40, seed: 7 });
    expect(a.chunks.map((c) => c.length)).toEqual(b.chunks.map((c) => c.length));
    let zeros = 0;
    let centre = 0;
    let corner = 0;
    let total = 0;
    for (let k = 0; k < a.chunks.length; k++) {
      const decoded = new Uint16Array(bslz4Decode(a.chunks[k], 2, 96 * 96 * 2).buffer);
      expect(decoded).toEqual(a.values[k]);
      for (let p = 0; p < decoded.length; p++) {
        total++;
        if (decoded[p] === 0) zeros++;
      }
      centre += decoded[48 * 96 + 48];
      corner += decoded[2 * 96 + 2];
    }
    expect(zeros / total).toBeGreaterThan(0.5);
    expect(centre).toBeGreaterThan(10 * (corner + 1));
    expect(a.chunkOf(63)).toBe(63 % 40);
    const ratio = a.chunks.reduce((s, c) => s + c.length, 0) / (40 * 96 * 96 * 2);
    expect(ratio).toBeLessThan(0.5);
  });
});

describe('synthetic source: ARINA-like shard files read by byte range', () => {
  it('writes shards of SHARD_FRAMES frames and reads any run of chunks exactly, across shard boundaries', async () => {
    const acq = generateSynthetic({ scan: [150, 150], detector: 8, distinct: 37, seed: 3 }); // 22,500 frames
    const dir = await mkdtemp(join(tmpdir(), 'synthetic-'));
    try {
      const path = join(dir, 'data.bslz4');
      const offsets = await writeChunkFile(acq, path);
      const paths = shardPaths(path, acq.frames);
      expect(paths.map((p) => p.slice(path.length))).toEqual(['.000001', '.000002', '.000003']);
      const sizes = await Promise.all(paths.map(async (p) => (await stat(p)).size));
      expect(sizes).toEqual([
        offsets[SHARD_FRAMES],
        offsets[2 * SHARD_FRAMES] - offsets[SHARD_FRAMES],
        offsets[acq.frames] - offsets[2 * SHARD_FRAMES],
      ]);
      // Small read pieces, so one read of a run of chunks spans pieces and shards.
      const source = await syntheticSource(acq, path, offsets, 4096);
      try {
        expect(source.summary.files.map((f) => f.frames)).toEqual([10_000, 10_000, 2_500]);
        for (const [start, count] of [
          [0, 3],
          [SHARD_FRAMES - 5, 10],
          [SHARD_FRAMES - 1, SHARD_FRAMES + 2],
          [2 * SHARD_FRAMES, 1],
          [acq.frames - 7, 7],
        ]) {
          const batch = await source.readStored(start, count);
          for (let k = 0; k < count; k++) {
            const chunk = acq.chunks[acq.chunkOf(start + k)];
            const at = batch.offsets[k];
            expect(batch.sizes[k]).toBe(chunk.length);
            expect(batch.bytes.subarray(at, at + chunk.length)).toEqual(chunk);
          }
        }
        const loc = source.locate(SHARD_FRAMES + 3);
        expect([loc.file, loc.address]).toEqual([1, offsets[SHARD_FRAMES + 3] - offsets[SHARD_FRAMES]]);
      } finally {
        await source.close?.();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
