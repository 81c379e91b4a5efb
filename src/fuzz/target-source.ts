/**
 * Target 3: the whole source (src/source/hdf5-acquisition.ts). A scenario is an ARINA master with its three
 * shards, a shard alone, or a single file; one of its files is mutated and written to a temporary folder,
 * opened with openAcquisition (h5wasm metadata + our reader), and every frame read with readFrames; the
 * frames must hash to h5py's SHA-256, or end in a StemflowError.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isStemflowError } from '../errors.ts';
import type { AcquisitionSource } from '../source/acquisition-source.ts';
import { openAcquisition } from '../source/hdf5-acquisition.ts';
import type { InputFile } from '../source/input-file.ts';
import { nodeInput } from '../source/node-input.ts';
import { allInside, decodeByOracleIndex, diffOffsets } from './expected.ts';
import { type FixtureFile, type FuzzOracle, loadFixtureFile, loadFuzzOracle } from './fixtures.ts';
import { mutateFile } from './mutate-file.ts';
import { type Adjudication, bump, type CaseReport, describeThrown, type Finding } from './report.ts';
import { Rng } from './rng.ts';
import { caseDir, fuzzRoot, saveInput } from './save.ts';
import { chunkShapeOf } from './target-hdf5.ts';

export interface Scenario {
  name: string;
  /** Files given to openAcquisition, in order; the first is the master when there is one. */
  files: string[];
  /** The frames dataset of each part, in frame order. */
  parts: { file: string; dataset: string }[];
  option?: string;
  frames: number;
  sha256: string;
  /** For h5py: the file to open and the dataset (null: follow the master's /entry/data/data_* links). */
  h5py: { file: string; dataset: string | null };
}

export interface SourceState {
  oracle: FuzzOracle;
  files: Map<string, FixtureFile>;
  scenarios: Scenario[];
  work: string;
}

const SINGLES: [string, string, boolean][] = [
  ['many_v1_u8_32.h5', '/data', false],
  ['latest_fixed_u16_192.h5', '/data', false],
  ['latest_ext_u16_96.h5', '/data', false],
  ['latest_btree2_u16_32.h5', '/data', false],
  ['many_ext_u16_32.h5', '/data', false],
  ['many_fixed_u32_32.h5', '/data', false],
  ['odd_u16_33x35.h5', '/data', false],
  ['raw_u16_32.h5', '/raw', false],
  ['gzip_u16_32.h5', '/gzip_shuffle', true],
  ['latest_implicit_u16_32.h5', '/implicit', true],
  ['contiguous_u16.h5', '/data', true],
];

export async function prepareSource(): Promise<SourceState> {
  const oracle = loadFuzzOracle();
  const arina = oracle.acquisitions.arina;
  const scenarios: Scenario[] = [
    {
      name: 'arina',
      files: [arina.master, ...arina.shards],
      parts: arina.shards.map((file) => ({ file, dataset: arina.dataset })),
      frames: arina.frames,
      sha256: arina.sha256,
      h5py: { file: arina.master, dataset: null },
    },
    {
      name: 'shard',
      files: [arina.shards[1]],
      parts: [{ file: arina.shards[1], dataset: arina.dataset }],
      frames: oracle.files[arina.shards[1]].datasets[arina.dataset].shape[0],
      sha256: oracle.files[arina.shards[1]].datasets[arina.dataset].sha256!,
      h5py: { file: arina.shards[1], dataset: arina.dataset },
    },
  ];
  for (const [file, dataset, option] of SINGLES) {
    const ds = oracle.files[file].datasets[dataset];
    scenarios.push({
      name: file,
      files: [file],
      parts: [{ file, dataset }],
      option: option ? dataset : undefined,
      frames: ds.shape[0],
      sha256: ds.sha256!,
      h5py: { file, dataset },
    });
  }
  const files = new Map<string, FixtureFile>();
  for (const s of scenarios)
    for (const f of s.files) if (!files.has(f)) files.set(f, loadFixtureFile(f, oracle));
  const work = join(fuzzRoot(), 'work', String(process.pid));
  mkdirSync(work, { recursive: true });
  const state: SourceState = { oracle, files, scenarios, work };
  for (const s of scenarios) {
    const r = await openAndHash(state, s, new Map());
    if (r.sha256 !== s.sha256)
      throw new Error(`fuzz baseline: ${s.name} does not read as h5py says (${r.verdict} ${r.detail ?? ''})`);
  }
  return state;
}

export function sourceInput(state: SourceState, seed: number, index: number) {
  const rng = Rng.forCase(seed, 'source', index);
  const scenario = rng.pick(state.scenarios);
  // ARINA: the master a quarter of the time, a shard otherwise.
  const target =
    scenario.files.length > 1 && !rng.chance(0.25) ? rng.pick(scenario.files.slice(1)) : scenario.files[0];
  const file = state.files.get(target)!;
  const mutated = mutateFile(rng, file, { chunkShape: chunkShapeOf(state.oracle, target) });
  const mutation = `${scenario.name}: ${target}: ${mutated.description}`;
  const files = scenario.files.map((name) => ({
    name,
    bytes: name === target ? mutated.bytes : state.files.get(name)!.bytes,
  }));
  return { scenario, target, file, mutated, mutation, files };
}

