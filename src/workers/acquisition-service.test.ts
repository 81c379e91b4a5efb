import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isStemflowError } from '../errors';
import { nodeInput } from '../source/node-input';
import { DEMO, fixture, loadOracle, ROOT } from '../testing/fixtures';
import { createAcquisitionService } from './acquisition-service';

const arina = loadOracle().acquisitions.arina;
const arinaPaths = [arina.master, ...arina.shards].map(fixture);

describe('acquisition service (the worker logic, run in Node)', () => {
  it('loads once, audits exactly over unflagged pixels, and answers frames and virtual images', async () => {
    const service = createAcquisitionService();
    const summary = await service.openInputs(await Promise.all(arinaPaths.map(nodeInput)));
    expect(summary.frameCount).toBe(60);
    const progress: number[] = [];
    const result = await service.load((p) => progress.push(p.framesDone));
    expect(progress.at(-1)).toBe(60);
    expect(Array.from(result.frameTotals)).toEqual(arina.unflagged.frame_sums);
    expect(result.maxCount).toBe(arina.unflagged.max);
    expect(result.countAbove255).toBe(arina.unflagged.count_gt_255);
    const grand = arina.unflagged.frame_sums.reduce((a, b) => a + b, 0);
    expect(result.sumDiffraction.reduce((a, b) => a + b, 0)).toBe(grand);

    const flagged = await service.pixelMask();
    expect(Array.from(flagged.keys()).filter((i) => flagged[i])).toEqual(arina.pixel_mask.flagged_indices);

    // A disk mask that also covers a flagged pixel: the flagged pixel never counts.
    const mask = new Uint8Array(96 * 96);
    for (let y = 0; y < 96; y++)
      for (let x = 0; x < 96; x++) if ((x - 47) ** 2 + (y - 47) ** 2 <= 20 ** 2) mask[y * 96 + x] = 1;
    mask[arina.pixel_mask.flagged_indices[3]] = 1;
    const image = await service.virtualImage(mask);
    expect(image).toHaveLength(60);
    for (const f of [0, 23, 24, 59]) {
      const frame = await service.frame(f);
      let expected = 0;
      for (let p = 0; p < mask.length; p++) if (mask[p] && !flagged[p]) expected += frame[p];
      expect(image[f]).toBe(expected);
    }
    // The full mask gives the frame totals.
    expect(Array.from(await service.virtualImage(new Uint8Array(96 * 96).fill(1)))).toEqual(
      arina.unflagged.frame_sums,
    );
    await service.close();
  });

  it('a bad drop is refused and the open acquisition stays usable', async () => {
    const service = createAcquisitionService();
    await service.openInputs(await Promise.all(arinaPaths.map(nodeInput)));
    await service.load();
    const before = await service.frame(30);
    const bad = await service.openInputs([await nodeInput(join(ROOT, 'package.json'))]).catch((e) => e);
    expect(isStemflowError(bad, 'corrupt')).toBe(true);
    expect(String(bad.message)).toMatch(/not an HDF5 file/);
    expect(await service.frame(30)).toEqual(before);
    await service.close();
    await expect(service.frame(0)).rejects.toThrow(/No acquisition is open/);
  });

  it('refuses a load that does not fit its memory budget, with the numbers', async () => {
    const service = createAcquisitionService(1024 * 1024);
    await service.openInputs(await Promise.all(arinaPaths.map(nodeInput)));
    const e = await service.load().catch((x) => x);
    expect(isStemflowError(e, 'budget')).toBe(true);
    expect(e.message).toMatch(/1\.05 MiB of counts, more than the 1\.00 MiB/);
    await service.close();
  });

  it('loads the built-in demo exactly (h5py oracle)', async () => {
    const demo = loadOracle(DEMO).acquisitions.demo;
    const service = createAcquisitionService();
    await service.openInputs(
      await Promise.all([demo.master, ...demo.shards].map((n) => nodeInput(join(DEMO, n)))),
    );
    const result = await service.load();
    expect(Array.from(result.frameTotals)).toEqual(demo.unflagged.frame_sums);
    expect(result.maxCount).toBe(demo.unflagged.max);
    await service.close();
  });
});
