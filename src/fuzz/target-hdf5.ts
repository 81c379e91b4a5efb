/**
 * Target 1: the HDF5 container and chunk-index reader (src/io/hdf5) on a mutated fixture in memory:
 * openHdf5, then for every dataset h5py listed: dataset(path), chunkTable (chunked), readDataset with the CPU
 * codecs, compared with h5py's SHA-256.
 */
import { chunkDecoderFor } from '../codec/filters.ts';
import { isStemflowError } from '../errors.ts';
import { memorySource } from '../io/byte-source.ts';
import { openHdf5 } from '../io/hdf5/index.ts';
import { allInside, diffOffsets, expectedFromOracleIndex, sha256 } from './expected.ts';
import {
  type FixtureFile,
  type FuzzOracle,
  loadFixtureFile,
  loadFuzzOracle,
  type OracleDataset,
} from './fixtures.ts';
import { mutateFile } from './mutate-file.ts';
import type { Adjudication, CaseReport, Finding } from './report.ts';
import { Rng } from './rng.ts';
import { caseDir, saveInput } from './save.ts';

export interface Hdf5State {
  oracle: FuzzOracle;
  files: FixtureFile[];
  /** Per file and dataset, what the unmutated file gives: 'exact' or 'error:<kind>'. */
  baseline: Map<string, string>;
}

export async function prepareHdf5(): Promise<Hdf5State> {
  const oracle = loadFuzzOracle();
  const files = Object.keys(oracle.files)
    .sort()
    .map((name) => loadFixtureFile(name, oracle));
  const baseline = new Map<string, string>();
  for (const file of files) {
    const results = await readAll(file.bytes, file.name, oracle.files[file.name].datasets);
    for (const [path, r] of Object.entries(results)) {
      const ds = oracle.files[file.name].datasets[path];
      const verdict = r.sha256 !== undefined ? (r.sha256 === ds.sha256 ? 'exact' : 'WRONG') : r.verdict;
      if (verdict === 'WRONG' || verdict === 'crash') {
        throw new Error(`fuzz baseline: ${file.name}:${path} does not read as h5py says (${r.detail ?? ''})`);
      }
      baseline.set(`${file.name}:${path}`, verdict);
    }
  }
  return { oracle, files, baseline };
}

/** bslz4 chunk shapes of a file's datasets, for in-place chunk mutations. */
export function chunkShapeOf(oracle: FuzzOracle, file: string) {
  return (path: string) => {
    const ds = oracle.files[file]?.datasets[path];
    if (!ds?.chunks) return null;
    const elem = { uint8: 1, uint16: 2, uint32: 4 }[ds.dtype as 'uint8'] ?? 0;
    const f = ds.filters;
    const bslz4 = f.length === 1 && f[0].id === 32008 && f[0].cd_values[4] === 2 && elem > 0;
    return { elemSize: elem, bytes: ds.chunks.reduce((a, b) => a * b, 1) * elem, bslz4 };
  };
}

interface ReadResult {
  sha256?: string;
  verdict: string;
  detail?: string;
  stack?: string;
}

async function readAll(
  bytes: Uint8Array,
  name: string,
  datasets: Record<string, OracleDataset>,
): Promise<Record<string, ReadResult>> {
  const out: Record<string, ReadResult> = {};
  const fail = (e: unknown): ReadResult => {
    if (isStemflowError(e)) return { verdict: `error:${e.kind}` };
    const err = e instanceof Error ? e : new Error(String(e));
    return { verdict: 'crash', detail: `${err.name}: ${err.message}`, stack: err.stack };
  };
  let h5: Awaited<ReturnType<typeof openHdf5>>;
  try {
    h5 = await openHdf5(memorySource(bytes, name));
  } catch (e) {
    const r = fail(e);
    for (const path of Object.keys(datasets)) out[path] = r;
    return out;
  }
  for (const path of Object.keys(datasets)) {
    try {
      const info = await h5.dataset(path);
      if (info.layout === 'chunked') await h5.chunkTable(info);
      const data = await h5.readDataset(info, chunkDecoderFor(info.dtype.size));
      out[path] = { verdict: 'read', sha256: sha256(data) };
    } catch (e) {
      out[path] = fail(e);
    }
  }
  return out;
}

