import { expect, test } from '@playwright/test';
import { ARINA_FILES, dropFiles, readFixtureOracle, sumAllFrames, waitReady } from './helpers';

async function expectArinaFixture(page: import('@playwright/test').Page) {
  const oracle = readFixtureOracle('arina');
  const summary = await page.evaluate(() => window.__stemflow!.summary()!);
  expect(summary.name).toBe('arina');
  expect(summary.kind).toBe('arina-master');
  expect(summary.scan).toEqual([6, 10]);
  expect(summary.detector).toEqual([96, 96]);
  expect(summary.dtype).toBe('uint16');
  expect(summary.frameCount).toBe(60);
  expect(summary.flaggedPixels).toBe(oracle.pixel_mask.flagged);
  await expect(page.getByTestId('scan-select')).toHaveValue('6x10');
  await expect(page.getByTestId('chip-scan')).toContainText('(guessed)');
  await expect(page.getByTestId('progress')).toHaveText('60 / 60 frames');
  expect(await page.evaluate(() => window.__stemflow!.frameTotals())).toEqual(oracle.unflagged.frame_sums);
  const sums = await sumAllFrames(page);
  expect(sums.all).toEqual(oracle.frame_sums);
  expect(await page.evaluate(() => window.__stemflow!.virtualImage())).toEqual(sums.masked);
  expect(await page.evaluate(() => window.__stemflow!.state().picked)).toEqual({ row: 3, col: 5 });
}

test('files dropped on the page are opened (ARINA fixture: master + 3 shards)', async ({ page }) => {
  await page.goto('/?demo=0');
  await dropFiles(
    page,
    ARINA_FILES.map((path) => ({ path })),
  );
  await waitReady(page, 'arina');
  await expectArinaFixture(page);
});

test('the scan shape is a guess the user can correct; the choice is remembered', async ({ page }) => {
  await page.goto('/?demo=0&backend=cpu');
  await page.getByTestId('file-input').setInputFiles(ARINA_FILES);
  await waitReady(page, 'arina');
  const image = await page.evaluate(() => window.__stemflow!.virtualImage());
  await page.getByTestId('scan-select').selectOption('10x6');
  await expect(page.getByTestId('chip-scan')).not.toContainText('(guessed)');
  const canvas = page.getByTestId('virtual-canvas');
  await expect.poll(() => canvas.evaluate((c: HTMLCanvasElement) => [c.width, c.height])).toEqual([6, 10]);
  // The same exact values, arranged as 10 rows of 6; the picked frame stays picked.
  expect(await page.evaluate(() => window.__stemflow!.virtualImage())).toEqual(image);
  expect(await page.evaluate(() => window.__stemflow!.summary()!.scan)).toEqual([10, 6]);
  expect(await page.evaluate(() => window.__stemflow!.state().picked)).toEqual({ row: 5, col: 5 });
  // Opening the same number of frames again uses the remembered shape.
  await page.getByTestId('file-input').setInputFiles(ARINA_FILES);
  await waitReady(page, 'arina');
  await expect(page.getByTestId('scan-select')).toHaveValue('10x6');
});

test('files chosen with the Open files input replace the demo', async ({ page }) => {
  await page.goto('/?backend=cpu'); // the GPU path has its own tests; this one is about opening files
  await waitReady(page, 'demo');
  await page.getByTestId('file-input').setInputFiles(ARINA_FILES);
  await waitReady(page, 'arina');
  await expectArinaFixture(page);
});
