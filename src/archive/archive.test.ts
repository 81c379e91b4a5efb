import { execFileSync } from 'node:child_process';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isStemflowError } from '../errors';
import { fixture, loadOracle } from '../testing/fixtures';
import { type CodecParams, convertArchive, viewValues } from './convert';
import { nodeArchiveFiles, nodeArchiveTarget, nodeSha256 } from './node-folder';
import { type Archive, openArchive } from './reader';
import { copyArchive, editManifest, openSource, plantValue, resign, tempDir } from './testing';
import { cpuVerifier, verifyAcquisition } from './verify';

const arina = loadOracle().acquisitions.arina;
const arinaPaths = [arina.master, ...arina.shards].map(fixture);
const small: Partial<CodecParams> = { recordFrames: 7, lanesPerFrame: 3, classes: 8, blockFrames: 3 };

async function convert(
  paths: string[],
  codec: Partial<CodecParams> = small,
  options: { dataset?: string } = {},
) {
  const { source, close } = await openSource(paths, options);
  const dir = join(await tempDir(), 'archive');
  try {
    const result = await convertArchive([{ name: 'a', source, sources: [] }], await nodeArchiveTarget(dir), {
      hash: nodeSha256,
      codec,
    });
    return { dir, result };
  } finally {
    await close();
  }
}

const open = (dir: string): Promise<Archive> => openArchive(nodeArchiveFiles(dir), { hash: nodeSha256 });

async function expectError(p: Promise<unknown>, kind: string, text: RegExp) {
  const error = await p.then(
    () => null,
    (e) => e,
  );
  expect(isStemflowError(error), String(error)).toBe(true);
  expect(error.kind).toBe(kind);
  expect(error.message).toMatch(text);
}

describe('archive: convert, open, read back', () => {
  const cases: [string, string[], { dataset?: string }][] = [
    ['ARINA master + 3 shards (uint16)', arinaPaths, {}],
    ['uint32, fixed array index', [fixture('many_fixed_u32_32.h5')], { dataset: '/data' }],
    ['uint8, v1 B-tree', [fixture('many_v1_u8_32.h5')], { dataset: '/data' }],
    ['odd 33x35 detector', [fixture('odd_u16_33x35.h5')], {}],
  ];
  for (const [name, paths, opts] of cases) {
    it(`${name}: every count reads back exactly and verifies with 0 mismatches`, async () => {
      const { dir, result } = await convert(paths, small, opts);
      const archive = await open(dir);
      const { source, close } = await openSource(paths, opts);
      try {
        const acq = archive.acquisitions[0];
        const frames = source.frameCount;
        const expected = viewValues(await source.readFrames(0, frames), acq.info.dtype);
        expect(await acq.readFrames(0, frames)).toEqual(expected);
        // Random access across a record boundary.
        if (frames > 9)
          expect(await acq.readFrames(5, 4)).toEqual(
            expected.subarray(5 * acq.geometry.pixels, 9 * acq.geometry.pixels),
          );
        const report = await verifyAcquisition(acq, source, cpuVerifier);
        expect(report.mismatches).toBe(0);
        expect(report.laneErrors).toBe(0);
        expect(report.compared).toBe(expected.length);
        expect(result.archiveBytes).toBeGreaterThan(0);
        let total = 0n;
        let max = 0;
        for (const v of expected) {
          total += BigInt(v);
          max = Math.max(max, v);
        }
        expect(acq.info.audit.total).toBe(total.toString());
        expect(acq.info.audit.max).toBe(max);
        // A record's data words, whole and as a range (a piece of its frames' lanes), into memory or into a
        // caller's buffer; a range outside the record is refused.
        const rec = acq.records[0];
        const whole = (await acq.readRecordData(0)).slice();
        expect(whole.length).toBe(rec.dataWords);
        const from = rec.offsets[acq.geometry.slices];
        const to = rec.offsets[Math.min(rec.frames, 3) * acq.geometry.slices];
        expect(await acq.readRecordData(0, undefined, undefined, { from, to })).toEqual(
          whole.subarray(from, to),
        );
        const into = new Uint8Array(4 * (to - from) + 8);
        const got = await acq.readRecordData(0, undefined, into, { from, to });
        expect(got.buffer).toBe(into.buffer);
        expect(got).toEqual(whole.subarray(from, to));
        for (const bad of [
          { from: to, to: from - 1 },
          { from: 0, to: rec.dataWords + 1 },
          { from: -1, to: 2 },
          { from: 0.5, to: 2 },
        ]) {
          await expect(acq.readRecordData(0, undefined, undefined, bad)).rejects.toThrow(
            /not within its data/,
          );
        }
      } finally {
        await close();
        await archive.close();
      }
    });
  }

  it('keeps the pixel mask and the source identity; the state opens with numpy', async () => {
    const { source, close } = await openSource(arinaPaths);
    const dir = join(await tempDir(), 'archive');
    const sources = [{ path: 'arina_master.h5', size: 1234, sha256: 'ab'.repeat(32) }];
    await convertArchive([{ name: 'arina', source, sources }], await nodeArchiveTarget(dir), {
      hash: nodeSha256,
      codec: small,
    });
    const archive = await open(dir);
    const acq = archive.acquisitions[0];
    expect(acq.pixelMask).toEqual(source.pixelMask);
    expect(acq.info.flaggedPixels).toBe(source.summary.flaggedPixels);
    expect(acq.info.sources).toEqual(sources);
    // The summed diffraction pattern, exact, from the stored per-record pixel sums.
    const all = await source.readFrames(0, source.frameCount);
    const values = new Uint16Array(all.buffer, all.byteOffset, all.byteLength / 2);
    const pixels = acq.geometry.pixels;
    const expected = new Float64Array(pixels);
    for (let i = 0; i < values.length; i++) expected[i % pixels] += values[i];
    expect(acq.sumPattern).toEqual(expected);
    const frames = source.frameCount;
    expect(acq.records.map((r) => r.frames)).toEqual(
      Array.from({ length: Math.ceil(frames / 7) }, (_, r) => Math.min(7, frames - 7 * r)),
    );
    const printed = execFileSync('/usr/bin/python3', [
      '-c',
      'import numpy, sys; z = numpy.load(sys.argv[1]); print(sorted((k, z[k].dtype.str, z[k].shape) for k in z.files))',
      join(dir, 'state.npz'),
    ]).toString();
    const [rows, cols] = acq.info.detector;
    expect(printed.trim()).toBe(
      `[('acq0000_class_map', '|u1', (${acq.records.length}, ${rows}, ${cols})), ('acq0000_freqs', '<u2', (${acq.records.length}, 72, 64)), ('acq0000_pixel_mask', '<u4', (${rows}, ${cols})), ('acq0000_pixel_sums', '<f8', (${acq.records.length}, ${rows * cols}))]`,
    );
    await close();
    await archive.close();
  });
});

