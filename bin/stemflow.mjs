#!/usr/bin/env node
// The stemflow CLI: bundles src/cli (TypeScript) with esbuild when the sources changed, then runs it.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist-cli', 'stemflow.mjs');

function newest(dir) {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

if (!existsSync(out) || statSync(out).mtimeMs < newest(join(root, 'src'))) {
  const { buildCli } = await import(pathToFileURL(join(root, 'scripts', 'build-cli.mjs')).href);
  await buildCli({ outfile: out });
}
const { main } = await import(pathToFileURL(out).href);
process.exitCode = await main(process.argv.slice(2));
