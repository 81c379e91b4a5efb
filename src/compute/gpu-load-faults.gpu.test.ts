import { afterAll, describe, expect } from 'vitest';
import { isStemflowError, StemflowError } from '../errors';
import { trackBuffers, withGpu } from '../gpu/test-harness';
import { openAcquisition } from '../source/hdf5-acquisition';
import type { InputFile } from '../source/input-file';
import { nodeInput } from '../source/node-input';
import { fixture, loadOracle } from '../testing/fixtures';
import { loadToGpu } from './gpu-load';

const oracle = loadOracle();
const frameSums = oracle.files['many_ext_u16_32.h5'].datasets['/data'].frame_sums;
const opened: InputFile[] = [];
afterAll(async () => {
  await Promise.all(opened.map((i) => i.close?.()));
});

/** An input whose reads start failing after `okReads` reads, as a file on a disconnected drive does. */
async function failingInput(path: string, okReads: number): Promise<InputFile> {
  const input = await nodeInput(path);
  opened.push(input);
  let reads = 0;
  return {
    ...input,
    bytes: {
      name: input.bytes.name,
      size: input.bytes.size,
      read(offset, length, signal) {
        if (++reads > okReads) {
          return Promise.reject(
            new StemflowError('not-found', 'The file could no longer be read (device removed?)', {
              file: input.name,
            }),
          );
        }
        return input.bytes.read(offset, length, signal);
      },
    },
  };
}

async function source(input?: InputFile) {
  const inputs = [input ?? (await nodeInput(fixture('many_ext_u16_32.h5')))];
  opened.push(...inputs);
  return openAcquisition(inputs, { dataset: '/data' });
}

describe('faults during a GPU load: a typed error, and nothing left allocated', () => {
  withGpu('reads that start failing in the middle of the load', async (ctx) => {
    // Opening reads the superblock, object headers and index; the load's chunk reads come after.
    const probe = await failingInput(fixture('many_ext_u16_32.h5'), Number.POSITIVE_INFINITY);
    await source(probe);
    const src = await source(await failingInput(fixture('many_ext_u16_32.h5'), 40));
    const live = trackBuffers(ctx.device);
    const e = await loadToGpu(ctx, src, { batchFrames: 64, slots: 2 }).catch((x) => x);
    live.stop();
    expect(isStemflowError(e, 'not-found')).toBe(true);
    expect(e.file).toBe('many_ext_u16_32.h5');
    expect(live.createdLabels()).toContain('bslz4-decode scratch');
    expect(live.alive()).toBe(0);
  });

  for (const stage of ['plan', 'decode', 'finish'] as const) {
    withGpu(`cancellation at the '${stage}' stage`, async (ctx) => {
      const src = await source();
      const controller = new AbortController();
      const live = trackBuffers(ctx.device);
      const e = await loadToGpu(ctx, src, {
        batchFrames: 64,
        signal: controller.signal,
        onProgress: (p) => {
          if (p.stage === stage) controller.abort();
        },
      }).catch((x) => x);
      live.stop();
      if (stage === 'finish') {
        // The last batch was already submitted: the load completes, exact, and is the caller's to release.
        expect(Array.from(e.frameTotals, Number)).toEqual(frameSums);
        e.release();
      } else {
        expect(isStemflowError(e, 'aborted')).toBe(true);
      }
      // The decode scratch is allocated with the other buffers (aborts are seen once batches start), and freed.
      expect(live.createdLabels()).toContain('bslz4-decode scratch');
      expect(live.alive()).toBe(0);
    });
  }

  withGpu('cancellation before the load starts allocates nothing', async (ctx) => {
    const src = await source();
    const live = trackBuffers(ctx.device);
    const e = await loadToGpu(ctx, src, { signal: AbortSignal.abort() }).catch((x) => x);
    live.stop();
    expect(isStemflowError(e, 'aborted')).toBe(true);
    expect(live.alive()).toBe(0);
  });
});