describe('archive: exhaustive verification finds every planted value', () => {
  // Frame 6 is the last of record 0 (recordFrames 7), 7 the first of record 1; blocks are 3 frames.
  const plants: [string, number, number][] = [
    ['first value', 0, 0],
    ['last value of a record', 6, 1023],
    ['first value of the next record', 7, 0],
    ['a block boundary', 9, 17],
    ['the last frame', -1, 5],
  ];
  it('in the source and in the archive: exactly one mismatch in the right block', async () => {
    const { dir } = await convert(arinaPaths);
    const archive = await open(dir);
    const acq = archive.acquisitions[0];
    const { source, close } = await openSource(arinaPaths);
    const flagged = source.pixelMask ? source.pixelMask.findIndex((m) => m !== 0) : -1;
    const all = [
      ...plants,
      ...(flagged >= 0 ? [['a flagged pixel', 3, flagged] as [string, number, number]] : []),
    ];
    try {
      for (const [what, f, pixel] of all) {
        const frame = f < 0 ? source.frameCount - 1 : f;
        const original = viewValues(await source.readFrames(frame, 1), acq.info.dtype)[pixel];
        const changed = plantValue(source, frame, pixel, original === 0 ? 1 : original - 1);
        // A changed source against the true archive.
        const r1 = await verifyAcquisition(acq, changed, cpuVerifier);
        expect([what, r1.mismatches]).toEqual([what, 1]);
        expect(r1.badBlocks).toEqual([
          { firstFrame: frame - ((frame % 7) % 3), frames: expect.any(Number), mismatches: 1 },
        ]);
        // An archive of the changed source against the true source.
        const dir2 = join(await tempDir(), 'archive');
        await convertArchive([{ name: 'b', source: changed, sources: [] }], await nodeArchiveTarget(dir2), {
          hash: nodeSha256,
          codec: small,
        });
        const archive2 = await open(dir2);
        const r2 = await verifyAcquisition(archive2.acquisitions[0], source, cpuVerifier);
        expect([what, r2.mismatches]).toEqual([what, 1]);
        await archive2.close();
      }
    } finally {
      await close();
      await archive.close();
    }
  }, 120_000);
});

