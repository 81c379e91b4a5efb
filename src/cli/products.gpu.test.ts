import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { withGpu } from '../gpu/test-harness';
import { DEMO, fixture, loadOracle, ROOT } from '../testing/fixtures';
import { computeProducts } from './products';

const frozen = JSON.parse(readFileSync(join(ROOT, 'test', 'parity', 'products.json'), 'utf8'));
const arina = loadOracle().acquisitions.arina;
const demo = loadOracle(DEMO).acquisitions.demo;
const sets = {
  arina: [arina.master, ...arina.shards].map(fixture),
  demo: [demo.master, ...demo.shards].map((n) => join(DEMO, n)),
};

describe('stemflow products: WebGPU and the CPU twins reproduce the frozen parity record', () => {
  for (const [name, paths] of Object.entries(sets)) {
    withGpu(
      `${name}: webgpu and cpu print the same numbers`,
      async () => {
        for (const backend of ['cpu', 'webgpu'] as const) {
          const { backend: used, ...report } = await computeProducts(paths, backend);
          expect(used).toBe(backend);
          expect(report).toEqual(frozen[name]);
        }
      },
      180_000,
    );
  }
});
