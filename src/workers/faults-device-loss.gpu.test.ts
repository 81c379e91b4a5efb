import { describe, expect } from 'vitest';
import { nodeGpu } from '../gpu/node-gpu';
import { withGpu } from '../gpu/test-harness';
import { nodeInput } from '../source/node-input';
import { fixture, loadOracle } from '../testing/fixtures';
import { createAcquisitionService } from './acquisition-service';

const arina = loadOracle().acquisitions.arina;
const arinaPaths = [arina.master, ...arina.shards].map(fixture);

describe('a GPU device lost in the middle of a load (fault injection)', () => {
  withGpu(
    'the load finishes on the CPU path with the reason, exactly; the next load gets a new device',
    async () => {
      const service = createAcquisitionService({ gpu: nodeGpu(), gpuBatchFrames: 64 });
      await service.openInputs(await Promise.all(arinaPaths.map(nodeInput)));
      await service.injectFault('gpu-device-lost');
      const stages: string[] = [];
      const lost = await service.load((p) => stages.push(`${p.stage}:${p.framesDone}`));
      expect(lost.backend).toBe('cpu');
      expect(lost.fallbackReason).toMatch(/The GPU device was lost/);
      // The GPU path had started decoding before the device went away.
      expect(stages.some((s) => s.startsWith('decode:'))).toBe(true);
      expect(Array.from(lost.frameTotals)).toEqual(arina.unflagged.frame_sums);
      expect(await service.gpuMemory()).toEqual({ buffers: 0, bytes: 0 });
      const again = await service.load();
      expect(again.backend).toBe('webgpu');
      expect(Array.from(again.frameTotals)).toEqual(arina.unflagged.frame_sums);
      await service.close();
    },
  );
});
