import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Download, expect, test } from '@playwright/test';
import { decodeNpy } from '../src/io/npy';
import { ARINA_FILES, overlayPosition, ROOT, readFixtureOracle, waitReady } from './helpers';

// A two-acquisition archive written by the CLI (CPU encoder), opened in the series panel through the folder
// input (the native folder picker is removed so the <input webkitdirectory> path runs), queried on WebGPU.
let archive: string;
test.beforeAll(() => {
  archive = join(mkdtempSync(join(tmpdir(), 'stemflow-e2e-series-')), 'archive');
  execFileSync(
    process.execPath,
    [
      join(ROOT, 'bin/stemflow.mjs'),
      'convert',
      '--acquisition',
      'first',
      ...ARINA_FILES,
      '--acquisition',
      'second',
      ...ARINA_FILES,
      '--out',
      archive,
      '--backend',
      'cpu',
      '--record',
      '16',
    ],
    { stdio: 'pipe' },
  );
});

test.beforeEach(async ({ page }) => {
  await page.addInitScript(() => {
    delete (window as unknown as { showDirectoryPicker?: unknown }).showDirectoryPicker;
  });
});

test('series panel: exact images of every acquisition from the GPU-resident archive, presets, frames at a picked position', async ({
  page,
}) => {
  const oracle = readFixtureOracle('arina');
  await page.goto('/?demo=0');
  await page.getByTestId('series-toggle').click();
  await page.getByTestId('series-folder-input').setInputFiles(archive);
  await page.waitForFunction(
    () =>
      window.__stemflowSeries?.state().phase === 'ready' ||
      window.__stemflowSeries?.state().phase === 'error',
    undefined,
    {
      timeout: 120_000,
    },
  );
  expect(await page.evaluate(() => window.__stemflowSeries!.state().error)).toBeNull();
  expect(await page.evaluate(() => window.__stemflowSeries!.state().acquisitions)).toBe(2);
  // Every file's SHA-256 was checked in the hash threads (nested workers), not in the series worker.
  expect(await page.evaluate(() => window.__stemflowSeries!.state().hashThreads)).toBeGreaterThan(0);
  // The exact index fits the default budget: every query below reads it (the GPU tests compare it with the lanes).
  await expect(page.getByTestId('series-index')).toContainText('exact index built');

  const settled = async () => {
    await page.waitForFunction(
      () => {
        const s = window.__stemflowSeries!.state();
        return !s.busy && s.lastMs !== null;
      },
      undefined,
      { timeout: 120_000 },
    );
    return page.evaluate(() => window.__stemflowSeries!.images());
  };
  await page.evaluate(() => window.__stemflowSeries!.setPreset('all'));
  await expect
    .poll(async () => (await settled())[0]?.reduce((a, b) => a + b, 0), { timeout: 120_000 })
    .toBe(oracle.unflagged.frame_sums.reduce((a, b) => a + b, 0));
  const whole = await settled();
  // The whole detector (flagged pixels left out) at every scan position: the h5py oracle's unflagged sums.
  expect(whole[0]).toEqual(oracle.unflagged.frame_sums);
  expect(whole[1]).toEqual(oracle.unflagged.frame_sums);

  await page.evaluate(() => window.__stemflowSeries!.setPreset('bf'));
  await expect
    .poll(async () => (await settled())[0]?.reduce((a, b) => a + b, 0), { timeout: 120_000 })
    .toBeLessThan(oracle.unflagged.frame_sums.reduce((a, b) => a + b, 0));
  const bf = await settled();
  expect(bf[1]).toEqual(bf[0]);
  // The exact value under the pointer.
  const [rows, cols] = oracle.scan;
  const box = (await page.getByTestId('series-image-0').boundingBox())!;
  await page.mouse.move(box.x + (box.width * 2.5) / cols, box.y + (box.height * 1.5) / rows);
  await expect(page.getByTestId('series-image-0-readout')).toHaveText(`row 1, col 2: ${bf[0][cols + 2]}`);
  // The stack export: the exact images in order (NPY) and the record of how they were made (JSON).
  const downloads: Download[] = [];
  page.on('download', (d) => downloads.push(d));
  await page.getByTestId('series-export').click();
  await expect.poll(() => downloads.length).toBe(2);
  const file = async (ext: string) =>
    readFileSync((await downloads.find((d) => d.suggestedFilename().endsWith(ext))!.path())!);
  const stack = decodeNpy(await file('.npy'));
  expect(stack.shape).toEqual([2, rows, cols]);
  expect(Array.from(stack.data)).toEqual([...bf[0], ...bf[1]]);
  const record = JSON.parse((await file('.json')).toString());
  expect(record.acquisitions.map((a: { name: string }) => a.name)).toEqual(['first', 'second']);
  expect(record.mask.source.kind).toBe('series controls');
  // ADF, then a wider inner radius: only the ring between the radii is decoded (delta); the explicit rebase
  // recomputes from scratch and finds the same values.
  await page.evaluate(() => window.__stemflowSeries!.setPreset('adf'));
  await expect
    .poll(async () => (await settled())[0]?.reduce((a, b) => a + b, 0), { timeout: 120_000 })
    .not.toBe(bf[0].reduce((a, b) => a + b, 0));
  await page.getByLabel('Inner radius').fill('22');
  await expect
    .poll(async () => page.evaluate(() => window.__stemflowSeries!.state().modes), { timeout: 120_000 })
    .toEqual(['delta', 'delta']);
  await settled();
  await page.getByTestId('series-rebase').click();
  await expect(page.getByTestId('series-rebase-note')).toContainText('identical to the delta updates');
  expect(await page.evaluate(() => window.__stemflowSeries!.state().modes)).toEqual(['full', 'full']);
  await expect(page.getByTestId('series-time')).toContainText('query');

  await page.getByTestId('series-image-1').click();
  await expect(page.getByTestId('series-frames')).toContainText('Frames at row');

  // The images a newer query replaced on screen went back to the worker, which filled them again: still exact,
  // and the value under the pointer is read from the images shown.
  await page.evaluate(() => window.__stemflowSeries!.setPreset('all'));
  await expect
    .poll(async () => (await settled())[0], { timeout: 120_000 })
    .toEqual(oracle.unflagged.frame_sums);
  expect(await settled()).toEqual([oracle.unflagged.frame_sums, oracle.unflagged.frame_sums]);
  expect(await page.evaluate(() => window.__stemflowSeries!.state().recycled)).toBe(2);
  // (The frames shown below moved the images: where the image is now.)
  const now = (await page.getByTestId('series-image-0').boundingBox())!;
  await page.mouse.move(now.x + (now.width * 2.5) / cols, now.y + (now.height * 1.5) / rows);
  await expect(page.getByTestId('series-image-0-readout')).toHaveText(
    `row 1, col 2: ${oracle.unflagged.frame_sums[cols + 2]}`,
  );
});

