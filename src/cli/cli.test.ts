import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { decodeNpy } from '../io/npy';
import { fixture, loadOracle, ROOT } from '../testing/fixtures';

const run = promisify(execFile);
const BIN = join(ROOT, 'bin', 'stemflow.mjs');
const arina = loadOracle().acquisitions.arina;
const files = [arina.master, ...arina.shards].map(fixture);

async function stemflow(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run('node', [BIN, ...args], { cwd: ROOT });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const x = e as { code: number; stdout: string; stderr: string };
    return { code: x.code, stdout: x.stdout, stderr: x.stderr };
  }
}

describe('the stemflow CLI (same engine as the app)', () => {
  it('decode --hash prints the SHA-256 h5py computed for the whole acquisition', async () => {
    const r = await stemflow('decode', ...files, '--hash');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${arina.sha256}  60 frames 6x10 x 96x96 uint16\n`);
  }, 60_000);

  it('decode --frame N --out writes the exact frame as .npy', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'cli-')), 'f.npy');
    const r = await stemflow('decode', ...files, '--frame', '24', '--out', out);
    expect(r.code).toBe(0);
    const { data, shape } = decodeNpy(readFileSync(out));
    expect(shape).toEqual([96, 96]);
    expect(data[47 * 96 + 47]).toBe(65535);
    expect((data as Uint16Array).reduce((a, b) => a + b, 0)).toBe(arina.frame_sums[24]);
  }, 60_000);

  it('inspect --json lists datasets, chunk index kinds, first chunk offsets and external links', async () => {
    const r = await stemflow('inspect', ...files, '--json');
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout);
    const master = report.files.find((f: { name: string }) => f.name === arina.master);
    expect(master.externalLinks.map((l: { file: string }) => l.file)).toEqual(arina.shards);
    const shard = report.files.find((f: { name: string }) => f.name === arina.shards[0]);
    const data = shard.datasets.find((d: { path: string }) => d.path === '/entry/data/data');
    expect(data.chunkIndex).toBe('btree-v1');
    const oracleChunks = loadOracle().files[arina.shards[0]].datasets['/entry/data/data'].chunk_info!;
    expect(data.firstChunks[0]).toEqual({
      index: 0,
      offset: oracleChunks[0][1],
      size: oracleChunks[0][2],
      filterMask: 0,
    });
    expect(report.acquisition.scan).toEqual([6, 10]);
  }, 60_000);

  it('a file that is not HDF5 ends in a sentence and exit code 1', async () => {
    const r = await stemflow('decode', join(ROOT, 'package.json'), '--hash');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /^stemflow: This is not an HDF5 file: no HDF5 signature was found \(file package.json\) \[corrupt\]/,
    );
  }, 60_000);

  it('convert and verify take one folder per acquisition, named after it', async () => {
    const root = mkdtempSync(join(tmpdir(), 'cli-folders-'));
    for (const run of ['run_a', 'run_b']) {
      mkdirSync(join(root, run));
      for (const f of files) copyFileSync(f, join(root, run, f.split('/').pop() as string));
    }
    writeFileSync(join(root, 'run_b', 'notes.txt'), 'not HDF5');
    const out = join(root, 'archive');
    const dirs = [join(root, 'run_a'), join(root, 'run_b')];
    const c = await stemflow('convert', ...dirs, '--out', out, '--backend', 'cpu', '--record', '16');
    expect(c.code, c.stderr).toBe(0);
    const manifest = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8'));
    expect(manifest.acquisitions.map((a: { name: string }) => a.name)).toEqual(['run_a', 'run_b']);
    // The source files' identity (hashed in worker threads while they were converted), checked here directly.
    const identity = (f: string) => {
      const bytes = readFileSync(f);
      const name = f.split('/').pop() as string;
      return { path: name, size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') };
    };
    const want = files.map(identity).sort((a, b) => a.path.localeCompare(b.path));
    for (const a of manifest.acquisitions) expect(a.sources).toEqual(want);
    const v = await stemflow('verify', out, ...dirs, '--backend', 'cpu');
    expect(v.code, v.stderr).toBe(0);
    expect(v.stdout).toMatch(/verified: every count is identical/);
    expect(v.stdout).toMatch(/run_a: compared 552960 values, 0 mismatches/);
    expect(v.stdout).toMatch(/run_b: compared 552960 values, 0 mismatches/);
    expect(v.stdout.match(/\(as recorded\)/g)?.length).toBe(2 * files.length);
  }, 120_000);

  it('convert: a source file that is missing ends in a sentence, exit code 1 and no archive', async () => {
    const root = mkdtempSync(join(tmpdir(), 'cli-missing-'));
    const out = join(root, 'archive');
    const c = await stemflow('convert', files[0], join(root, 'gone.h5'), '--out', out, '--backend', 'cpu');
    expect(c.code).toBe(1);
    expect(c.stderr).toMatch(/^stemflow: .*gone\.h5.*\[not-found\]/);
    expect(c.stderr).not.toMatch(/Unhandled|UnhandledPromiseRejection/);
    expect(readdirSync(root)).toEqual([]);
  }, 60_000);
});
