import { readFileSync } from 'node:fs';
import { expect, test } from '@playwright/test';
import { ARINA_FILES, clickScanPixel, dropFiles, waitReady } from './helpers';

test('a dropped non-HDF5 file shows a clear error and the demo stays usable', async ({ page }) => {
  await page.goto('/?backend=cpu'); // the GPU path has its own tests; this one is about the drop
  await waitReady(page, 'demo');
  const before = await page.evaluate(() => window.__stemflow!.virtualImage());

  await dropFiles(page, [
    { name: 'notes.txt', bytes: Buffer.from('beam current 50 pA, 300 kV\n'.repeat(40)) },
  ]);
  const alert = page.getByRole('alert');
  await expect(alert).toBeVisible();
  await expect(alert).toContainText('Could not open notes.txt');
  const message = (await alert.locator('span').first().textContent()) ?? '';
  expect(message).not.toMatch(/undefined|\[object |at \w+ \(/);
  console.log(`error shown: ${message}`);

  // The previous acquisition is still displayed and the worker still serves it.
  const after = await page.evaluate(() => ({
    state: window.__stemflow!.state(),
    summary: window.__stemflow!.summary(),
    image: window.__stemflow!.virtualImage(),
  }));
  expect(after.state.phase).toBe('ready');
  expect(after.summary?.name).toBe('demo');
  expect(after.summary?.scan).toEqual([48, 48]);
  expect(after.image).toEqual(before);
  await expect(page.getByTestId('virtual-canvas')).toBeVisible();
  await clickScanPixel(page, 5, 7, 48, 48);
  await page.waitForFunction(() => window.__stemflow!.state().frameIndex === 5 * 48 + 7);
  const frame = await page.evaluate(() => window.__stemflow!.shownFrame()!);
  expect(frame.values).toEqual(await page.evaluate(() => window.__stemflow!.frame(5 * 48 + 7)));

  // The error can be dismissed; a truncated HDF5 file chosen with the input fails the same way.
  await alert.getByRole('button', { name: 'Dismiss' }).click();
  await expect(page.getByRole('alert')).toHaveCount(0);
  await page.getByTestId('file-input').setInputFiles([
    {
      name: 'arina_master.h5',
      mimeType: 'application/x-hdf5',
      buffer: readFileSync(ARINA_FILES[0]).subarray(0, 700),
    },
  ]);
  await expect(page.getByRole('alert')).toContainText('Could not open arina_master.h5');
  expect(await page.evaluate(() => window.__stemflow!.summary()?.name)).toBe('demo');
  expect(await page.evaluate(() => window.__stemflow!.state().phase)).toBe('ready');
});
