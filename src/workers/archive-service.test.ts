import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { nodeArchiveFiles, nodeArchiveTarget, nodeSha256 } from '../archive/node-folder';
import { tempDir } from '../archive/testing';
import { closeInputs, openInputs } from '../cli/inputs';
import { fixture, loadOracle } from '../testing/fixtures';
import { createArchiveService } from './archive-service';

const arina = loadOracle().acquisitions.arina;
const arinaPaths = [arina.master, ...arina.shards].map(fixture);

describe('archive service (the worker behind the app): convert then verify, with source identities', () => {
  it('two acquisitions into one archive, verified on the CPU with every count identical', async () => {
    const service = createArchiveService({ hash: nodeSha256 });
    let a = await openInputs(arinaPaths);
    let b = await openInputs([fixture('odd_u16_33x35.h5')]);
    const dir = join(await tempDir(), 'archive');
    const stages = new Set<string>();
    try {
      const summary = await service.convert(
        [
          { name: 'arina', inputs: a },
          { name: 'odd', inputs: b },
        ],
        await nodeArchiveTarget(dir),
        (p) => stages.add(p.stage),
      );
      expect(summary.acquisitions.map((x) => x.name)).toEqual(['arina', 'odd']);
      // The source files were hashed while they were converted (no stage of their own); their identity is in
      // the manifest, checked here directly.
      expect([...stages]).toEqual(['convert']);
      const manifest = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8'));
      const identity = async (path: string) => {
        const bytes = await readFile(path);
        const sha256 = createHash('sha256').update(bytes).digest('hex');
        return { path: basename(path), size: bytes.length, sha256 };
      };
      expect(manifest.acquisitions[0].sources).toEqual(await Promise.all(arinaPaths.map(identity)));
      expect(manifest.acquisitions[1].sources).toEqual([await identity(fixture('odd_u16_33x35.h5'))]);
      expect(summary.encoder).toBe('cpu');
      expect(summary.archiveBytes).toBeGreaterThan(0);
      expect((await readdir(dir)).sort()).toEqual(['acq0000', 'acq0001', 'manifest.json', 'state.npz']);
      // The service closes the sources it opened (and their files): open them again.
      a = await openInputs(arinaPaths);
      b = await openInputs([fixture('odd_u16_33x35.h5')]);
      const verdict = await service.verify(nodeArchiveFiles(dir), [
        { name: 'arina', inputs: a },
        { name: 'odd', inputs: b },
      ]);
      expect(verdict.ok).toBe(true);
      expect(verdict.acquisitions.map((x) => [x.name, x.mismatches, x.laneErrors])).toEqual([
        ['arina', 0, 0],
        ['odd', 0, 0],
      ]);
      expect(verdict.acquisitions[0].sourceFiles.every((f) => f.matches)).toBe(true);
      expect(verdict.acquisitions[0].compared).toBe(arina.frames * arina.detector[0] * arina.detector[1]);
      // Source sets in the wrong order: the acquisitions do not match.
      a = await openInputs(arinaPaths);
      b = await openInputs([fixture('odd_u16_33x35.h5')]);
      await expect(
        service.verify(nodeArchiveFiles(dir), [
          { name: 'odd', inputs: b },
          { name: 'arina', inputs: a },
        ]),
      ).rejects.toThrow(/not the archived acquisition/);
    } finally {
      await closeInputs(a);
      await closeInputs(b);
    }
  }, 120_000);
});
