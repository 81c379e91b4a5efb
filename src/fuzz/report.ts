/**
 * What one fuzz case reports and how a run adds them up. Verdicts:
 * - exact: decoded values equal h5py's (SHA-256 of the oracle) or, for chunks, the oracle-checked decode;
 * - error:<kind> / code:<NAME>: a StemflowError of that kind, or a GPU/twin per-frame error code;
 * - data-change: the mutation only touched chunk payload bytes, the result decodes without error and equals
 *   what the codec itself makes of the mutated bytes (bitshuffle/LZ4 has no checksum: undetectable, honest);
 * - reinterpreted: metadata changed and the reader accepted it with other values; h5py adjudicates these;
 * - finding: crash (a non-Stemflow exception), hang (watchdog), disagreement (two implementations or the oracle
 *   differ on the same bytes), process-exit (the case killed its process).
 */
export type TargetName = 'hdf5' | 'codec' | 'source' | 'gpu' | 'archive';

export type FindingKind = 'crash' | 'hang' | 'disagreement' | 'process-exit';

export interface Finding {
  kind: FindingKind;
  target: TargetName;
  seed: number;
  index: number;
  mutation: string;
  detail: string;
  stack?: string;
  /** Where the input was saved. */
  saved?: string;
}

/** A case whose values differ from the oracle after a metadata change: h5py reads the same input to decide. */
export interface Adjudication {
  target: TargetName;
  index: number;
  mutation: string;
  /** Directory holding the input files. */
  dir: string;
  /** The file to open (the master for an acquisition) and the dataset, or null to follow ARINA links. */
  file: string;
  dataset: string | null;
  /** SHA-256 of what stemflow decoded. */
  sha256: string;
}

export interface CaseReport {
  target: TargetName;
  index: number;
  /** Mutated inputs in this case (1, or the chunks of a GPU batch). */
  inputs: number;
  mutation: string;
  /** Verdict -> count. */
  verdicts: Record<string, number>;
  /** Per-frame codes of the CPU twin / GPU pass (code:<NAME>) and error kinds seen besides the verdict. */
  codes: Record<string, number>;
  findings: Finding[];
  adjudications: Adjudication[];
  ms: number;
}

export interface TargetTotals {
  target: TargetName;
  cases: number;
  inputs: number;
  verdicts: Record<string, number>;
  codes: Record<string, number>;
  findings: Finding[];
  /** Findings by kind, counted once per input. */
  crashes: number;
  hangs: number;
  disagreements: number;
  processExits: number;
  maxCaseMs: number;
  seconds: number;
  /** h5py adjudication of reinterpreted inputs: agreed, h5py failed too, differed, not run. */
  adjudicated: Record<string, number>;
  /** Reinterpreted inputs that h5py refuses (or hangs on) while stemflow reads them: kept for review. */
  h5pyRefused: { index: number; mutation: string; dataset: string | null; detail: string; dir: string }[];
}

export function emptyTotals(target: TargetName): TargetTotals {
  return {
    target,
    cases: 0,
    inputs: 0,
    verdicts: {},
    codes: {},
    findings: [],
    crashes: 0,
    hangs: 0,
    disagreements: 0,
    processExits: 0,
    maxCaseMs: 0,
    seconds: 0,
    adjudicated: {},
    h5pyRefused: [],
  };
}

export function bump(map: Record<string, number>, key: string, by = 1): void {
  map[key] = (map[key] ?? 0) + by;
}

export function addFinding(totals: TargetTotals, f: Finding): void {
  totals.findings.push(f);
  if (f.kind === 'crash') totals.crashes++;
  else if (f.kind === 'hang') totals.hangs++;
  else if (f.kind === 'disagreement') totals.disagreements++;
  else totals.processExits++;
}

export function addCase(totals: TargetTotals, r: CaseReport): void {
  totals.cases++;
  totals.inputs += r.inputs;
  for (const [k, v] of Object.entries(r.verdicts)) bump(totals.verdicts, k, v);
  for (const [k, v] of Object.entries(r.codes)) bump(totals.codes, k, v);
  for (const f of r.findings) addFinding(totals, f);
  totals.maxCaseMs = Math.max(totals.maxCaseMs, r.ms);
}

export function describeThrown(e: unknown): { detail: string; stack?: string } {
  if (e instanceof Error) return { detail: `${e.name}: ${e.message}`, stack: e.stack };
  return { detail: String(e) };
}
