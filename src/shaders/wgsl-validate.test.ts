/**
 * Compiles every pass shader under src/shaders, with its `// #include` lines resolved (scripts/wgsl-include.mjs),
 * with Dawn's null backend (Tint validation only, no driver) and requires zero errors. Also checks that the check
 * itself catches a syntax error, that every pass is reachable through src/gpu/shader-source.ts with the resolved
 * text, that every snippet under common/ is included by some pass, that the resolver rejects a missing file and a
 * cycle, and that every pass has one CPU twin module named like it (`<pass>.ts`, outside the GPU pass folders).
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveWgsl } from '../../scripts/wgsl-include.mjs';
import { nodeGpu } from '../gpu/node-gpu.ts';
import { DEFAULT_LOAD_DECODE_VARIANT, decodeStorageBuffers } from '../gpu/passes/bslz4-decode-variants.ts';
import { HISTOGRAM_WORKGROUP_BYTES } from '../gpu/passes/detector-transpose.ts';
import { type ShaderName, shaderSource } from '../gpu/shader-source.ts';

const root = import.meta.dirname;
const files = listWgsl(root).map((path) => relative(root, path));
const snippets = files.filter((f) => f.startsWith('common'));
const passes = files.filter((f) => !f.startsWith('common'));

function listWgsl(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return listWgsl(path);
    return entry.name.endsWith('.wgsl') ? [path] : [];
  });
}

const resolved = (file: string) => resolveWgsl(join(root, file));

/** Default limits: 8 storage buffers a stage (the null adapter offers no more). */
let device: GPUDevice;
const LIST_BUFFERS = decodeStorageBuffers(DEFAULT_LOAD_DECODE_VARIANT);

beforeAll(async () => {
  const adapter = await nodeGpu(['backend=null']).requestAdapter();
  if (!adapter)
    throw new Error("Dawn's null backend gave no adapter: is the npm package `webgpu` installed?");
  // `subgroups` for the `qx` decode passes (their first line enables it); the limits stay the defaults.
  device = await adapter.requestDevice({ requiredFeatures: ['subgroups'] });
});

afterAll(() => device?.destroy());

async function compile(code: string, label: string): Promise<string[]> {
  device.pushErrorScope('validation');
  const module = device.createShaderModule({ label, code });
  const info = await module.getCompilationInfo();
  await device.popErrorScope();
  return info.messages
    .filter((m) => m.type === 'error')
    .map((m) => `${label}:${m.lineNum}:${m.linePos} ${m.message}`);
}

