import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';
import { wgslIncludeVite } from './scripts/wgsl-include.mjs';

export default defineConfig({
  // WGSL `// #include` lines are resolved on `?raw` import, in the page and in worker bundles.
  plugins: [react(), wgslIncludeVite()],
  worker: { format: 'es', plugins: () => [wgslIncludeVite()] },
  optimizeDeps: { exclude: ['h5wasm'], include: ['comlink'] },
  build: { target: 'es2022', sourcemap: true },
  server: { host: '127.0.0.1', port: 5173 },
  preview: { host: '127.0.0.1', port: 4173 },
});
