import { copyFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { expect, test } from '@playwright/test';
import { ARINA_FILES, FIXTURES, readFixtureOracle, waitReady } from './helpers';

test('Open folder without the File System Access API falls back to <input webkitdirectory>', async ({
  page,
}) => {
  // A measurement folder: the ARINA master and shards, plus a note that is left out.
  const dir = mkdtempSync(join(tmpdir(), 'stemflow-folder-'));
  for (const path of ARINA_FILES) copyFileSync(path, join(dir, basename(path)));
  writeFileSync(join(dir, 'notes.txt'), 'beam current 20 pA');
  await page.addInitScript(() => {
    delete (window as { showDirectoryPicker?: unknown }).showDirectoryPicker;
  });
  await page.goto('/?demo=0');
  const [chooser] = await Promise.all([
    page.waitForEvent('filechooser'),
    page.getByTestId('open-folder').click(),
  ]);
  await chooser.setFiles(dir);
  await waitReady(page, 'arina');
  const oracle = readFixtureOracle('arina');
  expect(await page.evaluate(() => window.__stemflow!.frameTotals())).toEqual(oracle.unflagged.frame_sums);
  expect((await page.evaluate(() => window.__stemflow!.summary()!.files)).length).toBe(3);

  // A folder without HDF5 files: a clear message, and the open acquisition stays.
  const empty = mkdtempSync(join(tmpdir(), 'stemflow-empty-'));
  writeFileSync(join(empty, 'readme.txt'), 'nothing here');
  const [again] = await Promise.all([
    page.waitForEvent('filechooser'),
    page.getByTestId('open-folder').click(),
  ]);
  await again.setFiles(empty);
  await expect(page.getByTestId('error')).toContainText('holds no HDF5 files');
  expect(await page.evaluate(() => window.__stemflow!.summary()!.name)).toBe('arina');
});

test('a file holding several 3D datasets offers a dataset picker', async ({ page }) => {
  const oracle = JSON.parse((await import('node:fs')).readFileSync(join(FIXTURES, 'oracle.json'), 'utf8'))
    .files['gzip_u16_32.h5'].datasets;
  await page.goto('/?demo=0');
  await page.getByTestId('file-input').setInputFiles(join(FIXTURES, 'gzip_u16_32.h5'));
  await waitReady(page);
  const select = page.getByTestId('dataset-select');
  await expect(select.locator('option')).toHaveCount(2);
  const first = await select.inputValue();
  const other = first === '/gzip' ? '/gzip_shuffle' : '/gzip';
  expect(await page.evaluate(() => window.__stemflow!.frameTotals())).toEqual(oracle[first].frame_sums);
  await select.selectOption(other);
  await page.waitForFunction((path) => {
    const hook = window.__stemflow!;
    return hook.summary()?.files[0].dataset === path && hook.state().phase === 'ready';
  }, other);
  expect(await page.evaluate(() => window.__stemflow!.frameTotals())).toEqual(oracle[other].frame_sums);
  await expect(select).toHaveValue(other);
});