describe('WGSL validation (Tint, null backend)', () => {
  it('finds the shader files', () => {
    expect(passes.length).toBeGreaterThanOrEqual(2);
  });

  it.each(passes)('%s compiles without errors (includes resolved)', async (file) => {
    const { code } = resolved(file);
    expect(code).not.toContain('#include');
    const errors = await compile(code, file);
    expect(errors).toEqual([]);
  });

  it('reports a syntax error', async () => {
    const errors = await compile('fn broken( { }', 'broken.wgsl');
    expect(errors.length).toBeGreaterThan(0);
  });

  it('every pass shader is loaded through shader-source.ts, includes resolved', () => {
    const names = passes.map((f) => f.replace(/\.wgsl$/, ''));
    expect(Object.keys(shaderSource).sort()).toEqual(names.sort());
    for (const file of names) {
      expect(shaderSource[file as keyof typeof shaderSource]).toBe(resolved(`${file}.wgsl`).code);
    }
  });

  it('every snippet under common/ is included by a pass', () => {
    const used = new Set(passes.flatMap((f) => resolved(f).files.map((path) => relative(root, path))));
    for (const snippet of snippets) expect(used, snippet).toContain(snippet);
  });

  it('the tANS lane bit reader is one snippet, shared by tans-query and tans-compare', () => {
    const snippet = readFileSync(join(root, 'common/tans-bits.wgsl'), 'utf8').trimEnd();
    for (const file of ['tans-query.wgsl', 'tans-compare.wgsl']) {
      expect(readFileSync(join(root, file), 'utf8')).not.toContain('fn read_bits');
      expect(resolved(file).code).toContain(snippet);
    }
  });

  it('the tANS lane passes take overrides and bindings 0-4 from one snippet, Params their own', () => {
    const snippet = readFileSync(join(root, 'common/tans-lane-bindings.wgsl'), 'utf8').trimEnd();
    for (const file of ['tans-query.wgsl', 'tans-values.wgsl', 'tans-compare.wgsl']) {
      const own = readFileSync(join(root, file), 'utf8');
      expect(own).not.toMatch(/override (WORKGROUP_SIZE|TABLE_LOG|BITS|TOKENS)\b|@binding\([0-4]\)/);
      expect(own).toMatch(/struct Params \{/);
      expect(resolved(file).code).toContain(snippet);
    }
  });
});

/** Passes that share another pass's CPU twin, with the twin's name. */
const SHARED_TWINS: Record<string, string> = {
  'bslz4-decode-multi': 'bslz4-decode',
  'bslz4-decode-list': 'bslz4-decode',
  'bslz4-decode-list-ahead': 'bslz4-decode',
  'bslz4-decode-multi-v4': 'bslz4-decode',
  'bslz4-decode-list-v4': 'bslz4-decode',
  'bslz4-decode-list-ahead-v4': 'bslz4-decode',
  'bslz4-decode-multi-planes': 'bslz4-decode',
  'bslz4-decode-list-planes': 'bslz4-decode',
  'bslz4-decode-list-ahead-planes': 'bslz4-decode',
  'bslz4-decode-list-v4-qx': 'bslz4-decode',
  'bslz4-decode-list-ahead-v4-qx': 'bslz4-decode',
  'bslz4-decode-list-planes-qx': 'bslz4-decode',
  'bslz4-decode-list-ahead-planes-qx': 'bslz4-decode',
  'detector-transpose-histogram': 'detector-transpose',
  'detector-transpose-planes': 'detector-transpose',
  'packed-query': 'packed-index',
  'tans-values': 'tans-decode',
};

describe('CPU twins', () => {
  const src = join(root, '..');
  const modules = listFiles(src).filter(
    (path) => path.endsWith('.ts') && !/[/\\](gpu[/\\]passes|tcbf[/\\]gpu)[/\\]/.test(path),
  );

  it.each(passes)('%s has a CPU twin module of the same name that names the shader', (file) => {
    const name = file.replace(/\.wgsl$/, '');
    const shared = SHARED_TWINS[name];
    const twins = modules.filter((path) => path.endsWith(`/${shared ?? name}.ts`));
    expect(twins.map((path) => relative(src, path))).toHaveLength(1);
    if (shared) {
      // A shared twin is named in the shader's header.
      expect(readFileSync(join(root, file), 'utf8')).toContain(`src/${relative(src, twins[0])}`);
    } else {
      expect(readFileSync(twins[0], 'utf8')).toContain(`${name}.wgsl`);
    }
  });
});

function listFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? listFiles(path) : [path];
  });
}

describe('WGSL includes (scripts/wgsl-include.mjs)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wgsl-include-'));

  it('replaces the include line with the snippet, nested includes too', () => {
    writeFileSync(join(dir, 'a.wgsl'), 'const A = 1u;\n  //  #include "b.wgsl"  \nconst C = 3u;\n');
    writeFileSync(join(dir, 'b.wgsl'), 'const B = 2u;\n// #include "sub/d.wgsl"\n');
    mkdirSync(join(dir, 'sub'), { recursive: true });
    writeFileSync(join(dir, 'sub', 'd.wgsl'), 'const D = 4u;\n');
    const { code, files } = resolveWgsl(join(dir, 'a.wgsl'));
    expect(code).toBe('const A = 1u;\nconst B = 2u;\nconst D = 4u;\nconst C = 3u;\n');
    expect(files.map((f) => relative(dir, f))).toEqual(['a.wgsl', 'b.wgsl', join('sub', 'd.wgsl')]);
  });

  it('a missing snippet names the file and the includer', () => {
    writeFileSync(join(dir, 'm.wgsl'), '// #include "nope.wgsl"\n');
    expect(() => resolveWgsl(join(dir, 'm.wgsl'))).toThrow(
      /cannot read .*nope\.wgsl \(included from .*m\.wgsl\)/,
    );
  });

  it('a cycle is an error', () => {
    writeFileSync(join(dir, 'x.wgsl'), '// #include "y.wgsl"\n');
    writeFileSync(join(dir, 'y.wgsl'), '// #include "x.wgsl"\n');
    expect(() => resolveWgsl(join(dir, 'x.wgsl'))).toThrow(
      /include cycle: .*x\.wgsl -> .*y\.wgsl -> .*x\.wgsl/,
    );
  });
});