test('series panel: a budget that holds one of two acquisitions loads the first and says so; the chooser loads others in any order, refuses what does not fit and keeps what is loaded; images exact', async ({
  page,
}) => {
  const oracle = readFixtureOracle('arina');
  await page.goto('/?demo=0');
  await page.getByTestId('series-toggle').click();
  const open = async () => {
    await page.getByTestId('series-folder-input').setInputFiles(archive);
    await page.waitForFunction(
      () => ['ready', 'error'].includes(window.__stemflowSeries?.state().phase ?? ''),
      undefined,
      { timeout: 120_000 },
    );
    return page.evaluate(() => window.__stemflowSeries!.state());
  };
  const both = await open();
  expect(both.error).toBeNull();
  expect([both.acquisitions, both.asked]).toEqual([2, 2]);
  // Three quarters of what two acquisitions take holds one of them, not two.
  await page.getByLabel('GPU budget in GiB').fill(String((0.75 * both.gpuBytes) / 2 ** 30));
  const one = await open();
  expect(one.error).toBeNull();
  expect([one.acquisitions, one.asked]).toEqual([1, 2]);
  expect(one.gpuBytes).toBeLessThanOrEqual(0.75 * both.gpuBytes);
  await expect(page.getByTestId('series-summary')).toContainText('1 of 2 acquisitions (the budget holds 1)');
  // The budget left no room for the exact index: it says why; queries read the encoded lanes.
  await expect(page.getByTestId('series-index')).toContainText('exact index not built: the index needs');
  await page.evaluate(() => window.__stemflowSeries!.setPreset('all'));
  await expect
    .poll(
      async () => {
        await page.waitForFunction(() => !window.__stemflowSeries!.state().busy, undefined, {
          timeout: 120_000,
        });
        return page.evaluate(() => window.__stemflowSeries!.images());
      },
      { timeout: 120_000 },
    )
    .toEqual([oracle.unflagged.frame_sums]);

  // The chooser: the second acquisition instead of the first (the archive is checked once, at the open).
  const imagesWhenSettled = async () => {
    await page.waitForFunction(
      () => {
        const s = window.__stemflowSeries!.state();
        return s.phase === 'ready' && !s.busy && s.lastMs !== null;
      },
      undefined,
      { timeout: 120_000 },
    );
    return page.evaluate(() => ({
      order: window.__stemflowSeries!.order(),
      images: window.__stemflowSeries!.images(),
      error: window.__stemflowSeries!.state().error,
    }));
  };
  await expect(page.getByTestId('series-acquisitions')).toContainText('not loaded');
  await page.evaluate(() => window.__stemflowSeries!.choose([1]));
  await page.getByTestId('series-load-chosen').click();
  await expect.poll(async () => (await imagesWhenSettled()).order, { timeout: 120_000 }).toEqual([1]);
  expect((await imagesWhenSettled()).images).toEqual([oracle.unflagged.frame_sums]);
  // Both, second first: refused within the budget (with the numbers), the loaded one stays and answers.
  await page.evaluate(() => window.__stemflowSeries!.choose([1, 0]));
  await page.getByTestId('series-load-chosen').click();
  await expect(page.getByTestId('series-error')).toContainText('budget');
  expect((await imagesWhenSettled()).order).toEqual([1]);
  // With room for both: loaded in the chosen order; hiding one queries the other alone.
  await page.getByLabel('GPU budget in GiB').fill('4');
  await page.getByTestId('series-load-chosen').click();
  await expect.poll(async () => (await imagesWhenSettled()).order, { timeout: 120_000 }).toEqual([1, 0]);
  expect((await imagesWhenSettled()).images).toEqual([
    oracle.unflagged.frame_sums,
    oracle.unflagged.frame_sums,
  ]);
  // The summed pattern shown is the selected (first shown) acquisition's.
  await expect(page.getByLabel('Summed diffraction pattern of second')).toBeVisible();
  await page.getByRole('checkbox', { name: 'Show second' }).uncheck();
  await expect(page.getByLabel('Summed diffraction pattern of first')).toBeVisible();
  await expect.poll(async () => (await imagesWhenSettled()).order, { timeout: 120_000 }).toEqual([0]);
});

