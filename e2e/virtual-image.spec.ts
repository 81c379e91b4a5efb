import { expect, test } from '@playwright/test';
import type { OracleAcquisition } from './helpers';
import { clickScanPixel, hoverPixel, sumAllFrames, waitReady } from './helpers';

test('the virtual images and frame totals are exact (demo vs its oracle)', async ({ page }) => {
  await page.goto('/');
  await waitReady(page, 'demo');
  const oracle: OracleAcquisition = await page.evaluate(async () => {
    const response = await fetch(`${location.origin}/demo/oracle.json`);
    return (await response.json()).acquisitions.demo;
  });
  const [rows, cols] = oracle.scan;
  const centre = 24 * cols + 24;

  // BF at the scan centre, from the frame the detector panel shows: the masked sum of its unflagged pixels.
  const centreCheck = await page.evaluate((index) => {
    const hook = window.__stemflow!;
    const frame = hook.shownFrame()!;
    const mask = hook.detectorMask()!;
    const flagged = hook.pixelMask()!;
    let bf = 0;
    let covered = 0;
    for (let p = 0; p < frame.values.length; p++) {
      if (!mask[p] || flagged[p]) continue;
      bf += frame.values[p];
      covered++;
    }
    return { index: frame.index, bf, covered, image: hook.virtualImage()![index] };
  }, centre);
  expect(centreCheck.index).toBe(centre);
  expect(centreCheck.covered).toBeGreaterThan(50);
  expect(centreCheck.image).toBe(centreCheck.bf);

  // Every frame: totals against the oracle, and the whole BF image against sums made here.
  const sums = await sumAllFrames(page);
  expect(sums.all).toEqual(oracle.frame_sums);
  expect(sums.unflagged).toEqual(oracle.unflagged.frame_sums);
  const loaded = await page.evaluate(() => ({
    totals: window.__stemflow!.frameTotals(),
    sum: window.__stemflow!.sumDiffraction(),
    flagged: window.__stemflow!.pixelMask(),
    audit: window.__stemflow!.audit(),
    bf: window.__stemflow!.virtualImage(),
  }));
  expect(loaded.totals).toEqual(oracle.unflagged.frame_sums);
  expect(loaded.bf).toEqual(sums.masked);
  expect(loaded.flagged!.flatMap((v, i) => (v ? [i] : []))).toEqual(oracle.pixel_mask.flagged_indices);
  expect(loaded.audit).toMatchObject({
    maxCount: oracle.unflagged.max,
    countAbove255: oracle.unflagged.count_gt_255,
  });
  const total = oracle.unflagged.frame_sums.reduce((a, b) => a + b, 0);
  expect(loaded.sum!.reduce((a, b) => a + b, 0)).toBe(total);

  // ADF: same check after switching the detector.
  await page.getByTestId('mode-adf').click();
  await expect(page.getByTestId('mode-adf')).toHaveAttribute('aria-pressed', 'true');
  await page.waitForFunction(() => window.__stemflow!.virtualImage() !== null);
  const adf = await sumAllFrames(page);
  expect(await page.evaluate(() => window.__stemflow!.virtualImage())).toEqual(adf.masked);
  expect(adf.masked.some((v, i) => v !== sums.masked[i])).toBe(true);

  // Picking a scan position shows its frame; the readouts show exact values.
  await clickScanPixel(page, 10, 30, rows, cols);
  await page.waitForFunction(() => window.__stemflow!.state().frameIndex === 10 * 48 + 30);
  expect(await page.evaluate(() => window.__stemflow!.state().picked)).toEqual({ row: 10, col: 30 });
  await expect(page.getByTestId('virtual-readout')).toContainText('row 10, col 30');
  await expect(page.getByTestId('virtual-value')).toHaveText(String(adf.masked[10 * cols + 30]));
  await expect(page.getByTestId('detector-title')).toContainText(`frame ${10 * cols + 30}`);
  const frame = await page.evaluate(() => window.__stemflow!.frame(10 * 48 + 30));
  await hoverPixel(page, 'detector-canvas-overlay', 40, 50, 96, 96);
  await expect(page.getByTestId('detector-readout')).toContainText('row 40, col 50');
  await expect(page.getByTestId('detector-value')).toHaveText(String(frame[40 * 96 + 50]));

  // Centre of mass (DPC) inside the ADF detector at the picked position, against the frame computed in the page.
  await page.getByTestId('signal-comX').click();
  await expect(page.getByTestId('virtual-readout')).toContainText('px from the detector centre');
  const expectedCom = await page.evaluate(async () => {
    const hook = window.__stemflow!;
    const mask = hook.imageMask()!;
    const region = hook.state().region!;
    const values = await hook.frame(10 * 48 + 30);
    const pixelMask = hook.pixelMask();
    let total = 0;
    let sx = 0;
    for (let p = 0; p < values.length; p++) {
      if (!mask[p] || pixelMask?.[p]) continue;
      total += values[p];
      sx += (p % 96) * values[p];
    }
    return (sx / total - region.cx).toFixed(4);
  });
  await page.mouse.move(0, 0);
  await expect(page.getByTestId('virtual-value')).toHaveText(expectedCom);
  // iDPC: the integrated field is shown (finite values, mean zero), then back to the sum.
  await page.getByTestId('signal-idpc').click();
  await expect(page.getByTestId('virtual-readout')).toContainText('iDPC');
  await expect(page.getByTestId('virtual-value')).toHaveText(/^-?\d+\.\d{4}$/);
  await page.getByTestId('signal-sum').click();

  // The summed pattern, with exact values under the cursor.
  await page.getByTestId('view-sum').click();
  await expect(page.getByTestId('detector-title')).toHaveText('sum of 2304 frames');
  await hoverPixel(page, 'detector-canvas-overlay', 48, 47, 96, 96);
  await expect(page.getByTestId('detector-value')).toHaveText(String(loaded.sum![48 * 96 + 47]));
});
