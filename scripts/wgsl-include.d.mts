import type { Plugin as EsbuildPlugin } from 'esbuild';
import type { Plugin as VitePlugin } from 'vite';

export function resolveWgsl(file: string, chain?: string[]): { code: string; files: string[] };
export function wgslIncludeVite(): VitePlugin;
export const wgslIncludeEsbuild: EsbuildPlugin;