/** Frames read at most (a file whose shape was made huge is read this far and judged on its frame count). */
const MAX_FRAMES = 4096;

interface HashResult {
  verdict: string;
  sha256?: string;
  frames?: number;
  detail?: string;
  stack?: string;
}

async function openAndHash(
  state: SourceState,
  s: Scenario,
  replaced: Map<string, Uint8Array>,
): Promise<HashResult> {
  const dir = join(state.work, 'case');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const name of s.files)
    writeFileSync(join(dir, name), replaced.get(name) ?? state.files.get(name)!.bytes);
  const inputs: InputFile[] = [];
  let source: AcquisitionSource | null = null;
  try {
    for (const name of s.files) inputs.push(await nodeInput(join(dir, name)));
    source = await openAcquisition(inputs, s.option ? { dataset: s.option } : {});
    const frames = source.frameCount;
    const hash = createHash('sha256');
    const upTo = Math.min(frames, MAX_FRAMES);
    for (let first = 0; first < upTo; first += 7)
      hash.update(await source.readFrames(first, Math.min(7, upTo - first)));
    return { verdict: frames > MAX_FRAMES ? 'read-capped' : 'read', sha256: hash.digest('hex'), frames };
  } catch (e) {
    if (isStemflowError(e)) return { verdict: `error:${e.kind}` };
    const d = describeThrown(e);
    return { verdict: 'crash', detail: d.detail, stack: d.stack };
  } finally {
    await Promise.all(inputs.map((i) => i.close?.().catch(() => undefined)));
  }
}

export async function runSourceCase(state: SourceState, seed: number, index: number): Promise<CaseReport> {
  const t0 = performance.now();
  const { scenario, target, file, mutated, mutation, files } = sourceInput(state, seed, index);
  const r = await openAndHash(state, scenario, new Map([[target, mutated.bytes]]));
  const findings: Finding[] = [];
  const adjudications: Adjudication[] = [];
  const codes: Record<string, number> = {};
  const base = { target: 'source' as const, seed, index, mutation };
  const save = (kind = 'findings') => saveInput(caseDir('source', seed, index, kind), files, mutation);
  const diffs = diffOffsets(file.bytes, mutated.bytes);
  const framesDataset = scenario.parts.find((p) => p.file === target)?.dataset;
  const frameChunks = file.chunks.filter((c) => c.dataset === framesDataset).map((c) => c.range);
  const onlyFrameChunks = diffs !== null && diffs.length > 0 && allInside(diffs, frameChunks);
  let verdict = r.verdict;
  if (r.verdict === 'crash') {
    findings.push({ ...base, kind: 'crash', detail: r.detail ?? '', stack: r.stack, saved: save() });
  } else if (r.sha256 !== undefined) {
    if (r.sha256 === scenario.sha256) verdict = 'exact';
    else if (diffs !== null && diffs.length === 0) {
      verdict = 'disagreement';
      findings.push({
        ...base,
        kind: 'disagreement',
        detail: 'unchanged bytes decode differently',
        saved: save(),
      });
    } else if (onlyFrameChunks) {
      const expected = await expectedAcquisition(state, scenario, target, mutated.bytes);
      if (expected === r.sha256) verdict = 'data-change';
      else {
        verdict = 'disagreement';
        findings.push({
          ...base,
          kind: 'disagreement',
          detail: `only frame chunk bytes changed: read ${r.sha256}, the codec over h5py's index gives ${expected}`,
          saved: save(),
        });
      }
    } else if (r.verdict === 'read-capped') {
      verdict = 'reinterpreted-capped';
    } else {
      verdict = 'reinterpreted';
      const dir = save('adjudicate');
      adjudications.push({
        target: 'source',
        index,
        mutation,
        dir,
        file: scenario.h5py.file,
        dataset: scenario.h5py.dataset,
        sha256: r.sha256,
      });
    }
  } else if (onlyFrameChunks) {
    const expected = await expectedAcquisition(state, scenario, target, mutated.bytes);
    if (!expected.startsWith('error:')) {
      verdict = 'disagreement';
      findings.push({
        ...base,
        kind: 'disagreement',
        detail: `only frame chunk bytes changed and they decode, but the source fails with ${r.verdict}`,
        saved: save(),
      });
    }
  }
  bump(codes, `scenario:${scenario.name}`);
  return {
    target: 'source',
    index,
    inputs: 1,
    mutation,
    verdicts: { [verdict]: 1 },
    codes,
    findings,
    adjudications,
    ms: performance.now() - t0,
  };
}

/** SHA-256 of the scenario's frames with `target`'s chunks decoded from `bytes` through h5py's index. */
async function expectedAcquisition(
  state: SourceState,
  s: Scenario,
  target: string,
  bytes: Uint8Array,
): Promise<string> {
  const hash = createHash('sha256');
  for (const p of s.parts) {
    const ds = state.oracle.files[p.file].datasets[p.dataset];
    const r = await decodeByOracleIndex(ds, p.file === target ? bytes : state.files.get(p.file)!.bytes);
    if (r === null) return 'unchecked';
    if (typeof r === 'string') return r;
    hash.update(r);
  }
  return hash.digest('hex');
}
