import { expect, type Page, test } from '@playwright/test';
import { ARINA_FILES, clickScanPixel, overlayPosition, readFixtureOracle, waitReady } from './helpers';

/** SHA-256 (hex) of every frame read through the worker, as little-endian uint16 bytes: h5py's sha256. */
async function framesSha256(page: Page): Promise<string> {
  return page.evaluate(async () => {
    const hook = window.__stemflow!;
    const { frameCount, detector } = hook.summary()!;
    const pixels = detector[0] * detector[1];
    const all = new Uint16Array(frameCount * pixels);
    for (let i = 0; i < frameCount; i++) all.set(await hook.frame(i), i * pixels);
    const le = new Uint8Array(all.length * 2);
    const view = new DataView(le.buffer);
    for (let i = 0; i < all.length; i++) view.setUint16(2 * i, all[i], true);
    const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', le));
    return Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
  });
}

test('a picked frame and a region-summed pattern are the exact h5py values', async ({ page }) => {
  const oracle = readFixtureOracle('arina') as ReturnType<typeof readFixtureOracle> & { sha256: string };
  await page.goto('/?demo=0');
  await page.getByTestId('file-input').setInputFiles(ARINA_FILES);
  await waitReady(page, 'arina');
  const [rows, cols] = oracle.scan;

  // Every frame the worker gives is byte-identical to h5py's (the hash of all frames in scan order).
  expect(await framesSha256(page)).toBe(oracle.sha256);

  // Pick scan position (4, 7): the detector shows that frame, whose total is h5py's.
  await clickScanPixel(page, 4, 7);
  await page.waitForFunction(() => window.__stemflow!.shownFrame()?.index === 4 * 10 + 7);
  const shown = await page.evaluate(() => window.__stemflow!.shownFrame()!);
  expect(shown.values.reduce((a, b) => a + b, 0)).toBe(oracle.frame_sums[4 * cols + 7]);
  expect(shown.values).toEqual(await page.evaluate(() => window.__stemflow!.frame(47)));
  await expect(page.getByTestId('detector-title')).toContainText('frame 47 · scan row 4, col 7');

  // Drag a rectangle over scan rows 1..3, columns 2..6: the detector shows the exact sum of those frames.
  const a = await overlayPosition(page, 'virtual-canvas', 2, 1);
  const b = await overlayPosition(page, 'virtual-canvas', 6, 3);
  await page.mouse.move(a.pageX, a.pageY);
  await page.mouse.down();
  for (let k = 1; k <= 6; k++)
    await page.mouse.move(a.pageX + ((b.pageX - a.pageX) * k) / 6, a.pageY + ((b.pageY - a.pageY) * k) / 6);
  await page.mouse.up();
  const region = { row0: 1, row1: 3, col0: 2, col1: 6 };
  await page.waitForFunction(
    (r) => JSON.stringify(window.__stemflow!.regionPattern()?.region) === JSON.stringify(r),
    region,
  );
  const check = await page.evaluate(async (r) => {
    const hook = window.__stemflow!;
    const cols = hook.summary()!.scan[1];
    const pattern = hook.regionPattern()!.values;
    const expected = new Array(pattern.length).fill(0);
    for (let row = r.row0; row <= r.row1; row++)
      for (let col = r.col0; col <= r.col1; col++) {
        const frame = await hook.frame(row * cols + col);
        for (let p = 0; p < frame.length; p++) expected[p] += frame[p];
      }
    return { pattern, expected, view: hook.state().patternView };
  }, region);
  expect(check.view).toBe('region');
  expect(check.pattern).toEqual(check.expected);
  let total = 0;
  for (let row = 1; row <= 3; row++)
    for (let col = 2; col <= 6; col++) total += oracle.frame_sums[row * cols + col];
  expect(check.pattern.reduce((x, y) => x + y, 0)).toBe(total);
  await expect(page.getByTestId('detector-title')).toContainText(
    'sum of 15 frames · scan rows 1–3, cols 2–6',
  );
  expect(rows).toBe(6);

  // A click picks a single position again and the detector goes back to its frame.
  await clickScanPixel(page, 0, 0);
  await page.waitForFunction(() => window.__stemflow!.shownFrame()?.index === 0);
  expect(await page.evaluate(() => window.__stemflow!.state().patternView)).toBe('frame');

  // Scale bars: the detector has mrad from the master's calibration; the scan step typed by the user.
  await page.getByTestId('scan-step').fill('2.5');
  await page.getByTestId('scan-step').press('Enter');
  expect(await page.evaluate(() => window.__stemflow!.view().scanStepNm)).toBe(2.5);
});
