// WGSL has no includes. A shader names a shared snippet with a line of its own,
//   // #include "common/tans-bits.wgsl"
// (a path relative to the including file), and the line is replaced by the snippet's text when the shader is
// imported: `?raw` imports in Vite and Vitest (`wgslIncludeVite`), in the esbuild bundles of the CLI and the
// fuzzer (`wgslIncludeEsbuild`). So every importer, and `structLayout(source, 'Params')`, sees the final source.
// Snippets may include snippets; a missing file or a cycle stops the build with the include chain.
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

const INCLUDE = /^[ \t]*\/\/[ \t]*#include[ \t]+"([^"]+)"[ \t]*$/gm;

/** The text of `file` (absolute path) with its includes resolved, and every file read (for watch lists). */
export function resolveWgsl(file, chain = []) {
  const path = resolve(file);
  if (chain.includes(path)) {
    throw new Error(`WGSL include cycle: ${[...chain, path].join(' -> ')}`);
  }
  let text;
  try {
    text = readFileSync(path, 'utf8');
  } catch (cause) {
    const from = chain.length > 0 ? ` (included from ${chain.at(-1)})` : '';
    throw new Error(`WGSL include: cannot read ${path}${from}`, { cause });
  }
  const files = [path];
  const code = text.replace(INCLUDE, (_line, name) => {
    const inner = resolveWgsl(resolve(dirname(path), name), [...chain, path]);
    files.push(...inner.files);
    return inner.code.replace(/\n$/, '');
  });
  return { code, files };
}

/** Vite/Vitest plugin: `import x from './a.wgsl?raw'` gives the resolved text of a.wgsl. */
export function wgslIncludeVite() {
  return {
    name: 'stemflow:wgsl-include',
    enforce: 'pre',
    load(id) {
      const [file, query = ''] = id.split('?', 2);
      if (!file.endsWith('.wgsl') || !new URLSearchParams(query).has('raw')) return null;
      const { code, files } = resolveWgsl(file);
      for (const f of files) this.addWatchFile(f);
      return `export default ${JSON.stringify(code)};`;
    },
  };
}

/** esbuild plugin: `.wgsl` and `.wgsl?raw` imports give the resolved text as a string. */
export const wgslIncludeEsbuild = {
  name: 'stemflow:wgsl-include',
  setup(build) {
    build.onResolve({ filter: /\.wgsl(\?raw)?$/ }, (args) => ({
      path: resolve(args.resolveDir, args.path.replace(/\?raw$/, '')),
      namespace: 'wgsl',
    }));
    build.onLoad({ filter: /.*/, namespace: 'wgsl' }, (args) => {
      const { code, files } = resolveWgsl(args.path);
      return { contents: code, loader: 'text', watchFiles: files };
    });
  },
};
