import { readFileSync } from 'node:fs';
import { expect, type Page, test } from '@playwright/test';
import { decodeNpy } from '../src/io/npy';
import { hoverPixel, overlayPosition, sumAllFrames, waitReady } from './helpers';

type Region =
  | { kind: 'disk'; cx: number; cy: number; r: number }
  | {
      kind: 'annulus';
      cx: number;
      cy: number;
      inner: number;
      outer: number;
    };

const state = (page: Page) => page.evaluate(() => window.__stemflow!.state());

async function settled(page: Page) {
  await page.evaluate(() => window.__stemflow!.virtualSettled());
  await page.waitForFunction(() => window.__stemflow!.state().virtualCurrent);
  return state(page);
}

/** Sums every `step`-th frame under the current mask (unflagged pixels) in the page, for a quick check. */
async function maskedSums(page: Page, step: number) {
  return page.evaluate(async (every) => {
    const hook = window.__stemflow!;
    const n = hook.summary()!.frameCount;
    const flagged = hook.pixelMask()!;
    const mask = hook.detectorMask()!;
    const out: [number, number][] = [];
    for (let i = 0; i < n; i += every) {
      const frame = await hook.frame(i);
      let m = 0;
      for (let p = 0; p < frame.length; p++) if (mask[p] && !flagged[p]) m += frame[p];
      out.push([i, m]);
    }
    return { sums: out, image: hook.virtualImage()! };
  }, step);
}

async function downloadOf(page: Page, testId: string) {
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId(testId).click()]);
  return { name: download.suggestedFilename(), bytes: readFileSync((await download.path())!) };
}

test('dragging and typing detector masks updates the virtual image exactly; exports re-read', async ({
  page,
}) => {
  await page.goto('/');
  await waitReady(page, 'demo');

  // ADF by keyboard, then drag its outer-radius handle inwards in several steps.
  await page.keyboard.press('d');
  let s = await settled(page);
  expect(s.detectorMode).toBe('adf');
  const start = s.region as Region & { kind: 'annulus' };
  expect(start.kind).toBe('annulus');
  const from = await overlayPosition(page, 'detector-canvas', start.cx + start.outer - 0.5, start.cy - 0.5);
  const to = await overlayPosition(page, 'detector-canvas', start.cx + start.outer - 6.5, start.cy - 0.5);
  await page.mouse.move(from.pageX, from.pageY);
  await page.mouse.down();
  for (let k = 1; k <= 12; k++)
    await page.mouse.move(from.pageX + ((to.pageX - from.pageX) * k) / 12, from.pageY, { steps: 1 });
  await page.mouse.up();
  s = await settled(page);
  const dragged = s.region as Region & { kind: 'annulus' };
  expect(dragged.cx).toBe(start.cx);
  expect(dragged.inner).toBe(start.inner);
  expect(Math.abs(dragged.outer - (start.outer - 6))).toBeLessThanOrEqual(0.5);
  expect(dragged.outer * 8).toBe(Math.round(dragged.outer * 8)); // drags snap to 1/8 pixel
  await expect(page.getByTestId('mask-outer')).toHaveValue(String(dragged.outer));

  // The image is the exact masked sum of every frame, and the mask follows the coverage rule.
  const check = await page.evaluate(() => ({
    mask: window.__stemflow!.detectorMask()!,
    imageMask: window.__stemflow!.imageMask()!,
  }));
  expect(check.imageMask).toEqual(check.mask);
  for (let row = 0; row < 96; row++) {
    for (let col = 0; col < 96; col++) {
      const d2 = (col - dragged.cx) ** 2 + (row - dragged.cy) ** 2;
      const inside = d2 <= dragged.outer ** 2 && d2 > dragged.inner ** 2;
      expect(check.mask[row * 96 + col], `pixel ${row},${col}`).toBe(inside ? 1 : 0);
    }
  }
  const all = await sumAllFrames(page);
  expect(await page.evaluate(() => window.__stemflow!.virtualImage())).toEqual(all.masked);

  // Drag the centre (inside the annulus) by (+2, +1) pixels.
  const c0 = await overlayPosition(
    page,
    'detector-canvas',
    dragged.cx,
    dragged.cy + (dragged.inner + dragged.outer) / 2,
  );
  const c1 = await overlayPosition(
    page,
    'detector-canvas',
    dragged.cx + 2,
    dragged.cy + 1 + (dragged.inner + dragged.outer) / 2,
  );
  await page.mouse.move(c0.pageX, c0.pageY);
  await page.mouse.down();
  await page.mouse.move(c1.pageX, c1.pageY, { steps: 6 });
  await page.mouse.up();
  s = await settled(page);
  const moved = s.region as Region & { kind: 'annulus' };
  expect(Math.abs(moved.cx - (dragged.cx + 2))).toBeLessThanOrEqual(0.25);
  expect(Math.abs(moved.cy - (dragged.cy + 1))).toBeLessThanOrEqual(0.25);
  expect(moved.outer).toBe(dragged.outer);

  // Numeric entry: the inner radius, exactly as typed (on the 1/256 grid).
  await page.getByTestId('mask-inner').fill('7.5');
  await page.getByTestId('mask-inner').press('Enter');
  await expect(page.getByTestId('mask-inner')).toHaveValue('7.5');
  s = await settled(page);
  expect((s.region as Region & { kind: 'annulus' }).inner).toBe(7.5);
  const typed = await maskedSums(page, 37);
  for (const [i, m] of typed.sums) expect(typed.image[i], `frame ${i}`).toBe(m);

  // Exports: NPY of the exact values, uint32 TIFF, JSON of the detector, PNG of what is shown.
  const npy = await downloadOf(page, 'export-npy');
  expect(npy.name).toBe('demo_adf.npy');
  const decoded = decodeNpy(new Uint8Array(npy.bytes));
  expect(decoded.shape).toEqual([48, 48]);
  expect(Array.from(decoded.data)).toEqual(typed.image);
  const tiff = await downloadOf(page, 'export-tiff-u32');
  expect(tiff.bytes.subarray(0, 4)).toEqual(Buffer.from([0x49, 0x49, 42, 0]));
  const json = JSON.parse((await downloadOf(page, 'export-json')).bytes.toString('utf8'));
  expect(json.detector.region).toEqual({ ...moved, inner: 7.5 });
  expect(json.detector.mode).toBe('adf');
  expect(json.acquisition.scan).toEqual([48, 48]);
  expect(json.image.sum).toBe(typed.image.reduce((a, b) => a + b, 0));
  const png = (await downloadOf(page, 'export-png')).bytes;
  expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
  expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([48, 48]);

  // Shift+D restores the ADF preset; B selects BF (its preset disk), whose image is exact too.
  await page.keyboard.press('Shift+D');
  s = await settled(page);
  expect(s.region).toEqual((s.geometry as { adf: Region }).adf);
  await page.keyboard.press('b');
  s = await settled(page);
  expect(s.detectorMode).toBe('bf');
  const bf = await maskedSums(page, 53);
  for (const [i, m] of bf.sums) expect(bf.image[i], `frame ${i}`).toBe(m);
});

