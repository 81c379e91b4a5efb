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

  it('sums the frames of a scan region exactly, from the files before the load and from memory after', async () => {
    const service = createAcquisitionService();
    const summary = await service.openInputs(await Promise.all(arinaPaths.map(nodeInput)));
    const [, scanCols] = summary.scan;
    const region = { row0: 1, row1: 3, col0: 2, col1: 4 };
    const expected = new Float64Array(96 * 96);
    for (let row = 1; row <= 3; row++)
      for (let col = 2; col <= 4; col++) {
        const frame = await service.frame(row * scanCols + col);
        for (let p = 0; p < frame.length; p++) expected[p] += frame[p];
      }
    expect(await service.regionSum(region)).toEqual(expected);
    await service.load();
    expect(await service.regionSum(region)).toEqual(expected);
    // One position is its frame; the whole scan is the sum of every frame (flagged pixels included).
    expect(Array.from(await service.regionSum({ row0: 0, row1: 0, col0: 0, col1: 0 }))).toEqual(
      Array.from(await service.frame(0)),
    );
    const all = await service.regionSum({ row0: 0, row1: summary.scan[0] - 1, col0: 0, col1: scanCols - 1 });
    expect(all.reduce((a, b) => a + b, 0)).toBe(arina.frame_sums.reduce((a, b) => a + b, 0));
    const outside = await service
      .regionSum({ row0: 0, row1: summary.scan[0], col0: 0, col1: 0 })
      .catch((e) => e);
    expect(isStemflowError(outside, 'invalid')).toBe(true);
    expect(outside.message).toMatch(/outside the/);
    await service.close();
  });

  it('lists the candidate datasets of a single file and opens the one asked for', async () => {
    const oracle = loadOracle().files['gzip_u16_32.h5'].datasets;
    const service = createAcquisitionService();
    const open = async (dataset?: string) =>
      service.openInputs([await nodeInput(fixture('gzip_u16_32.h5'))], undefined, dataset);
    const first = await open();
    expect(first.datasets?.map((d) => d.path).sort()).toEqual(['/gzip', '/gzip_shuffle']);
    expect(first.datasets?.[0]).toMatchObject({ shape: [16, 32, 32], dtype: expect.any(String) });
    const chosen = await open('/gzip_shuffle');
    expect(chosen.files[0].dataset).toBe('/gzip_shuffle');
    const result = await service.load();
    expect(Array.from(result.frameTotals)).toEqual(oracle['/gzip_shuffle'].frame_sums);
    // A file with one candidate lists none.
    expect((await service.openInputs([await nodeInput(fixture('raw_u16_32.h5'))])).datasets).toBeUndefined();
    await service.close();
  });
});
