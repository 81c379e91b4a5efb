import { defineConfig, devices } from '@playwright/test';

// e2e tests against the production build (`vite build` first; `vite preview` serves dist/).
// Debian's chromium with WebGPU on SwiftShader: never add --disable-software-rasterizer or --use-gl
// (they remove WebGPU), nor --user-data-dir (Playwright makes a fresh profile). See shared/webgpu-on-cpu.md.
export default defineConfig({
  testDir: 'e2e',
  fullyParallel: false,
  workers: 1,
  retries: 0,
  // Loads run on SwiftShader (a CPU) here and in CI: generous, never a performance assertion.
  timeout: 300_000,
  expect: { timeout: 60_000 },
  reporter: process.env.CI ? [['list'], ['html', { open: 'never' }]] : 'list',
  use: {
    baseURL: 'http://127.0.0.1:4173',
    trace: 'retain-on-failure',
    actionTimeout: 90_000,
    navigationTimeout: 60_000,
  },
  projects: [
    {
      name: 'chromium',
      use: {
        ...devices['Desktop Chrome'],
        launchOptions: {
          executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
          args: [
            '--enable-unsafe-webgpu',
            '--disable-quic',
            '--disable-background-networking',
            '--disable-component-update',
            '--disable-sync',
            '--no-first-run',
          ],
        },
      },
    },
  ],
  webServer: {
    command: 'npx vite preview --port 4173 --strictPort',
    url: 'http://127.0.0.1:4173',
    reuseExistingServer: !process.env.CI,
    timeout: 120_000,
  },
});
