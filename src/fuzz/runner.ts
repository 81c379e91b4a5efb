/**
 * The watchdog: cases run in child processes (one per worker), one at a time; a case that passes its time
 * bound is a hang (the child is killed and replaced), a child that dies is a process-exit finding, an
 * unhandled rejection in a child is a crash of the case in flight. The parent regenerates the input of a case
 * that hung or killed its child (cases are deterministic in seed and index) and saves it.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { rmSync } from 'node:fs';
import { adjudicate } from './h5py.ts';
import {
  type Adjudication,
  addCase,
  addFinding,
  bump,
  type CaseReport,
  emptyTotals,
  type TargetName,
  type TargetTotals,
} from './report.ts';
import { caseDir, saveInput } from './save.ts';
import { TARGETS } from './targets.ts';

export interface RunOptions {
  seed: number;
  /** Wall-clock budget of this target in seconds. */
  seconds: number;
  /** Stop after this many cases (default: no limit). */
  maxCases: number;
  workers: number;
  /** h5py rulings at most per target. */
  adjudicate: number;
  /** The bundle to fork with --child. */
  entry: string;
  log: (line: string) => void;
}

type ChildMessage =
  | { type: 'ready' }
  | { type: 'result'; report: CaseReport }
  | { type: 'unhandled'; detail: string; stack?: string }
  | { type: 'fatal'; detail: string; stack?: string };

interface Child {
  proc: ChildProcess;
  waiter: ((m: ChildMessage | { type: 'exit'; code: number | null; signal: string | null }) => void) | null;
  unhandled: { detail: string; stack?: string }[];
}

function spawnChild(entry: string, target: TargetName, seed: number): Child {
  const proc = fork(entry, ['--child', target, String(seed)], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    serialization: 'advanced',
  });
  const child: Child = { proc, waiter: null, unhandled: [] };
  proc.on('message', (m: ChildMessage) => {
    if (m.type === 'unhandled') child.unhandled.push(m);
    else child.waiter?.(m);
  });
  proc.on('exit', (code, signal) => child.waiter?.({ type: 'exit', code, signal }));
  return child;
}

function next(child: Child, timeoutMs: number) {
  return new Promise<
    ChildMessage | { type: 'exit'; code: number | null; signal: string | null } | { type: 'timeout' }
  >((resolve) => {
    const timer = setTimeout(() => {
      child.waiter = null;
      resolve({ type: 'timeout' });
    }, timeoutMs);
    child.waiter = (m) => {
      clearTimeout(timer);
      child.waiter = null;
      resolve(m);
    };
  });
}

