import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { expect, type Page, test } from '@playwright/test';
import { ROOT, waitSettled } from './helpers';

/** The demo's h5py oracle: per-frame sums over unflagged pixels. */
const demoSums: number[] = JSON.parse(readFileSync(resolve(ROOT, 'public/demo/oracle.json'), 'utf8'))
  .acquisitions.demo.unflagged.frame_sums;

/** Opens the demo with the Demo button and checks the loaded values against h5py: the app is usable. */
async function demoIsExact(page: Page) {
  await page.getByTestId('open-demo').click();
  await page.waitForFunction(() => window.__stemflow!.state().phase !== 'ready');
  const s = await waitSettled(page, 'demo');
  expect(s.error).toBeNull();
  expect(await page.evaluate(() => window.__stemflow!.frameTotals())).toEqual(demoSums);
  const virtual = await page.evaluate(() => window.__stemflow!.virtualImage());
  expect(virtual).toHaveLength(demoSums.length);
}

const gpuMemory = (page: Page) => page.evaluate(() => window.__stemflow!.faults.gpuMemory());

async function start(page: Page) {
  test.setTimeout(600_000);
  await page.goto('/?demo=0');
  expect((await page.evaluate(() => window.__stemflow!.gpu())).kind).toBe('ok');
  await demoIsExact(page);
  expect((await page.evaluate(() => window.__stemflow!.backend()))?.backend).toBe('webgpu');
}

test('a worker that dies: a clear message, and a new worker takes the next open', async ({ page }) => {
  await start(page);
  await page.evaluate(() => window.__stemflow!.faults.stopWorker());
  await expect(page.getByTestId('error')).toContainText('The acquisition worker stopped');
  await expect(page.getByTestId('error')).toContainText('open the files again');
  expect(await page.evaluate(() => window.__stemflow!.summary())).toBeNull();
  await demoIsExact(page);
  expect((await gpuMemory(page)).buffers).toBeGreaterThan(0);
});

test('a GPU out of memory while allocating the load: buffers released, the CPU path takes it', async ({
  page,
}) => {
  await start(page);
  await page.evaluate(() => window.__stemflow!.faults.inject('gpu-out-of-memory'));
  await demoIsExact(page);
  const backend = await page.evaluate(() => window.__stemflow!.backend());
  expect(backend?.backend).toBe('cpu');
  expect(backend?.fallbackReason).toMatch(/The GPU ran out of memory allocating the load/);
  await expect(page.getByTestId('status')).toContainText('out of memory');
  // The previous acquisition's buffers went with it; the failed load left none behind.
  expect(await gpuMemory(page)).toEqual({ buffers: 0, bytes: 0 });
  await demoIsExact(page);
  expect((await page.evaluate(() => window.__stemflow!.backend()))?.backend).toBe('webgpu');
});

test('a GPU device lost in the middle of a load: the CPU path finishes it with the reason; then a new device', async ({
  page,
}) => {
  await start(page);
  await page.evaluate(() => window.__stemflow!.faults.inject('gpu-device-lost'));
  // The worker's device is destroyed after the load's second queue submission (src/workers/faults.ts).
  await demoIsExact(page);
  const backend = await page.evaluate(() => window.__stemflow!.backend());
  expect(backend?.backend).toBe('cpu');
  expect(backend?.fallbackReason).toMatch(/The GPU device was lost/);
  await expect(page.getByTestId('status')).toContainText('The GPU device was lost');
  // What the lost load allocated went with it; the app still answers on the CPU path.
  expect(await gpuMemory(page)).toEqual({ buffers: 0, bytes: 0 });
  expect(await page.evaluate(() => window.__stemflow!.virtualImage())).toHaveLength(demoSums.length);
  // The next load takes a new device: back on the GPU, the same h5py-checked values.
  await demoIsExact(page);
  expect((await page.evaluate(() => window.__stemflow!.backend()))?.backend).toBe('webgpu');
  expect((await gpuMemory(page)).buffers).toBeGreaterThan(0);
});

test('files whose reads fail: a typed message naming the file; the open acquisition stays', async ({
  page,
}) => {
  await start(page);
  const kept = await gpuMemory(page);
  await page.evaluate(() => window.__stemflow!.faults.inject('read-failure'));
  await page.getByTestId('open-demo').click();
  await expect(page.getByTestId('error')).toContainText('The browser could not read the file');
  await expect(page.getByTestId('error')).toContainText(/demo_(data_00000\d|master)\.h5/);
  expect(await gpuMemory(page)).toEqual(kept);
  expect(await page.evaluate(() => window.__stemflow!.frameTotals())).toEqual(demoSums);
  await page.evaluate(() => window.__stemflow!.faults.inject('none'));
  await demoIsExact(page);
});

test('admission: a load over the memory budget is refused before allocation, with the numbers', async ({
  page,
}) => {
  await start(page);
  const before = await gpuMemory(page);
  await page.getByTestId('budget-select').selectOption({ label: '16 MiB' });
  await page.getByTestId('open-demo').click();
  await expect(page.getByTestId('error')).toContainText('40.50 MiB of counts, more than the 16.00 MiB');
  await expect(page.getByTestId('error')).toContainText('the GPU path refused it too');
  expect((await gpuMemory(page)).buffers).toBeLessThanOrEqual(before.buffers);
  await page.getByTestId('budget-select').selectOption({ label: 'device limits' });
  await demoIsExact(page);
});
