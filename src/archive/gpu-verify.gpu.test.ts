import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { loadDecodeVariant } from '../gpu/passes/bslz4-decode-variants';
import { createStagingPool } from '../gpu/staging-pool';
import { trackBuffers, withGpu } from '../gpu/test-harness';
import { fixture, loadOracle } from '../testing/fixtures';
import { type CodecParams, convertArchive } from './convert';
import { verifyAcquisitionGpu } from './gpu-verify';
import { nodeArchiveFiles, nodeArchiveTarget, nodeSha256 } from './node-folder';
import { openArchive } from './reader';
import { copyArchive, openSource, plantValue, resign, tempDir } from './testing';
import { cpuVerifier, verifyAcquisition } from './verify';

const arina = loadOracle().acquisitions.arina;
const arinaPaths = [arina.master, ...arina.shards].map(fixture);

async function convert(paths: string[], codec: Partial<CodecParams>, opts: { dataset?: string } = {}) {
  const { source, close } = await openSource(paths, opts);
  const dir = join(await tempDir(), 'archive');
  await convertArchive([{ name: 'a', source, sources: [] }], await nodeArchiveTarget(dir), {
    hash: nodeSha256,
    codec,
  });
  await close();
  return dir;
}

describe('tans-compare.wgsl against its CPU twin tansCompare (tans-compare.ts, through cpuVerifier)', () => {
  withGpu(
    'clean archive, planted values at record/block boundaries and in a flagged pixel, damaged lanes: same counts',
    async ({ device }) => {
      const codec = { recordFrames: 7, lanesPerFrame: 3, classes: 8, blockFrames: 3 };
      const dir = await convert(arinaPaths, codec);
      const archive = await openArchive(nodeArchiveFiles(dir), { hash: nodeSha256 });
      const acq = archive.acquisitions[0];
      const { source, close } = await openSource(arinaPaths);
      const tracked = trackBuffers(device);
      const listVariant = loadDecodeVariant(device.limits.maxStorageBuffersPerShaderStage);
      let damagedArchive: Awaited<ReturnType<typeof openArchive>> | undefined;
      try {
        const flagged = source.pixelMask?.findIndex((m) => m !== 0) ?? -1;
        expect(flagged).toBeGreaterThanOrEqual(0);
        const sources = [
          source,
          plantValue(source, 0, 0, 9),
          plantValue(source, 6, 1023, 300),
          plantValue(source, 7, 0, 65535),
          plantValue(source, source.frameCount - 1, 511, 2),
          plantValue(source, 3, flagged, 0),
        ];
        for (const [i, s] of sources.entries()) {
          const cpu = await verifyAcquisition(acq, s, cpuVerifier);
          // 1, 2 or 3 records staged at once; every other source in profile mode (each pass waited for); two
          // sources with one input set (copies not overlapped).
          const profile = i % 2 === 1;
          const overlap = i % 3 !== 2;
          // Whole records, and pieces of one block (3 frames) or two: 7-frame records make pieces of 3, 3, 1
          // or 6, 1 frames, so the planted values lie at piece boundaries as well.
          // The walk decode (the default, every device's) and the load's list decode where the device has it.
          for (const [pieceFrames, decodeVariant] of [
            [undefined, undefined],
            [3, undefined],
            [6, undefined],
            [3, listVariant],
          ] as const) {
            const gpu = await verifyAcquisitionGpu(device, acq, s, {
              slots: 1 + (i % 3),
              profile,
              overlap,
              pieceFrames,
              decodeVariant,
            });
            expect(gpu.timings.decodeMs > 0 && gpu.timings.compareMs > 0).toBe(profile);
            expect(gpu.plan.sets).toBe(overlap ? 2 : 1);
            expect(gpu.plan.maxFrames).toBe(pieceFrames ?? 7);
            expect(gpu.badBlocks).toEqual(cpu.badBlocks);
            expect([gpu.mismatches, gpu.laneErrors, gpu.sourceErrors]).toEqual([
              cpu.mismatches,
              cpu.laneErrors,
              0,
            ]);
          }
        }
        // A source chunk that lies about its sizes (its bitshuffle/LZ4 header's block size zeroed): the GPU
        // decoder refuses that frame, and the report counts it as a source error.
        const lying: typeof source = {
          ...source,
          locate: (f) => source.locate(f),
          storedSizes: () => source.storedSizes(),
          readFrames: (start, count, sig) => source.readFrames(start, count, sig),
          async readStored(start, count, sig, into) {
            const batch = await source.readStored(start, count, sig, into);
            const k = 5 - start;
            if (k >= 0 && k < count) batch.bytes.fill(0, batch.offsets[k] + 8, batch.offsets[k] + 12);
            return batch;
          },
        };
        for (const [pieceFrames, decodeVariant] of [
          [undefined, undefined],
          [3, undefined],
          [3, listVariant],
        ] as const) {
          const gpu = await verifyAcquisitionGpu(device, acq, lying, { pieceFrames, decodeVariant });
          expect(gpu.sourceErrors).toBe(1);
        }
        expect(tracked.createdLabels()).toContain('bslz4-decode scratch');
        // The list decode ran (its parse pass's lists were made) where the device has it.
        expect(tracked.createdLabels().includes('bslz4-parse sequences')).toBe(
          device.limits.maxStorageBuffersPerShaderStage >= 10,
        );
        expect(tracked.alive()).toBe(0);
        // Memory is planned first: a budget below the plan is refused with its numbers, before any buffer.
        const created = tracked.createdLabels().length;
        await expect(verifyAcquisitionGpu(device, acq, source, { budgetBytes: 4096 })).rejects.toThrow(
          /input set\(s\) of .* exceed the budget of 0\.00 GiB; use the CPU verifier/,
        );
        expect(tracked.createdLabels().length).toBe(created);
        // A damaged lane (a zeroed stop word, re-signed so it opens): both count the same lane error and values.
        const bad = await copyArchive(dir);
        const rec = acq.records[2];
        const lane = 4;
        await resign(bad, rec.file, (b) => {
          const at = rec.dataOffset + 4 * (rec.offsets[lane + 1] - 1);
          new DataView(b.buffer, b.byteOffset).setUint32(at, 0, true);
          return b;
        });
        damagedArchive = await openArchive(nodeArchiveFiles(bad), { hash: nodeSha256 });
        const damaged = damagedArchive.acquisitions[0];
        const cpu = await verifyAcquisition(damaged, source, cpuVerifier);
        expect(cpu.laneErrors).toBe(1);
        expect(cpu.mismatches).toBeGreaterThan(0);
        for (const pieceFrames of [undefined, 3]) {
          const gpu = await verifyAcquisitionGpu(device, damaged, source, { pieceFrames });
          expect([gpu.mismatches, gpu.laneErrors, gpu.badBlocks]).toEqual([
            cpu.mismatches,
            cpu.laneErrors,
            cpu.badBlocks,
          ]);
        }
      } finally {
        tracked.stop();
        await close();
        await archive.close();
        await damagedArchive?.close();
      }
    },
    240_000,
  );

  withGpu(
    'staging from a pool: the second verification creates no staging, gives the same counts, and the pool keeps what fits',
    async ({ device }) => {
      const dir = await convert(arinaPaths, {
        recordFrames: 7,
        lanesPerFrame: 3,
        classes: 8,
        blockFrames: 3,
      });
      const archive = await openArchive(nodeArchiveFiles(dir), { hash: nodeSha256 });
      const acq = archive.acquisitions[0];
      const { source, close } = await openSource(arinaPaths);
      const tracked = trackBuffers(device);
      try {
        const planted = plantValue(source, 6, 1023, 300);
        const cpu = await verifyAcquisition(acq, planted, cpuVerifier);
        expect(cpu.mismatches).toBe(1);
        const staging = createStagingPool();
        const stagingMade = () => tracked.createdLabels().filter((l) => l.includes('staging')).length;
        const first = await verifyAcquisitionGpu(device, acq, planted, { staging, pieceFrames: 3 });
        const made = stagingMade();
        expect(made).toBe(4); // two slots, chunks and lane words each
        expect(staging.bytes).toBe(first.plan.slots * first.plan.slotBytes);
        expect(tracked.alive()).toBe(4); // only the pool's
        const second = await verifyAcquisitionGpu(device, acq, planted, { staging, pieceFrames: 3 });
        expect(stagingMade()).toBe(made);
        for (const r of [first, second]) {
          expect([r.mismatches, r.laneErrors, r.sourceErrors, r.badBlocks]).toEqual([1, 0, 0, cpu.badBlocks]);
        }
        // Whole records need larger staging than the pooled pieces': new buffers, and the pool keeps the
        // larger ones it has room for.
        await verifyAcquisitionGpu(device, acq, planted, { staging });
        expect(stagingMade()).toBe(made + 4);
        // A pool too small to keep anything destroys what it is given.
        const tiny = createStagingPool(16);
        await verifyAcquisitionGpu(device, acq, planted, { staging: tiny });
        expect(tiny.bytes).toBe(0);
        staging.clear();
        expect(staging.bytes).toBe(0);
        expect(tracked.alive()).toBe(0);
      } finally {
        tracked.stop();
        await close();
        await archive.close();
      }
    },
    240_000,
  );
  withGpu(
    'uint8, uint32 and an odd 33 x 35 detector (frames at any word of the reference): same counts',
    async ({ device }) => {
      const cases: [string, { dataset?: string }][] = [
        ['many_v1_u8_32.h5', { dataset: '/data' }],
        ['many_fixed_u32_32.h5', { dataset: '/data' }],
        ['odd_u16_33x35.h5', {}],
      ];
      for (const [file, opts] of cases) {
        const paths = [fixture(file)];
        const dir = await convert(
          paths,
          { recordFrames: 5, lanesPerFrame: 3, classes: 8, blockFrames: 2 },
          opts,
        );
        const archive = await openArchive(nodeArchiveFiles(dir), { hash: nodeSha256 });
        const acq = archive.acquisitions[0];
        const { source, close } = await openSource(paths, opts);
        try {
          const last = source.frameCount - 1;
          const pixels = acq.geometry.pixels;
          const big = acq.info.dtype === 'uint8' ? 200 : 60000;
          for (const s of [
            source,
            plantValue(source, last, pixels - 1, big),
            plantValue(source, 1, 0, 7),
            plantValue(source, 3, pixels - 1, 1),
          ]) {
            const cpu = await verifyAcquisition(acq, s, cpuVerifier);
            for (const pieceFrames of [undefined, 2]) {
              const gpu = await verifyAcquisitionGpu(device, acq, s, { pieceFrames });
              expect(gpu.badBlocks, file).toEqual(cpu.badBlocks);
              expect([gpu.mismatches, gpu.laneErrors, gpu.sourceErrors], file).toEqual([
                cpu.mismatches,
                cpu.laneErrors,
                0,
              ]);
            }
          }
        } finally {
          await close();
          await archive.close();
        }
      }
    },
    180_000,
  );
});