/** Validation errors of a pipeline for each of the shader's entry points, on `dev`. */
async function pipelineErrors(dev: GPUDevice, name: ShaderName): Promise<Record<string, string | undefined>> {
  const code = shaderSource[name];
  const entryPoints = [...code.matchAll(/@compute[^\n]*\n\s*fn\s+(\w+)/g)].map((m) => m[1]);
  expect(entryPoints.length).toBeGreaterThan(0);
  const module = dev.createShaderModule({ code });
  const errors: Record<string, string | undefined> = {};
  for (const entryPoint of entryPoints) {
    dev.pushErrorScope('validation');
    // The async form rejects with a GPUPipelineError where the sync one would only report to the scope.
    const rejected = await dev
      .createComputePipelineAsync({ layout: 'auto', compute: { module, entryPoint } })
      .then(
        () => undefined,
        (e: Error) => e.message,
      );
    const scoped = (await dev.popErrorScope())?.message;
    errors[entryPoint] = rejected ?? scoped;
  }
  return errors;
}

describe('pass pipelines (null backend, default overrides)', () => {
  const names = Object.keys(shaderSource) as ShaderName[];
  const lists = [
    'bslz4-decode-list',
    'bslz4-decode-list-ahead',
    'bslz4-decode-list-v4',
    'bslz4-decode-list-ahead-v4',
    'bslz4-decode-list-planes',
    'bslz4-decode-list-ahead-planes',
    'bslz4-decode-list-v4-qx',
    'bslz4-decode-list-ahead-v4-qx',
    'bslz4-decode-list-planes-qx',
    'bslz4-decode-list-ahead-planes-qx',
  ] as const;
  const beyond: string[] = [...lists, 'detector-transpose-histogram'];
  const within8 = names.filter((name) => !beyond.includes(name));

  it.each(within8)(
    '%s builds a compute pipeline for each entry point under the default limits',
    async (name) => {
      for (const error of Object.values(await pipelineErrors(device, name))) expect(error).toBeUndefined();
    },
  );

  // Built on a device with 10 by the list variants' GPU tests (bslz4-decode-variants.gpu.test.ts, SwiftShader).
  it.each(lists)(
    '%s binds decodeStorageBuffers(list variant) = 10 storage buffers: refused at 8',
    async (name) => {
      expect(LIST_BUFFERS).toBe(10);
      const errors = await pipelineErrors(device, name);
      expect(errors.main).toMatch(
        /number of storage buffers \(10\).*exceeds the maximum per-stage limit \(8\)/s,
      );
      // Its flag packing binds two (the load packs the flags with the multi shader's, which every device builds).
      expect(Object.keys(errors)).toEqual(['pack_flags', 'main']);
      expect(errors.pack_flags).toBeUndefined();
    },
  );

  // Built where the adapter offers more (transposeCanCountHistogram) by the transpose and load GPU tests
  // (SwiftShader offers 32 KiB); the load counts the bins in the decode elsewhere.
  it('detector-transpose-histogram needs HISTOGRAM_WORKGROUP_BYTES of workgroup memory: refused at 16 KiB', async () => {
    expect(device.limits.maxComputeWorkgroupStorageSize).toBe(16384);
    expect(HISTOGRAM_WORKGROUP_BYTES).toBe(17408);
    const errors = await pipelineErrors(device, 'detector-transpose-histogram');
    expect(Object.keys(errors)).toEqual(['main', 'main_vec4']);
    for (const error of Object.values(errors)) {
      expect(error).toMatch(
        /workgroup storage \(17408 bytes\) is larger than the maximum allowed \(16384 bytes\)/,
      );
    }
  });
});
