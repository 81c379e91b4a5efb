/**
 * A short fixed-seed run of the fuzz targets that need no GPU (the full run is `npm run fuzz`, see
 * docs/robustness.md): every case must end without a crash or a disagreement. Hangs are caught by the test
 * timeout here; the full run has a per-case watchdog.
 */
import { describe, expect, it } from 'vitest';
import type { CaseReport, Finding } from './report.ts';
import { TARGETS } from './targets.ts';

const SEED = 20251129;

async function run(
  name: 'hdf5' | 'codec' | 'source' | 'archive',
  cases: number,
): Promise<{ findings: Finding[]; verdicts: Record<string, number> }> {
  const target = TARGETS[name];
  const state = await target.prepare();
  const findings: Finding[] = [];
  const verdicts: Record<string, number> = {};
  try {
    for (let i = 0; i < cases; i++) {
      const r: CaseReport = await target.run(state, SEED, i);
      findings.push(...r.findings);
      for (const [k, v] of Object.entries(r.verdicts)) verdicts[k] = (verdicts[k] ?? 0) + v;
    }
  } finally {
    await target.dispose?.(state);
  }
  return { findings, verdicts };
}

const summary = (f: Finding[]) => f.map((x) => `${x.kind} case ${x.index}: ${x.detail} (${x.mutation})`);

describe('fuzz smoke run (fixed seed)', () => {
  it('CPU codecs: 300 mutated chunks end in the reference values or a StemflowError, all implementations agreeing', async () => {
    const { findings, verdicts } = await run('codec', 300);
    expect(summary(findings)).toEqual([]);
    expect(verdicts['error:corrupt']).toBeGreaterThan(0);
  });

  it('HDF5 reader: 100 mutated fixture files end in h5py values, a consistent data change or a StemflowError', async () => {
    const { findings, verdicts } = await run('hdf5', 100);
    expect(summary(findings)).toEqual([]);
    expect(verdicts.exact).toBeGreaterThan(0);
  });

  it('whole source: 40 mutated acquisitions open and read every frame, or fail with a StemflowError', async () => {
    const { findings } = await run('source', 40);
    expect(summary(findings)).toEqual([]);
  });

  it('archive reader: 150 mutated archives end in exact values, a StemflowError, or changes verification counts exactly', async () => {
    const { findings, verdicts } = await run('archive', 150);
    expect(summary(findings)).toEqual([]);
    expect(verdicts['error:corrupt']).toBeGreaterThan(0);
  }, 300_000);
});
