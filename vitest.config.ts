import { defineConfig } from 'vitest/config';
import { wgslIncludeVite } from './scripts/wgsl-include.mjs';

// Unit tests (*.test.ts) and GPU tests (*.gpu.test.ts, Node + Dawn) run in one vitest invocation.
// scripts/gpu-env.sh chooses the Vulkan driver; the GPU harness fails clearly when no adapter exists.
export default defineConfig({
  // WGSL `// #include` lines are resolved on `?raw` import, as in the app build.
  plugins: [wgslIncludeVite()],
  test: {
    include: ['src/**/*.test.ts', 'scripts/**/*.test.ts'],
    environment: 'node',
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