export async function runTarget(name: TargetName, o: RunOptions): Promise<TargetTotals> {
  const target = TARGETS[name];
  const totals = emptyTotals(name);
  const adjudications: Adjudication[] = [];
  const t0 = Date.now();
  const deadline = t0 + o.seconds * 1000;
  let nextIndex = 0;
  let parentState: unknown;
  const regenerate = async (index: number) => {
    parentState ??= await target.prepare();
    const input = target.input(parentState, o.seed, index);
    return {
      dir: saveInput(caseDir(name, o.seed, index), input.files, input.mutation),
      mutation: input.mutation,
    };
  };
  let lastLog = Date.now();

  const worker = async (w: number) => {
    let child: Child | null = null;
    const start = async () => {
      const c = spawnChild(o.entry, name, o.seed);
      const m = await next(c, 600_000);
      if (m.type !== 'ready') {
        c.proc.kill('SIGKILL');
        throw new Error(`fuzz worker ${w} (${name}) did not start: ${JSON.stringify(m)}`);
      }
      return c;
    };
    try {
      while (Date.now() < deadline && nextIndex < o.maxCases) {
        child ??= await start();
        if (Date.now() >= deadline) break;
        const index = nextIndex++;
        child.unhandled = [];
        child.proc.send({ type: 'case', index });
        const m = await next(child, target.timeoutMs);
        if (m.type === 'result') {
          const r = m.report;
          for (const u of child.unhandled) {
            r.findings.push({
              kind: 'crash',
              target: name,
              seed: o.seed,
              index,
              mutation: r.mutation,
              detail: `unhandled rejection: ${u.detail}`,
              stack: u.stack,
            });
            r.verdicts = { crash: r.inputs };
          }
          addCase(totals, r);
          adjudications.push(...r.adjudications);
        } else {
          const kind = m.type === 'timeout' ? 'hang' : 'process-exit';
          child.proc.kill('SIGKILL');
          child = null;
          const saved = await regenerate(index);
          const detail =
            m.type === 'timeout'
              ? `no answer within ${target.timeoutMs} ms`
              : m.type === 'exit'
                ? `the case's process exited (code ${m.code}, signal ${m.signal})`
                : `${m.type}: ${'detail' in m ? m.detail : ''}`;
          addFinding(totals, {
            kind,
            target: name,
            seed: o.seed,
            index,
            mutation: saved.mutation.split('\n')[0],
            detail,
            saved: saved.dir,
          });
          totals.cases++;
          totals.inputs++;
          bump(totals.verdicts, kind);
        }
        if (Date.now() - lastLog > 15_000) {
          lastLog = Date.now();
          o.log(
            `  ${name}: ${totals.cases} cases, ${totals.inputs} inputs, ${totals.findings.length} findings, ${((Date.now() - t0) / 1000).toFixed(0)} s`,
          );
        }
      }
    } finally {
      // A child still busy (a case past the deadline) must not outlive the run.
      child?.proc.kill('SIGKILL');
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, o.workers) }, (_, w) => worker(w)));
  totals.seconds = (Date.now() - t0) / 1000;

  // A case's input is kept until the last of its datasets is ruled on, and afterwards unless h5py agreed on
  // every one (two reinterpreted datasets of one file share the folder).
  const ruledHere = adjudications.slice(0, Math.max(0, o.adjudicate));
  const pending = new Map<string, number>();
  for (const a of ruledHere) pending.set(a.dir, (pending.get(a.dir) ?? 0) + 1);
  const keep = new Set<string>();
  let ruled = 0;
  for (const a of adjudications) {
    if (ruled >= o.adjudicate) {
      bump(totals.adjudicated, 'not-run');
      continue;
    }
    ruled++;
    const { ruling, detail } = adjudicate(a);
    bump(totals.adjudicated, ruling);
    if (ruling !== 'h5py-agrees') keep.add(a.dir);
    const left = pending.get(a.dir)! - 1;
    pending.set(a.dir, left);
    if (left === 0 && !keep.has(a.dir)) rmSync(a.dir, { recursive: true, force: true });
    if (ruling === 'h5py-fails' || ruling === 'h5py-hangs') {
      totals.h5pyRefused.push({
        index: a.index,
        mutation: a.mutation,
        dataset: a.dataset,
        detail,
        dir: a.dir,
      });
    }
    if (ruling === 'h5py-differs') {
      addFinding(totals, {
        kind: 'disagreement',
        target: name,
        seed: o.seed,
        index: a.index,
        mutation: a.mutation,
        detail: `stemflow and h5py read the mutated file differently: ${detail}`,
        saved: a.dir,
      });
    }
  }
  return totals;
}

/** The child side: prepares the target once, then answers case requests. */
export async function childMain(name: TargetName, seed: number): Promise<void> {
  const target = TARGETS[name];
  const send = (m: ChildMessage) => process.send?.(m);
  process.on('unhandledRejection', (e) => {
    const err = e instanceof Error ? e : new Error(String(e));
    send({ type: 'unhandled', detail: `${err.name}: ${err.message}`, stack: err.stack });
  });
  let state: unknown;
  try {
    state = await target.prepare();
  } catch (e) {
    const err = e instanceof Error ? e : new Error(String(e));
    send({ type: 'fatal', detail: err.message, stack: err.stack });
    process.exit(1);
  }
  process.on('message', async (m: { type: string; index?: number }) => {
    if (m.type === 'exit') process.exit(0);
    if (m.type !== 'case') return;
    const index = m.index!;
    let report: CaseReport;
    try {
      report = await target.run(state, seed, index);
    } catch (e) {
      // Whatever escapes a case (the targets catch what the engine throws) is reported as a crash.
      const err = e instanceof Error ? e : new Error(String(e));
      const finding = {
        kind: 'crash' as const,
        target: name,
        seed,
        index,
        mutation: '?',
        detail: `escaped the case: ${err.name}: ${err.message}`,
        stack: err.stack,
      };
      report = {
        target: name,
        index,
        inputs: 1,
        mutation: '?',
        verdicts: { crash: 1 },
        codes: {},
        findings: [finding],
        adjudications: [],
        ms: 0,
      };
    }
    send({ type: 'result', report });
  });
  send({ type: 'ready' });
}
