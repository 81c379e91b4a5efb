/**
 * Compiles every .wgsl file under src/shaders with Dawn's null backend (Tint validation only, no driver) and
 * requires zero errors. Also checks that the check itself catches a syntax error, and that every shader file
 * is reachable through src/gpu/shader-source.ts.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeGpu } from '../gpu/node-gpu.ts';
import { shaderSource } from '../gpu/shader-source.ts';

const root = import.meta.dirname;
const files = listWgsl(root).map((path) => relative(root, path));

function listWgsl(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return listWgsl(path);
    return entry.name.endsWith('.wgsl') ? [path] : [];
  });
}

let device: GPUDevice;

beforeAll(async () => {
  const adapter = await nodeGpu(['backend=null']).requestAdapter();
  if (!adapter)
    throw new Error("Dawn's null backend gave no adapter: is the npm package `webgpu` installed?");
  device = await adapter.requestDevice();
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
    expect(files.length).toBeGreaterThanOrEqual(2);
  });

  it.each(files)('%s compiles without errors', async (file) => {
    const errors = await compile(readFileSync(join(root, file), 'utf8'), file);
    expect(errors).toEqual([]);
  });

  it('reports a syntax error', async () => {
    const errors = await compile('fn broken( { }', 'broken.wgsl');
    expect(errors.length).toBeGreaterThan(0);
  });

  it('every pass shader is loaded through shader-source.ts', () => {
    const passes = files.filter((f) => !f.startsWith('common')).map((f) => f.replace(/\.wgsl$/, ''));
    expect(Object.keys(shaderSource).sort()).toEqual(passes.sort());
    for (const file of passes) {
      expect(shaderSource[file as keyof typeof shaderSource]).toBe(
        readFileSync(join(root, `${file}.wgsl`), 'utf8'),
      );
    }
  });
});

describe('pass pipelines (null backend, default overrides)', () => {
  it.each(Object.keys(shaderSource))('%s builds a compute pipeline', async (name) => {
    device.pushErrorScope('validation');
    const module = device.createShaderModule({ code: shaderSource[name as keyof typeof shaderSource] });
    await device.createComputePipelineAsync({ layout: 'auto', compute: { module, entryPoint: 'main' } });
    const error = await device.popErrorScope();
    expect(error?.message).toBeUndefined();
  });
});
