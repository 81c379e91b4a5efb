// Bundles the Node CLI (src/cli/entry.ts) into one ESM file. By default npm packages stay external (they
// resolve from node_modules); --standalone bundles everything except `webgpu` (dawn.node) for machines
// that have no node_modules, such as the GPU machine (see ../shared/gpu-kit).
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { wgslIncludeEsbuild } from './wgsl-include.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

export async function buildCli({
  outfile = join(root, 'dist-cli', 'stemflow.mjs'),
  standalone = false,
} = {}) {
  await build({
    entryPoints: [join(root, 'src', 'cli', standalone ? 'entry.ts' : 'main.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: 'linked',
    logLevel: 'warning',
    // WGSL imports as text, with `// #include` lines resolved.
    plugins: [wgslIncludeEsbuild],
    ...(standalone
      ? {
          external: ['webgpu'],
          banner: {
            js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);",
          },
        }
      : { packages: 'external' }),
  });
  return outfile;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const standalone = process.argv.includes('--standalone');
  const i = process.argv.indexOf('--outfile');
  const outfile = i > 0 ? process.argv[i + 1] : undefined;
  console.log(await buildCli({ ...(outfile ? { outfile } : {}), standalone }));
}
