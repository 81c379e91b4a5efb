import { readFileSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { expect, type Page } from '@playwright/test';
import type { StemflowTestHook } from '../src/ui/test-hook';

export const ROOT = resolve(import.meta.dirname, '..');
export const FIXTURES = resolve(ROOT, 'test/fixtures');
export const ARINA_FILES = [
  'arina_master.h5',
  'arina_data_000001.h5',
  'arina_data_000002.h5',
  'arina_data_000003.h5',
].map((name) => resolve(FIXTURES, name));

/** Loads can take a while on a 2-core CI machine without a GPU. */
export const LOAD_TIMEOUT = 150_000;

export interface OracleAcquisition {
  scan: [number, number];
  detector: [number, number];
  dtype: string;
  frames: number;
  /** Per-frame sums over every pixel (flagged ones included). */
  frame_sums: number[];
  max: number;
  pixel_mask: { flagged: number; flagged_indices: number[] };
  unflagged: { max: number; count_gt_255: number; frame_sums: number[] };
}

export function readFixtureOracle(name: string): OracleAcquisition {
  const oracle = JSON.parse(readFileSync(resolve(FIXTURES, 'oracle.json'), 'utf8'));
  return oracle.acquisitions[name];
}

/** Waits until the app has finished opening (ready or error) an acquisition whose name passes `name`. */
export async function waitSettled(page: Page, name?: string): Promise<ReturnType<StemflowTestHook['state']>> {
  await page.waitForFunction(
    (expected) => {
      const hook = window.__stemflow;
      if (!hook) return false;
      const s = hook.state();
      if (s.phase === 'error') return true;
      return s.phase === 'ready' && (expected === undefined || hook.summary()?.name === expected);
    },
    name,
    { timeout: LOAD_TIMEOUT, polling: 250 },
  );
  return page.evaluate(() => window.__stemflow!.state());
}

/** Waits for a successful load and fails with the app's own error message otherwise. */
export async function waitReady(page: Page, name?: string) {
  const state = await waitSettled(page, name);
  expect(state.error, 'the app reported an error').toBeNull();
  expect(state.phase).toBe('ready');
  return state;
}

/**
 * Drops files on the page the way a browser does: a DataTransfer holding File objects (built in the page
 * from bytes read here), dispatched as dragenter then drop on the app.
 */
export async function dropFiles(page: Page, files: { path?: string; name?: string; bytes?: Buffer }[]) {
  const payload = files.map((f) => ({
    name: f.name ?? basename(f.path!),
    base64: (f.bytes ?? readFileSync(f.path!)).toString('base64'),
  }));
  const dataTransfer = await page.evaluateHandle((items) => {
    const dt = new DataTransfer();
    for (const { name, base64 } of items) {
      const text = atob(base64);
      const bytes = new Uint8Array(text.length);
      for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
      dt.items.add(new File([bytes], name));
    }
    return dt;
  }, payload);
  await page.dispatchEvent('[data-testid=app]', 'dragenter', { dataTransfer });
  await expect(page.getByTestId('drop-overlay')).toBeVisible();
  await page.dispatchEvent('[data-testid=app]', 'drop', { dataTransfer });
  await expect(page.getByTestId('drop-overlay')).toBeHidden();
  await dataTransfer.dispose();
}

/**
 * Reads every frame through the hook (the worker's decoded counts) and sums it in the page: over all
 * pixels, over unflagged pixels, and under the current virtual detector mask (unflagged).
 */
export async function sumAllFrames(page: Page) {
  return page.evaluate(async () => {
    const hook = window.__stemflow!;
    const summary = hook.summary()!;
    const flagged = hook.pixelMask()!;
    const mask = hook.detectorMask()!;
    const all: number[] = [];
    const unflagged: number[] = [];
    const masked: number[] = [];
    for (let i = 0; i < summary.frameCount; i++) {
      const frame = await hook.frame(i);
      let a = 0;
      let u = 0;
      let m = 0;
      for (let p = 0; p < frame.length; p++) {
        a += frame[p];
        if (flagged[p]) continue;
        u += frame[p];
        if (mask[p]) m += frame[p];
      }
      all.push(a);
      unflagged.push(u);
      masked.push(m);
    }
    return { all, unflagged, masked };
  });
}

/**
 * Where the centre of image point (x = col, y = row) lies on a canvas's overlay, in the overlay's own
 * coordinates (the image canvas may be zoomed and panned inside the overlay, which covers the panel).
 */
export async function overlayPosition(page: Page, testId: string, x: number, y: number) {
  const image = (await page.getByTestId(testId).boundingBox())!;
  const overlay = (await page.getByTestId(`${testId}-overlay`).boundingBox())!;
  const rows = Number(await page.getByTestId(testId).getAttribute('data-rows'));
  const cols = Number(await page.getByTestId(testId).getAttribute('data-cols'));
  return {
    x: image.x - overlay.x + ((x + 0.5) * image.width) / cols,
    y: image.y - overlay.y + ((y + 0.5) * image.height) / rows,
    pageX: image.x + ((x + 0.5) * image.width) / cols,
    pageY: image.y + ((y + 0.5) * image.height) / rows,
  };
}

/** Clicks the centre of scan pixel (row, col) on the virtual image. */
export async function clickScanPixel(page: Page, row: number, col: number, _rows?: number, _cols?: number) {
  const p = await overlayPosition(page, 'virtual-canvas', col, row);
  await page.getByTestId('virtual-canvas-overlay').click({ position: { x: p.x, y: p.y } });
}

/** Moves the mouse over the centre of pixel (row, col) of a canvas (its overlay's test id, as before). */
export async function hoverPixel(
  page: Page,
  testId: string,
  row: number,
  col: number,
  _rows?: number,
  _cols?: number,
) {
  const canvas = testId.replace(/-overlay$/, '');
  const p = await overlayPosition(page, canvas, col, row);
  await page.getByTestId(`${canvas}-overlay`).hover({ position: { x: p.x, y: p.y } });
}
