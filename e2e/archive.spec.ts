import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { expect, test } from '@playwright/test';
import { ARINA_FILES, readFixtureOracle } from './helpers';

// The folder picker is the origin-private file system here (Playwright cannot drive the native picker):
// the dialog's real code path runs, writing through FileSystemDirectoryHandle into OPFS.
test.beforeEach(async ({ page }) => {
  await page.addInitScript(() => {
    const w = window as unknown as {
      showDirectoryPicker: () => Promise<FileSystemDirectoryHandle>;
      __folder: string;
    };
    w.__folder = 'archive-e2e';
    w.showDirectoryPicker = async () =>
      (await navigator.storage.getDirectory()).getDirectoryHandle(w.__folder, { create: true });
  });
});

test('convert ARINA files into a lossless archive, verify every count, refuse to overwrite, detect a damaged shard', async ({
  page,
}) => {
  const oracle = readFixtureOracle('arina');
  await page.goto('/?demo=0');
  await page.getByTestId('archive-toggle').click();
  await page.getByTestId('archive-file-input').setInputFiles(ARINA_FILES);
  await expect(page.getByTestId('archive-sets')).toContainText('4 file(s)');

  await page.getByTestId('archive-convert').click();
  await expect(page.getByTestId('archive-converted')).toContainText('Wrote 1 acquisition(s)', {
    timeout: 120_000,
  });

  // The archive in OPFS: manifest, state and shards, with no partial files left.
  const listing = await page.evaluate(async () => {
    const root = await (await navigator.storage.getDirectory()).getDirectoryHandle('archive-e2e');
    const names: string[] = [];
    const walk = async (dir: FileSystemDirectoryHandle, prefix: string) => {
      for await (const [name, handle] of dir as unknown as AsyncIterable<[string, FileSystemHandle]>) {
        if (handle.kind === 'directory') await walk(handle as FileSystemDirectoryHandle, `${prefix}${name}/`);
        else names.push(`${prefix}${name}`);
      }
    };
    await walk(root, '');
    const manifest = JSON.parse(await (await (await root.getFileHandle('manifest.json')).getFile()).text());
    return { names: names.sort(), manifest };
  });
  expect(listing.names.some((n) => n.endsWith('.partial'))).toBe(false);
  expect(listing.names).toContain('manifest.json');
  expect(listing.names).toContain('state.npz');
  const acq = listing.manifest.acquisitions[0];
  expect(acq.scan[0] * acq.scan[1]).toBe(oracle.frames);
  expect(acq.detector).toEqual(oracle.detector);
  expect(acq.audit.max).toBe(oracle.max);
  expect(acq.audit.total).toBe(String(oracle.frame_sums.reduce((a, b) => a + b, 0)));
  expect(acq.sources.map((s: { path: string }) => s.path).sort()).toEqual(
    ARINA_FILES.map((f) => f.split('/').pop()).sort(),
  );
  // The sources' SHA-256 (computed in the page's hash threads) are the files' own.
  for (const f of ARINA_FILES) {
    const recorded = acq.sources.find((s: { path: string }) => s.path === f.split('/').pop());
    expect(recorded.sha256).toBe(createHash('sha256').update(readFileSync(f)).digest('hex'));
  }

  await page.getByTestId('archive-verify').click();
  const verified = page.getByTestId('archive-verified');
  await expect(verified).toHaveAttribute('data-ok', 'yes', { timeout: 120_000 });
  await expect(verified).toContainText(
    `${(oracle.frames * oracle.detector[0] * oracle.detector[1]).toLocaleString()} values compared, 0 mismatches, 0 damaged lanes`,
  );
  await expect(verified).toContainText('the source files are the ones recorded');

  // Never replaced.
  await page.getByTestId('archive-convert').click();
  await expect(page.getByTestId('archive-error')).toContainText('already holds an archive');

  // A changed byte in a shard: the checksum catches it before anything is compared.
  await page.evaluate(async () => {
    const root = await (await navigator.storage.getDirectory()).getDirectoryHandle('archive-e2e');
    const handle = await (await root.getDirectoryHandle('acq0000')).getFileHandle('rec-000000.tans');
    const bytes = new Uint8Array(await (await handle.getFile()).arrayBuffer());
    bytes[bytes.length - 1] ^= 0x10;
    const stream = await handle.createWritable();
    await stream.write(bytes);
    await stream.close();
  });
  await page.getByTestId('archive-verify').click();
  await expect(page.getByTestId('archive-error')).toContainText('rec-000000.tans does not match its SHA-256');
});