test('keyboard, log, colormaps, zoom and pan keep readouts exact', async ({ page }) => {
  await page.goto('/');
  await waitReady(page, 'demo');
  expect((await state(page)).picked).toEqual({ row: 24, col: 24 });
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('Shift+ArrowUp');
  await page.waitForFunction(() => window.__stemflow!.state().frameIndex === 14 * 48 + 25);
  expect((await state(page)).picked).toEqual({ row: 14, col: 25 });
  await page.keyboard.press('l');
  expect((await page.evaluate(() => window.__stemflow!.view())).virtualScale).toBe('log');
  await page.getByLabel('Colormap').selectOption('magma');
  await page.getByLabel('Contrast').selectOption('2-98');
  expect(await page.evaluate(() => window.__stemflow!.view())).toMatchObject({
    colormap: 'magma',
    contrast: 'percentile',
    percentiles: [2, 98],
  });
  await expect(page.getByTestId('virtual-histogram')).toHaveAttribute('data-window', /,/);

  // Zoom in about pixel (30, 10) of the virtual image, pan, and read exact values under the cursor.
  const image = (await page.evaluate(() => window.__stemflow!.virtualImage()))!;
  const p = await overlayPosition(page, 'virtual-canvas', 10, 30);
  await page.mouse.move(p.pageX, p.pageY);
  for (let k = 0; k < 5; k++) await page.mouse.wheel(0, -200);
  await expect(page.getByTestId('virtual-canvas')).not.toHaveAttribute('data-zoom', '1');
  const zoom = Number(await page.getByTestId('virtual-canvas').getAttribute('data-zoom'));
  expect(zoom).toBeGreaterThan(2);
  await hoverPixel(page, 'virtual-canvas-overlay', 30, 10);
  await expect(page.getByTestId('virtual-readout')).toContainText('row 30, col 10');
  await expect(page.getByTestId('virtual-value')).toHaveText(String(image[30 * 48 + 10]));
  // Pan with Shift + drag: the image moves; readouts follow.
  const before = (await page.getByTestId('virtual-canvas').boundingBox())!;
  const q = await overlayPosition(page, 'virtual-canvas', 10, 30);
  await page.keyboard.down('Shift');
  await page.mouse.move(q.pageX, q.pageY);
  await page.mouse.down();
  await page.mouse.move(q.pageX + 40, q.pageY + 25, { steps: 4 });
  await page.mouse.up();
  await page.keyboard.up('Shift');
  const after = (await page.getByTestId('virtual-canvas').boundingBox())!;
  expect(after.x - before.x).toBeCloseTo(40, 0);
  expect(after.y - before.y).toBeCloseTo(25, 0);
  expect((await state(page)).picked).toEqual({ row: 14, col: 25 }); // a pan picks nothing
  await hoverPixel(page, 'virtual-canvas-overlay', 31, 12);
  await expect(page.getByTestId('virtual-value')).toHaveText(String(image[31 * 48 + 12]));
  // The detector zooms too; its readout stays exact.
  const frame = (await page.evaluate(() => window.__stemflow!.shownFrame()))!;
  const d = await overlayPosition(page, 'detector-canvas', 50, 40);
  await page.mouse.move(d.pageX, d.pageY);
  await page.mouse.wheel(0, -400);
  await hoverPixel(page, 'detector-canvas-overlay', 40, 50);
  await expect(page.getByTestId('detector-readout')).toContainText('row 40, col 50');
  await expect(page.getByTestId('detector-value')).toHaveText(String(frame.values[40 * 96 + 50]));
  // Double-click fits again.
  await page.getByTestId('virtual-canvas-overlay').dblclick({ position: { x: 5, y: 5 } });
  await expect(page.getByTestId('virtual-canvas')).toHaveAttribute('data-zoom', '1');
});