export async function runHdf5Case(state: Hdf5State, seed: number, index: number): Promise<CaseReport> {
  const t0 = performance.now();
  const { file, mutated } = hdf5Input(state, seed, index);
  const datasets = state.oracle.files[file.name].datasets;
  const results = await readAll(mutated.bytes, file.name, datasets);
  const diffs = diffOffsets(file.bytes, mutated.bytes);
  const chunkRanges = file.chunks.map((c) => c.range);
  const onlyChunkBytes = diffs !== null && allInside(diffs, chunkRanges);
  const findings: Finding[] = [];
  const adjudications: Adjudication[] = [];
  const mutation = `${file.name}: ${mutated.description}`;
  const base = { target: 'hdf5' as const, seed, index, mutation };
  const dir = () =>
    saveInput(caseDir('hdf5', seed, index), [{ name: file.name, bytes: mutated.bytes }], mutation);
  let caseVerdict = 'exact';
  for (const [path, r] of Object.entries(results)) {
    const ds = datasets[path];
    const baseline = state.baseline.get(`${file.name}:${path}`)!;
    let verdict = r.verdict;
    if (r.verdict === 'crash') {
      findings.push({ ...base, kind: 'crash', detail: `${path}: ${r.detail}`, stack: r.stack, saved: dir() });
    } else if (r.sha256 !== undefined) {
      if (baseline === 'exact' && r.sha256 === ds.sha256) verdict = 'exact';
      else if (diffs !== null && diffs.length === 0) {
        verdict = 'disagreement';
        findings.push({
          ...base,
          kind: 'disagreement',
          detail: `${path}: unchanged bytes decode differently`,
          saved: dir(),
        });
      } else if (onlyChunkBytes) {
        const expected = await expectedFromOracleIndex(ds, mutated.bytes);
        if (expected === r.sha256) verdict = 'data-change';
        else if (expected === null && baseline === 'exact') verdict = 'data-change-unchecked';
        else {
          verdict = 'disagreement';
          findings.push({
            ...base,
            kind: 'disagreement',
            detail: `${path}: only chunk bytes changed; the reader gives ${r.sha256} but the codec over h5py's index gives ${expected}`,
            saved: dir(),
          });
        }
      } else {
        verdict = 'reinterpreted';
        adjudications.push({
          target: 'hdf5',
          index,
          mutation,
          dir: saveInput(caseDir('hdf5', seed, index, 'adjudicate'), [
            { name: file.name, bytes: mutated.bytes },
          ]),
          file: file.name,
          dataset: path,
          sha256: r.sha256,
        });
      }
    } else if (onlyChunkBytes && baseline === 'exact') {
      // Only chunk payload changed: the error must be the codec's verdict on those bytes.
      const expected = await expectedFromOracleIndex(ds, mutated.bytes);
      if (expected !== null && !expected.startsWith('error:')) {
        verdict = 'disagreement';
        findings.push({
          ...base,
          kind: 'disagreement',
          detail: `${path}: only chunk bytes changed and the codec decodes them, but the reader fails with ${r.verdict}`,
          saved: dir(),
        });
      }
    }
    if (verdict === baseline) verdict = 'exact';
    if (severity(verdict) > severity(caseVerdict)) caseVerdict = verdict;
  }
  return {
    target: 'hdf5',
    index,
    inputs: 1,
    mutation,
    verdicts: { [caseVerdict]: 1 },
    codes: {},
    findings,
    adjudications,
    ms: performance.now() - t0,
  };
}

/** Which verdict names a case (a file read dataset by dataset): the most severe of its datasets'. */
export function severity(verdict: string): number {
  const order = ['exact', 'error:', 'data-change', 'reinterpreted', 'disagreement', 'crash'];
  let rank = 0;
  order.forEach((v, i) => {
    if (verdict.startsWith(v)) rank = i;
  });
  return rank;
}

export function hdf5Input(state: Hdf5State, seed: number, index: number) {
  const rng = Rng.forCase(seed, 'hdf5', index);
  const file = rng.pick(state.files);
  const mutated = mutateFile(rng, file, { chunkShape: chunkShapeOf(state.oracle, file.name) });
  return { file, mutated, files: [{ name: file.name, bytes: mutated.bytes }] };
}
