import { defineConfig } from 'vitest/config';

// Unit tests (*.test.ts) and GPU tests (*.gpu.test.ts, Node + Dawn) run in one vitest invocation.
// scripts/gpu-env.sh chooses the Vulkan driver; the GPU harness fails clearly when no adapter exists.
export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'scripts/**/*.test.ts'],
    environment: 'node',
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