describe('archive: a hostile or damaged archive is refused before anything is published', () => {
  it('a changed byte fails its SHA-256', async () => {
    const dir = await copyArchive((await convert(arinaPaths)).dir);
    const path = join(dir, 'acq0000', 'rec-000001.tans');
    const bytes = await readFile(path);
    bytes[100] ^= 1;
    await writeFile(path, bytes);
    await expectError(open(dir), 'corrupt', /rec-000001.tans does not match its SHA-256/);
    // Refused with 4 files checked at once (the others' checks take 100 ms longer): every file opened is closed
    // again, and none is opened after the refusal (the checks still running stop before their next file).
    const base = nodeArchiveFiles(dir);
    let openFiles = 0;
    const counted = {
      ...base,
      hashThreads: 4,
      open: async (p: string) => {
        const f = await base.open(p);
        openFiles++;
        return {
          ...f,
          close: async () => {
            openFiles--;
            await f.close?.();
          },
        };
      },
      sha256: async (p: string) => {
        const digest = await (base.sha256 as (p: string) => Promise<string>)(p);
        if (!p.endsWith('rec-000001.tans')) await new Promise((r) => setTimeout(r, 100));
        return digest;
      },
    };
    await expectError(
      openArchive(counted, { hash: nodeSha256 }),
      'corrupt',
      /rec-000001.tans does not match its SHA-256/,
    );
    await new Promise((r) => setTimeout(r, 400));
    expect(openFiles).toBe(0);
  });
  it('a truncated shard', async () => {
    const dir = await copyArchive((await convert(arinaPaths)).dir);
    const path = join(dir, 'acq0000', 'rec-000002.tans');
    await writeFile(path, (await readFile(path)).subarray(0, 50));
    await expectError(open(dir), 'truncated', /rec-000002.tans has 50 bytes; the manifest says/);
    // Re-signed, the shard's own header catches it.
    await resign(dir, 'acq0000/rec-000002.tans', (b) => b);
    await expectError(open(dir), 'truncated', /rec-000002.tans has 50 bytes, less than its header/);
  });
  it('lane offsets outside the file or longer than raw', async () => {
    const dir = await copyArchive((await convert(arinaPaths)).dir);
    await resign(dir, 'acq0000/rec-000000.tans', (b) => {
      new DataView(b.buffer, b.byteOffset).setUint32(4 * 10, 0xfffffff0, true);
      return b;
    });
    await expectError(open(dir), 'corrupt', /lane 1 has an impossible word range/);
  });
  it('impossible table sizes and frequencies', async () => {
    const dir = await copyArchive((await convert(arinaPaths)).dir);
    await editManifest(dir, (m) => {
      (m.acquisitions as { tableLog: number }[])[0].tableLog = 30;
    });
    await expectError(open(dir), 'corrupt', /tableLog \(30\) is not an integer in 5..12/);
    const dir2 = await copyArchive((await convert(arinaPaths)).dir);
    const { encodeNpz, decodeNpz } = await import('./npz');
    await resign(dir2, 'state.npz', (b) => b); // no-op: keeps the test honest about the path
    const state = await decodeNpz(new Uint8Array(await readFile(join(dir2, 'state.npz'))));
    const freqs = state.get('acq0000_freqs');
    if (!freqs) throw new Error('no freqs');
    freqs.data[0] += 1;
    const npz = await encodeNpz(Object.fromEntries(state));
    await resign(dir2, 'state.npz', () => npz);
    await expectError(open(dir2), 'corrupt', /frequencies sum to 2049, not 2048/);
  });
  it('other versions and formats are refused by name; paths may not leave the folder', async () => {
    const dir = await copyArchive((await convert(arinaPaths)).dir);
    await editManifest(dir, (m) => {
      m.version = 2;
    });
    await expectError(open(dir), 'unsupported', /version 2; this reader reads version 1 only/);
    await editManifest(dir, (m) => {
      m.version = 1;
      (m.files as { path: string }[])[1].path = '../etc/passwd';
    });
    await expectError(open(dir), 'corrupt', /is not a safe relative path/);
    await editManifest(dir, (m) => {
      m.format = 'zarr';
    });
    await expectError(open(dir), 'unsupported', /format "zarr"/);
  });
  it('a missing shard', async () => {
    const dir = await copyArchive((await convert(arinaPaths)).dir);
    const { rm } = await import('node:fs/promises');
    await rm(join(dir, 'acq0000', 'rec-000003.tans'));
    await expectError(open(dir), 'not-found', /rec-000003.tans/);
  });
});

describe('archive: safe writes', () => {
  it('never replaces an existing archive and leaves no temporaries after a failure or cancel', async () => {
    const { dir } = await convert(arinaPaths);
    await expectError(nodeArchiveTarget(dir), 'invalid', /already exists; an archive is never replaced/);
    const parent = join(dir, '..');
    const { source, close } = await openSource(arinaPaths);
    const controller = new AbortController();
    const target = join(parent, 'cancelled');
    const p = convertArchive([{ name: 'c', source, sources: [] }], await nodeArchiveTarget(target), {
      hash: nodeSha256,
      codec: small,
      signal: controller.signal,
      onProgress: ({ framesDone }) => {
        if (framesDone >= 14) controller.abort();
      },
    });
    await expectError(p, 'aborted', /./);
    await close();
    expect((await readdir(parent)).sort()).toEqual(['archive']);
  });
});
