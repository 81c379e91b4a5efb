// `npm run fuzz -- --seconds N ...`: bundles src/fuzz/cli.ts (npm packages external, WGSL `?raw` imports as
// text with `// #include` lines resolved) into node_modules/.cache/stemflow-fuzz/ and runs it. Options:
// src/fuzz/cli.ts. Report: docs/robustness.md.
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { wgslIncludeEsbuild } from './wgsl-include.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outfile = join(root, 'node_modules', '.cache', 'stemflow-fuzz', 'fuzz.mjs');

const raw = {
  name: 'raw',
  setup(b) {
    b.onResolve({ filter: /\?raw$/ }, (a) => ({
      path: join(a.resolveDir, a.path.slice(0, -4)),
      namespace: 'raw',
    }));
    b.onLoad({ filter: /.*/, namespace: 'raw' }, async (a) => ({
      contents: await readFile(a.path, 'utf8'),
      loader: 'text',
    }));
  },
};

await build({
  entryPoints: [join(root, 'src', 'fuzz', 'cli.ts')],
  outfile,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: 'inline',
  logLevel: 'warning',
  packages: 'external',
  plugins: [wgslIncludeEsbuild, raw],
});
process.chdir(root);
await import(pathToFileURL(outfile).href);