test("series panel following the detector panel: every acquisition's image is the main view's exact image while its mask is dragged", async ({
  page,
}) => {
  await page.goto('/?demo=0');
  await page.getByTestId('file-input').setInputFiles(ARINA_FILES);
  await waitReady(page, 'arina');
  await page.getByTestId('series-toggle').click();
  await page.getByTestId('series-folder-input').setInputFiles(archive);
  await page.waitForFunction(() => window.__stemflowSeries?.state().phase === 'ready', undefined, {
    timeout: 120_000,
  });
  await page.getByTestId('series-source-panel').check();
  await expect(page.getByTestId('series-panel')).toHaveClass(/docked/);

  // Both acquisitions of the series (the same files) equal the main view's image for the panel's mask.
  const agree = async () => {
    await page.evaluate(() => window.__stemflow!.virtualSettled());
    const main = await page.evaluate(() => ({
      mask: window.__stemflow!.detectorMask()!,
      image: window.__stemflow!.virtualImage()!,
    }));
    await page.waitForFunction(
      (mask) => {
        const s = window.__stemflowSeries!;
        const q = s.queriedMask();
        return !s.state().busy && q !== null && q.length === mask.length && q.every((v, i) => v === mask[i]);
      },
      main.mask,
      { timeout: 120_000 },
    );
    expect(await page.evaluate(() => window.__stemflowSeries!.images())).toEqual([main.image, main.image]);
    return main;
  };
  const bf = await agree();
  expect(bf.image.some((v) => v > 0)).toBe(true);

  // ADF by keyboard, then its outer radius dragged inwards on the detector panel (left free by the docked
  // series panel): the series follows every change.
  await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
  await page.keyboard.press('d');
  const adf = await agree();
  expect(adf.mask).not.toEqual(bf.mask);
  const region = (await page.evaluate(() => window.__stemflow!.state().region)) as {
    cx: number;
    cy: number;
    outer: number;
  };
  const from = await overlayPosition(
    page,
    'detector-canvas',
    region.cx + region.outer - 0.5,
    region.cy - 0.5,
  );
  const to = await overlayPosition(page, 'detector-canvas', region.cx + region.outer - 8.5, region.cy - 0.5);
  await page.mouse.move(from.pageX, from.pageY);
  await page.mouse.down();
  for (let k = 1; k <= 8; k++)
    await page.mouse.move(from.pageX + ((to.pageX - from.pageX) * k) / 8, from.pageY, { steps: 1 });
  await page.mouse.up();
  const dragged = await agree();
  expect(dragged.mask).not.toEqual(adf.mask);

  // Back to the series' own controls: the shape controls apply again.
  await page.getByRole('radio', { name: 'these controls' }).check();
  await expect(page.getByTestId('series-panel')).not.toHaveClass(/docked/);
});

