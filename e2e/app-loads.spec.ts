import { expect, test } from '@playwright/test';
import { ARINA_FILES, waitReady } from './helpers';

test('shows the no-data state when started without the demo', async ({ page }) => {
  await page.goto('/?demo=0');
  await expect(page.getByTestId('status')).toHaveAttribute('data-phase', 'idle');
  await expect(page.getByTestId('status')).toContainText('No data');
  await expect(page.getByText('No acquisition open')).toBeVisible();
  await expect(page.getByText('No data', { exact: true })).toHaveCount(2);
});

test('without WebGPU a notice names the browsers that work, and files still open', async ({ page }) => {
  await page.addInitScript(() => {
    // As in a browser without WebGPU: no navigator.gpu at all.
    delete (Navigator.prototype as { gpu?: unknown }).gpu;
  });
  await page.goto('/?demo=0');
  const notice = page.getByTestId('gpu-notice');
  await expect(notice).toBeVisible();
  await expect(notice).toContainText('Chrome or Edge 113+');
  await expect(notice).toContainText('Safari 26+ on Apple Silicon');
  await expect(notice).toContainText('Firefox 141+ on Windows');
  await page.getByTestId('file-input').setInputFiles(ARINA_FILES);
  await waitReady(page, 'arina');
  expect(await page.evaluate(() => window.__stemflow!.virtualImage()?.length)).toBe(60);
  await expect(page.getByTestId('backend')).toHaveText(/^CPU/);
  await notice.getByRole('button', { name: 'Dismiss' }).click();
  await expect(notice).toHaveCount(0);
});

test('opens the demo acquisition and renders both panels; WebGPU has an adapter', async ({ page }) => {
  await page.goto('/');
  await waitReady(page, 'demo');
  const summary = await page.evaluate(() => window.__stemflow!.summary()!);
  expect(summary.kind).toBe('arina-master');
  expect(summary.scan).toEqual([48, 48]);
  expect(summary.detector).toEqual([96, 96]);
  expect(summary.dtype).toBe('uint16');
  expect(summary.frameCount).toBe(2304);
  expect(summary.flaggedPixels).toBe(7);
  expect(summary.files.map((f) => f.name)).toEqual(['demo_data_000001.h5', 'demo_data_000002.h5']);

  // The top bar and status line say the same.
  await expect(page.getByTestId('scan-select')).toHaveValue('48x48');
  await expect(page.getByTestId('chip-detector')).toHaveText('detector 96×96');
  await expect(page.getByTestId('chip-dtype')).toHaveText('dtype uint16');
  await expect(page.getByTestId('chip-flagged-pixels')).toHaveText('flagged pixels 7');
  await expect(page.getByTestId('progress')).toHaveText('2304 / 2304 frames');
  await expect(page.getByTestId('elapsed')).toContainText('ms total');
  // The demo went through the GPU pass graph (decode, audit, detector-major transpose) in this chromium.
  await expect(page.getByTestId('backend')).toContainText('WebGPU');
  // uint16 as a low byte plane and the high bytes of hot segments in slot pools (1/16 of the pairs to start).
  await expect(page.getByTestId('backend')).toContainText(
    'resident 21.6 MiB = low plane 20.3 MiB + high bytes in slot pools 1.3 MiB (576 slots of 2304 positions;',
  );
  await expect(page.getByTestId('backend')).toContainText('the low plane in 1 buffer(s)');

  // Both canvases hold images at native resolution, with real contrast.
  const stats = await page.evaluate(() =>
    ['virtual-canvas', 'detector-canvas'].map((id) => {
      const canvas = document.querySelector<HTMLCanvasElement>(`[data-testid=${id}]`)!;
      const pixels = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height).data;
      const levels = new Set<number>();
      for (let i = 0; i < pixels.length; i += 4)
        levels.add((pixels[i] << 16) | (pixels[i + 1] << 8) | pixels[i + 2]);
      return { width: canvas.width, height: canvas.height, colours: levels.size };
    }),
  );
  expect(stats[0]).toMatchObject({ width: 48, height: 48 });
  expect(stats[1]).toMatchObject({ width: 96, height: 96 });
  expect(stats[0].colours).toBeGreaterThan(20);
  expect(stats[1].colours).toBeGreaterThan(5);
  const state = await page.evaluate(() => window.__stemflow!.state());
  expect(state.picked).toEqual({ row: 24, col: 24 });
  expect(state.frameIndex).toBe(24 * 48 + 24);
  expect(state.detectorMode).toBe('bf');
  console.log(`demo: open + load + first images in ${Math.round(state.elapsedMs ?? -1)} ms`);

  // WebGPU in this chromium (SwiftShader on a GPU-less machine): navigator.gpu and an adapter.
  const gpu = await page.evaluate(async () => {
    if (!navigator.gpu) return { available: false as const };
    const adapter = await navigator.gpu.requestAdapter();
    if (!adapter) return { available: true as const, adapter: null };
    const { vendor, architecture, device, description } = adapter.info;
    return {
      available: true as const,
      adapter: {
        vendor,
        architecture,
        device,
        description,
        isFallbackAdapter: adapter.info.isFallbackAdapter,
      },
    };
  });
  expect(gpu.available, 'navigator.gpu exists').toBe(true);
  expect(gpu.available && gpu.adapter, 'an adapter was offered').toBeTruthy();
  const described = JSON.stringify(gpu.available ? gpu.adapter : null);
  test.info().annotations.push({ type: 'webgpu-adapter', description: described });
  console.log(`WebGPU adapter: ${described}`);
  await expect(page.getByTestId('gpu-notice')).toHaveCount(0);
});

test('the Series, tcBF and Archive panels close with their close button and with Escape', async ({
  page,
}) => {
  await page.goto('/?demo=0');
  for (const [toggle, panel, name] of [
    ['series-toggle', 'series-panel', 'Close the series panel'],
    ['tcbf-toggle', 'tcbf-panel', 'Close the tcBF panel'],
    ['archive-toggle', 'archive-dialog', 'Close the archive panel'],
  ]) {
    await page.getByTestId(toggle).click();
    await expect(page.getByTestId(toggle)).toHaveAttribute('aria-expanded', 'true');
    await page.getByRole('button', { name }).click();
    await expect(page.getByTestId(panel)).toBeHidden();
    await page.getByTestId(toggle).click();
    await page.getByRole('button', { name }).focus();
    await page.keyboard.press('Escape');
    await expect(page.getByTestId(panel)).toBeHidden();
    await expect(page.getByTestId(toggle)).toHaveAttribute('aria-expanded', 'false');
  }
});
