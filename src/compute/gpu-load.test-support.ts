/**
 * What the GPU load's tests share (gpu-load.gpu.test.ts, gpu-load-batches.gpu.test.ts): acquisitions opened from
 * the fixtures (closed after each test), and the resident values read back and compared with the source's.
 */
import { afterEach, expect } from 'vitest';
import { residentParts } from '../gpu/resident-layout';
import { residentValueAt } from '../kernels/detector-transpose';
import { viewAs } from '../source/acquisition-source';
import { openAcquisition } from '../source/hdf5-acquisition';
import type { InputFile } from '../source/input-file';
import { nodeInput } from '../source/node-input';
import { fixture } from '../testing/fixtures';
import type { GpuLoad } from './gpu-load';
import { readBuffer } from './readback';

type Acquisition = Awaited<ReturnType<typeof openAcquisition>>;

/** Value of frame s at pixel p in a resident layout read back from the GPU (its hot bitmap checked too). */
export async function residentValues(device: GPUDevice, load: GpuLoad) {
  const layout = load.plan.resident;
  const buffers = await Promise.all(
    load.resident.map((b, i) => readBuffer(device, b, 0, layout.bufferBytes[i])),
  );
  const words = buffers.map((b) => new Uint32Array(b.buffer, b.byteOffset, b.byteLength / 4));
  if (layout.form === 'planes')
    expect(Array.from(residentParts(layout, words).hot!)).toEqual(Array.from(load.hotBitmap!));
  return (p: number, s: number) => residentValueAt(layout, words, p, s);
}

/** Requires every `step`-th pixel of the first `count` frames in the resident layout to be the source's value. */
export async function expectResidentFrames(
  device: GPUDevice,
  load: GpuLoad,
  source: Acquisition,
  count: number,
  step = 1,
) {
  const pixels = load.plan.pixels;
  const frames = viewAs(await source.readFrames(0, count), source.summary.dtype);
  const value = await residentValues(device, load);
  for (let s = 0; s < count; s++)
    for (let p = 0; p < pixels; p += step)
      if (value(p, s) !== frames[s * pixels + p]) expect.unreachable(`pixel ${p} frame ${s}`);
}

/** Openers of fixture acquisitions for one test file: every file they open is closed after each test. */
export function fixtureOpeners() {
  let opened: InputFile[] = [];
  afterEach(async () => {
    await Promise.all(opened.map((i) => i.close?.()));
    opened = [];
  });
  return {
    async open(paths: string[]) {
      const inputs = await Promise.all(paths.map(nodeInput));
      opened.push(...inputs);
      return openAcquisition(inputs);
    },
    /** A fixture's '/data' dataset as an acquisition. */
    async openFixture(name: string) {
      const inputs = await Promise.all([fixture(name)].map(nodeInput));
      opened.push(...inputs);
      return openAcquisition(inputs, { dataset: '/data' });
    },
  };
}
