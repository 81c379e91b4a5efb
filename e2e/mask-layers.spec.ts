import { expect, type Page, test } from '@playwright/test';
import { overlayPosition, waitReady } from './helpers';

/** Waits until the virtual image matches the current mask. */
async function settled(page: Page) {
  await page.evaluate(() => window.__stemflow!.virtualSettled());
  await page.waitForFunction(() => window.__stemflow!.state().virtualCurrent);
}

/** The virtual image and, per frame, the exact sum under the current mask over unflagged pixels (in the page). */
async function imageAndMaskedSums(page: Page) {
  return page.evaluate(async () => {
    const hook = window.__stemflow!;
    const n = hook.summary()!.frameCount;
    const flagged = hook.pixelMask()!;
    const mask = hook.detectorMask()!;
    const sums: number[] = [];
    for (let i = 0; i < n; i++) {
      const frame = await hook.frame(i);
      let m = 0;
      for (let p = 0; p < frame.length; p++) if (mask[p] && !flagged[p]) m += frame[p];
      sums.push(m);
    }
    return { sums, image: hook.virtualImage()!, mask };
  });
}

async function drag(page: Page, from: [number, number], to: [number, number], steps = 8) {
  const a = await overlayPosition(page, 'detector-canvas', from[0], from[1]);
  const b = await overlayPosition(page, 'detector-canvas', to[0], to[1]);
  await page.mouse.move(a.pageX, a.pageY);
  await page.mouse.down();
  for (let k = 1; k <= steps; k++)
    await page.mouse.move(
      a.pageX + ((b.pageX - a.pageX) * k) / steps,
      a.pageY + ((b.pageY - a.pageY) * k) / steps,
    );
  await page.mouse.up();
}

/** Brushes from one detector point to another, then waits until the stroke has reached the end point. */
async function brush(page: Page, from: [number, number], to: [number, number], steps = 8) {
  await drag(page, from, to, steps);
  // Pointer events may be handled after the CDP call returns: wait for the stroke to end where the drag did.
  await page.waitForFunction(([x, y]) => {
    const layers = window.__stemflow!.layers().layers as { kind: string; points?: number[][] }[];
    const last = layers[layers.length - 1]?.points?.at(-1);
    return !!last && Math.abs(last[0] - x) < 0.05 && Math.abs(last[1] - y) < 0.05;
  }, to);
}

test('combined detectors: a subtracted rectangle and brush strokes give exact virtual images', async ({
  page,
}) => {
  await page.goto('/');
  await waitReady(page, 'demo');
  await settled(page);
  const before = await imageAndMaskedSums(page);
  expect(before.image).toEqual(before.sums);
  const primary = (await page.evaluate(() => window.__stemflow!.state().region)) as {
    cx: number;
    cy: number;
  };

  // A rectangle, switched to subtract: a hole in the BF disk.
  await page.getByTestId('add-rect').click();
  await page.getByTestId('layer-0-op').click();
  await settled(page);
  let layers = await page.evaluate(() => window.__stemflow!.layers());
  expect(layers.selected).toBe(0);
  expect(layers.layers[0]).toMatchObject({ kind: 'shape', op: 'subtract', region: { kind: 'rect' } });
  await expect(page.getByTestId('mask-w')).toBeVisible();
  await page.getByTestId('mask-w').fill('3');
  await page.getByTestId('mask-w').press('Enter');
  await page.getByTestId('mask-h').fill('2');
  await page.getByTestId('mask-h').press('Enter');
  await settled(page);
  let now = await imageAndMaskedSums(page);
  expect(now.image).toEqual(now.sums);
  // The hole: 3 x 3 pixel centres when the centre is on a pixel centre (w 3 reaches +-1, h 2 reaches +-1).
  const removed = before.mask.reduce((n, v, i) => n + (v && !now.mask[i] ? 1 : 0), 0);
  const onCentre = Number.isInteger(primary.cx) && Number.isInteger(primary.cy);
  if (onCentre) expect(removed).toBe(9);
  else expect(removed).toBeGreaterThan(0);

  // Paint a stroke outside the disk, then erase part of it.
  await page.getByTestId('tool-paint').click();
  await page.getByTestId('brush-radius').fill('1.5');
  await page.getByTestId('brush-radius').press('Enter');
  await page.getByTestId('brush-radius').blur();
  await brush(page, [4, 4], [20, 4]);
  await settled(page);
  layers = await page.evaluate(() => window.__stemflow!.layers());
  expect(layers.layers).toHaveLength(2);
  expect(layers.layers[1]).toMatchObject({ kind: 'stroke', op: 'add', radius: 1.5 });
  now = await imageAndMaskedSums(page);
  expect(now.image).toEqual(now.sums);
  // Every pixel on the row under the stroke, from its start to its end, is covered (no gaps).
  const cols = (await page.evaluate(() => window.__stemflow!.summary()!.detector[1])) as number;
  for (let col = 6; col <= 18; col++) expect(now.mask[4 * cols + col], `col ${col}`).toBe(1);

  await page.keyboard.press('e');
  expect(await page.evaluate(() => window.__stemflow!.view().detectorTool)).toBe('erase');
  await brush(page, [12, 2], [12, 7], 4);
  await settled(page);
  layers = await page.evaluate(() => window.__stemflow!.layers());
  expect(layers.layers.map((l) => (l as { op: string }).op)).toEqual(['subtract', 'add', 'subtract']);
  now = await imageAndMaskedSums(page);
  expect(now.image).toEqual(now.sums);
  expect(now.mask[4 * cols + 12]).toBe(0);
  expect(now.mask[4 * cols + 6]).toBe(1);

  // Presets in mrad from the convergence semi-angle (the demo's master gives pixel size and camera length).
  const cal = await page.evaluate(() => window.__stemflow!.summary()!.calibration);
  const mradPerPx = (cal.detectorPixelSize![0] / cal.detectorDistance!) * 1000;
  await page.getByTestId('mrad-alpha').fill('5');
  await page.getByTestId('mrad-alpha').press('Enter');
  await page.getByTestId('mrad-apply').click();
  await settled(page);
  const bf = (await page.evaluate(() => window.__stemflow!.state().region)) as { r: number };
  expect(bf.r).toBe(Math.round((5 / mradPerPx) * 256) / 256);
  now = await imageAndMaskedSums(page);
  expect(now.image).toEqual(now.sums);
  await page.getByTestId('mrad-alpha').blur();

  // Shift+B restores the preset: layers gone, image back to the first one.
  await page.keyboard.press('v');
  await page.keyboard.press('Shift+B');
  await settled(page);
  now = await imageAndMaskedSums(page);
  expect(now.image).toEqual(before.image);
  expect((await page.evaluate(() => window.__stemflow!.layers())).layers).toEqual([]);
});