test('an archive folder chosen with the main Open folder opens in the series panel', async ({ page }) => {
  await page.goto('/?demo=0');
  await page.getByTestId('folder-input').setInputFiles(archive);
  await page.waitForFunction(
    () => ['ready', 'error'].includes(window.__stemflowSeries?.state().phase ?? ''),
    undefined,
    { timeout: 120_000 },
  );
  expect(await page.evaluate(() => window.__stemflowSeries!.state().error)).toBeNull();
  await expect(page.getByTestId('series-panel')).toBeVisible();
  await expect(page.getByTestId('series-summary')).toContainText('2 acquisitions');
  // The main view opened nothing and reports nothing.
  expect(await page.evaluate(() => window.__stemflow!.state().error)).toBeNull();
  expect(await page.evaluate(() => window.__stemflow!.summary())).toBeNull();
});

test('a damaged archive is refused before anything loads, naming the file (every file checked in the hash threads)', async ({
  page,
}) => {
  const damaged = join(mkdtempSync(join(tmpdir(), 'stemflow-e2e-damaged-')), 'archive');
  cpSync(archive, damaged, { recursive: true });
  const shard = readdirSync(join(damaged, 'acq0001')).sort()[0];
  const path = join(damaged, 'acq0001', shard);
  const bytes = readFileSync(path);
  bytes[bytes.length - 5] ^= 0x10;
  writeFileSync(path, bytes);
  await page.goto('/?demo=0');
  await page.getByTestId('series-toggle').click();
  await page.getByTestId('series-folder-input').setInputFiles(damaged);
  await page.waitForFunction(() => window.__stemflowSeries?.state().phase === 'error', undefined, {
    timeout: 120_000,
  });
  await expect(page.getByTestId('series-error')).toContainText(
    `acq0001/${shard} does not match its SHA-256 in the manifest`,
  );
  // The intact archive opens afterwards.
  await page.getByTestId('series-folder-input').setInputFiles(archive);
  await page.waitForFunction(() => window.__stemflowSeries?.state().phase === 'ready', undefined, {
    timeout: 120_000,
  });
});

test('without the File System Access API, Verify takes the archive folder from a folder input and compares every count', async ({
  page,
}) => {
  await page.goto('/?demo=0');
  await page.getByTestId('archive-toggle').click();
  await expect(page.getByTestId('archive-convert')).toHaveCount(0);
  // The archive holds the ARINA files twice: two sets of sources, in order.
  await page.getByTestId('archive-file-input').setInputFiles(ARINA_FILES);
  await page.getByTestId('archive-file-input').setInputFiles(ARINA_FILES);
  await page.getByTestId('archive-verify-folder-input').setInputFiles(archive);
  await expect(page.getByTestId('archive-verified')).toHaveAttribute('data-ok', 'yes', { timeout: 120_000 });
  await expect(page.getByTestId('archive-verified')).toContainText('Verified: every count is identical.');
  await expect(page.getByTestId('archive-verified')).toContainText('552,960 values compared, 0 mismatches');
});
