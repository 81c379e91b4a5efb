/**
 * `npm run fuzz -- [--seconds N] [--targets hdf5,codec,source,gpu] [--seed S] [--cases N] [--workers N]
 *  [--gpu-batch N] [--case I --targets T] [--json FILE]`
 *
 * Mutates the committed fixtures and their chunks and checks that every input ends in h5py's values (or the
 * codec's own decode of mutated payload bytes) or a StemflowError within a time bound. `--seconds` is the
 * whole run's budget, split evenly between the targets. `--case I` reruns one case in this process and prints
 * it (the reproduction line printed with each finding). Findings' inputs go to /tmp/stemflow-fuzz/findings/.
 */
import { randomInt } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { TargetName, TargetTotals } from './report.ts';
import { childMain, runTarget } from './runner.ts';
import { fuzzRoot } from './save.ts';
import { TARGETS } from './targets.ts';

interface Args {
  seconds: number;
  targets: TargetName[];
  seed: number;
  cases: number;
  workers: number;
  adjudicate: number;
  case: number | null;
  json: string | null;
}

function parse(argv: string[]): Args {
  const get = (name: string) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const targets = (get('targets') ?? get('target') ?? 'hdf5,codec,source,gpu').split(',') as TargetName[];
  for (const t of targets)
    if (!(t in TARGETS)) throw new Error(`unknown target ${t} (hdf5, codec, source, gpu)`);
  const batch = get('gpu-batch');
  if (batch) process.env.STEMFLOW_FUZZ_GPU_BATCH = batch;
  return {
    seconds: Number(get('seconds') ?? 60),
    targets,
    seed: Number(get('seed') ?? randomInt(0, 2 ** 31)),
    cases: Number(get('cases') ?? Number.POSITIVE_INFINITY),
    workers: Number(get('workers') ?? Math.max(1, Math.min(4, cpus().length))),
    adjudicate: Number(get('adjudicate') ?? 300),
    case: get('case') !== undefined ? Number(get('case')) : null,
    json: get('json') ?? null,
  };
}

function table(rows: TargetTotals[]): string {
  const lines = [
    'target | cases | inputs | crashes | hangs | disagreements | process exits | seconds | slowest case ms',
  ];
  for (const t of rows) {
    lines.push(
      `${t.target} | ${t.cases} | ${t.inputs} | ${t.crashes} | ${t.hangs} | ${t.disagreements} | ${t.processExits} | ${t.seconds.toFixed(0)} | ${t.maxCaseMs.toFixed(0)}`,
    );
  }
  for (const t of rows) {
    const sorted = (m: Record<string, number>) =>
      Object.entries(m)
        .sort((a, b) => b[1] - a[1])
        .map(([k, v]) => `${k} ${v}`)
        .join(', ');
    lines.push(`${t.target} verdicts: ${sorted(t.verdicts)}`);
    if (Object.keys(t.codes).length) lines.push(`${t.target} codes: ${sorted(t.codes)}`);
    if (Object.keys(t.adjudicated).length)
      lines.push(`${t.target} h5py rulings on reinterpreted inputs: ${sorted(t.adjudicated)}`);
    for (const r of t.h5pyRefused.slice(0, 50)) {
      lines.push(
        `  h5py refuses case ${r.index} ${r.dataset ?? ''} (${r.mutation}): ${r.detail.slice(0, 160)}`,
      );
    }
  }
  return lines.join('\n');
}

async function main(argv: string[]): Promise<void> {
  if (argv[0] === '--child') return childMain(argv[1] as TargetName, Number(argv[2]));
  const args = parse(argv);
  const log = (line: string) => console.log(line);
  if (args.case !== null) {
    const target = TARGETS[args.targets[0]];
    const state = await target.prepare();
    const input = target.input(state, args.seed, args.case);
    const report = await target.run(state, args.seed, args.case);
    console.log(input.mutation);
    console.log(
      JSON.stringify({ ...report, adjudications: report.adjudications.map((a) => a.dir) }, null, 2),
    );
    process.exit(0);
  }
  const entry = fileURLToPath(import.meta.url);
  log(
    `stemflow fuzz: seed ${args.seed}, targets ${args.targets.join(',')}, ${args.seconds} s, workers ${args.workers}, inputs of findings under ${fuzzRoot()}/findings`,
  );
  const all: TargetTotals[] = [];
  for (const name of args.targets) {
    const seconds = args.seconds / args.targets.length;
    log(`== ${name} (${seconds.toFixed(0)} s)`);
    const totals = await runTarget(name, {
      seed: args.seed,
      seconds,
      maxCases: args.cases,
      workers: name === 'gpu' ? 1 : args.workers,
      adjudicate: args.adjudicate,
      entry,
      log,
    });
    all.push(totals);
    for (const f of totals.findings.slice(0, 50)) {
      log(
        `FINDING ${f.kind} ${f.target} seed ${f.seed} case ${f.index}: ${f.detail}\n  mutation: ${f.mutation}\n  input: ${f.saved ?? '-'}\n  reproduce: npm run fuzz -- --targets ${f.target} --seed ${f.seed} --case ${f.index}${f.stack ? `\n  ${f.stack.split('\n').slice(0, 6).join('\n  ')}` : ''}`,
      );
    }
  }
  log(table(all));
  if (args.json) writeFileSync(args.json, JSON.stringify({ seed: args.seed, argv, totals: all }, null, 2));
  const bad = all.reduce((n, t) => n + t.findings.length, 0);
  process.exit(bad > 0 ? 1 : 0);
}

await main(process.argv.slice(2));
