/** Where a finding's input goes: /tmp/stemflow-fuzz/<target>-s<seed>-c<index>/ (STEMFLOW_FUZZ_DIR overrides). */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export function fuzzRoot(): string {
  return process.env.STEMFLOW_FUZZ_DIR ?? '/tmp/stemflow-fuzz';
}

export function caseDir(target: string, seed: number, index: number, kind = 'findings'): string {
  return join(fuzzRoot(), kind, `${target}-s${seed}-c${index}`);
}

/** Writes the case's input files; returns the directory. */
export function saveInput(
  dir: string,
  files: readonly { name: string; bytes: Uint8Array }[],
  note?: string,
): string {
  mkdirSync(dir, { recursive: true });
  for (const f of files) writeFileSync(join(dir, f.name), f.bytes);
  if (note !== undefined) writeFileSync(join(dir, 'README.txt'), `${note}\n`);
  return dir;
}
