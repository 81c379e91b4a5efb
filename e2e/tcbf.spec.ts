import { expect, test } from '@playwright/test';
import { waitSettled } from './helpers';

test('tcBF panel: fits the demo acquisition on WebGPU and shows coefficients, residuals and images', async ({
  page,
}) => {
  await page.goto('/');
  const state = await waitSettled(page, 'demo');
  expect(state.phase).toBe('ready');
  await page.getByTestId('tcbf-toggle').click();
  await page.getByTestId('tcbf-run').click();
  await page.waitForFunction(
    () => {
      const s = window.__stemflowTcbf?.state();
      return s && (s.phase === 'done' || s.phase === 'error');
    },
    undefined,
    { timeout: 240_000 },
  );
  const s = await page.evaluate(() => window.__stemflowTcbf!.state());
  expect(s.error).toBeNull();
  expect(s.phase).toBe('done');
  expect(Number.isFinite(s.rotationDeg)).toBe(true);
  expect(Number.isFinite(s.c10)).toBe(true);
  await expect(page.getByTestId('tcbf-result')).toContainText('bright-field pixels');
  await expect(page.getByTestId('tcbf-result')).toContainText('defocus');
  await expect(page.getByRole('img', { name: 'Residual shift vectors' })).toBeVisible();
});
