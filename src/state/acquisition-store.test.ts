import { describe, expect, it } from 'vitest';
import { annulus, disk, regionContains } from '../products/detector-geometry';
import {
  composeMask,
  extendStroke,
  type MaskLayer,
  shapeLayer,
  strokeLayer,
} from '../products/detector-layers';
import type { AcquisitionApi, AcquisitionSummary, LoadProgress } from '../workers/acquisition-api';
import { createAcquisitionStore, fileList, scanCentre, scanIndex } from './acquisition-store';

const SCAN: [number, number] = [4, 6];
const DET: [number, number] = [16, 16];

/** Frame i: a bright disk (radius 3 around (7, 8)) of 100 + i counts on a background of 1; pixel 0 flagged. */
function makeFrames(frameCount: number) {
  const pixels = DET[0] * DET[1];
  const frames = new Uint16Array(frameCount * pixels);
  for (let i = 0; i < frameCount; i++) {
    for (let p = 0; p < pixels; p++) {
      const row = Math.floor(p / DET[1]);
      const col = p % DET[1];
      frames[i * pixels + p] = (col - 7) ** 2 + (row - 8) ** 2 <= 9 ? 100 + i : 1;
    }
    frames[i * pixels] = 65535;
  }
  return frames;
}

function summaryFor(name: string, scan = SCAN): AcquisitionSummary {
  return {
    name,
    kind: 'arina-master',
    files: [{ name: `${name}_master.h5`, size: 1, dataset: '/entry/data/data', frames: scan[0] * scan[1] }],
    scan,
    scanFromMetadata: true,
    detector: DET,
    dtype: 'uint16',
    frameCount: scan[0] * scan[1],
    compression: 'bitshuffle/LZ4',
    chunkIndex: 'btree-v1',
    compressedBytes: 1234,
    flaggedPixels: 1,
    calibration: {},
  };
}

/** An in-memory AcquisitionApi with the worker's semantics: a failed open keeps the previous acquisition. */
function fakeApi(options: { delays?: Record<string, number>; failLoad?: boolean } = {}) {
  const sent: Uint8Array[] = [];
  let current: { summary: AcquisitionSummary; frames: Uint16Array } | null = null;
  const pixels = DET[0] * DET[1];
  const calls: string[] = [];
  const wait = (name: string) => new Promise((r) => setTimeout(r, options.delays?.[name] ?? 0));
  const need = () => {
    if (!current) throw new Error('No acquisition is open.');
    return current;
  };
  const api: AcquisitionApi = {
    async open(files) {
      calls.push(`open ${files[0].name}`);
      await wait(files[0].name);
      if (!files[0].name.endsWith('.h5')) throw new Error(`${files[0].name} is not an HDF5 file`);
      const name = files[0].name.replace(/_master\.h5$/, '');
      const scan: [number, number] = name === 'small' ? [2, 3] : SCAN;
      current = { summary: summaryFor(name, scan), frames: makeFrames(scan[0] * scan[1]) };
      return current.summary;
    },
    async load(onProgress?: (p: LoadProgress) => void) {
      const { summary, frames } = need();
      calls.push('load');
      if (options.failLoad) throw new Error('Chunk 3 is truncated (file x_data_000001.h5)');
      const frameTotals = new Float64Array(summary.frameCount);
      const sumDiffraction = new Float64Array(pixels);
      for (let i = 0; i < summary.frameCount; i++) {
        for (let p = 1; p < pixels; p++) {
          frameTotals[i] += frames[i * pixels + p];
          sumDiffraction[p] += frames[i * pixels + p];
        }
        onProgress?.({ framesDone: i + 1, frameCount: summary.frameCount });
      }
      return { sumDiffraction, frameTotals, maxCount: 200, countAbove255: 0, elapsedMs: 5, backend: 'cpu' };
    },
    async pixelMask() {
      const m = new Uint8Array(pixels);
      m[0] = 1;
      return m;
    },
    async frame(index) {
      const { frames } = need();
      calls.push(`frame ${index}`);
      return frames.slice(index * pixels, (index + 1) * pixels);
    },
    async virtualImage(mask) {
      const { summary, frames } = need();
      calls.push('virtualImage');
      sent.push(mask);
      await wait('virtualImage');
      const out = new Float64Array(summary.frameCount);
      for (let i = 0; i < summary.frameCount; i++) {
        for (let p = 1; p < pixels; p++) if (mask[p]) out[i] += frames[i * pixels + p];
      }
      return out;
    },
    async setBackend() {},
    async com() {
      throw new Error('not used here');
    },
    async cancel() {},
    async setMemoryBudget() {},
    async injectFault() {},
    async gpuMemory() {
      return { buffers: 0, bytes: 0 };
    },
    async regionSum(region) {
      const { summary, frames } = need();
      calls.push('regionSum');
      await wait('regionSum');
      const out = new Float64Array(pixels);
      for (let row = region.row0; row <= region.row1; row++)
        for (let col = region.col0; col <= region.col1; col++) {
          const i = row * summary.scan[1] + col;
          for (let p = 0; p < pixels; p++) out[p] += frames[i * pixels + p];
        }
      return out;
    },
    async close() {
      current = null;
    },
  };
  return { api, calls, sent };
}

const file = (name: string) => new File([new Uint8Array(8)], name);

describe('acquisition store', () => {
  it('starts idle', () => {
    const { api } = fakeApi();
    const store = createAcquisitionStore(() => api);
    expect(store.getState()).toMatchObject({ phase: 'idle', summary: null, error: null, detectorMode: 'bf' });
  });

  it('opens, loads, and shows the BF image and the centre frame', async () => {
    const { api } = fakeApi();
    let t = 0;
    const store = createAcquisitionStore(
      () => api,
      () => (t += 10),
    );
    const progress: number[] = [];
    store.subscribe((s) => {
      if (s.progress) progress.push(s.progress.framesDone);
    });
    await store.getState().openFiles([file('demo_master.h5'), file('demo_data_000001.h5')]);
    const s = store.getState();
    expect(s.phase).toBe('ready');
    expect(s.error).toBeNull();
    expect(s.summary?.scan).toEqual([4, 6]);
    expect(s.picked).toEqual({ row: 2, col: 3 });
    expect(s.frame?.index).toBe(15);
    expect(progress).toContain(24);
    expect(s.elapsedMs).toBeGreaterThan(0);
    const data = s.data!;
    expect(data.geometry.centre).toEqual({ cx: 7, cy: 8 });
    // The BF disk covers the bright disk; the image is the exact masked sum per frame.
    const image = s.virtualImages.bf!;
    const pixels = 256;
    const frame = s.frame!.values;
    let expected = 0;
    for (let p = 0; p < pixels; p++) if (s.masks!.bf[p] && !data.pixelMask[p]) expected += frame[p];
    expect(image[15]).toBe(expected);
    expect(image[15]).toBeGreaterThanOrEqual(29 * (100 + 15));
    for (let row = 0; row < 16; row++) {
      for (let col = 0; col < 16; col++) {
        expect(s.masks!.bf[row * 16 + col]).toBe(regionContains(data.geometry.bf, row, col) ? 1 : 0);
      }
    }
  });

  it('keeps the previous acquisition when a later open fails, with a readable error', async () => {
    const { api } = fakeApi();
    const store = createAcquisitionStore(() => api);
    await store.getState().openFiles([file('demo_master.h5')]);
    const before = store.getState();
    await store.getState().openFiles([file('notes.txt')]);
    const s = store.getState();
    expect(s.phase).toBe('ready');
    expect(s.error).toBe('Could not open notes.txt: notes.txt is not an HDF5 file.');
    expect(s.summary).toBe(before.summary);
    expect(s.virtualImages.bf).toBe(before.virtualImages.bf);
    await s.pick({ row: 0, col: 1 });
    expect(store.getState().frame?.index).toBe(1);
    store.getState().clearError();
    expect(store.getState().error).toBeNull();
  });

  it('reports a failed first open as an error with nothing loaded', async () => {
    const { api } = fakeApi();
    const store = createAcquisitionStore(() => api);
    await store.getState().openFiles([file('notes.txt')]);
    expect(store.getState()).toMatchObject({ phase: 'error', summary: null, data: null });
    await store.getState().openFiles([]);
    expect(store.getState().error).toBe('No files were given.');
  });

  it('reports a failed load', async () => {
    const { api } = fakeApi({ failLoad: true });
    const store = createAcquisitionStore(() => api);
    await store.getState().openFiles([file('demo_master.h5')]);
    expect(store.getState().phase).toBe('error');
    expect(store.getState().error).toBe('Could not load demo: Chunk 3 is truncated (file x_data_000001.h5)');
  });

  it('reports a failed fetch', async () => {
    const { api } = fakeApi();
    const store = createAcquisitionStore(() => api);
    await store.getState().openFrom('the demo acquisition', async () => {
      throw new Error('HTTP 404 for demo/demo_master.h5');
    });
    expect(store.getState().error).toBe(
      'Could not fetch the demo acquisition: HTTP 404 for demo/demo_master.h5.',
    );
  });

  it('picks positions (clamped) and computes the ADF image once', async () => {
    const { api, calls } = fakeApi();
    const store = createAcquisitionStore(() => api);
    await store.getState().openFiles([file('demo_master.h5')]);
    await store.getState().pick({ row: 9, col: -3 });
    expect(store.getState().picked).toEqual({ row: 3, col: 0 });
    expect(store.getState().frame?.index).toBe(18);
    await store.getState().setDetectorMode('adf');
    await store.getState().setDetectorMode('bf');
    await store.getState().setDetectorMode('adf');
    expect(calls.filter((c) => c === 'virtualImage').length).toBe(2);
    const s = store.getState();
    expect(s.detectorMode).toBe('adf');
    // The disk lies inside the BF radius, so the ADF annulus sees only background counts of 1.
    const adfPixels = Array.from(s.masks!.adf).filter((v, p) => v && !s.data!.pixelMask[p]).length;
    expect(s.virtualImages.adf![0]).toBe(adfPixels);
  });

  it('follows a dragged region with one request in flight, ending with the final mask', async () => {
    const { api, sent } = fakeApi({ delays: { virtualImage: 5 } });
    const store = createAcquisitionStore(() => api);
    await store.getState().openFiles([file('demo_master.h5')]);
    const start = store.getState().regions!.bf;
    expect(start.kind).toBe('disk');
    const before = sent.length;
    // Ten edits in a row while the worker is busy: the store asks for the first and then the newest only.
    const edits: Promise<void>[] = [];
    for (let i = 1; i <= 10; i++) edits.push(store.getState().setRegion('bf', disk(7, 8, 1 + i * 0.5)));
    expect(store.getState().virtualBusy).toBe(true);
    await Promise.all(edits);
    await store.getState().virtualSettled();
    const s = store.getState();
    expect(s.virtualBusy).toBe(false);
    expect(sent.length - before).toBe(2);
    expect(s.regions!.bf).toEqual(disk(7, 8, 6));
    expect(s.imageMasks.bf).toBe(s.masks!.bf);
    expect(sent.at(-1)).toBe(s.masks!.bf);
    // The image is the exact masked sum of every frame.
    const pixels = 256;
    for (let i = 0; i < 24; i++) {
      const frame = await api.frame(i);
      let expected = 0;
      for (let p = 1; p < pixels; p++) if (s.masks!.bf[p]) expected += frame[p];
      expect(s.virtualImages.bf![i]).toBe(expected);
    }
    for (let row = 0; row < 16; row++)
      for (let col = 0; col < 16; col++)
        expect(s.masks!.bf[row * 16 + col]).toBe((col - 7) ** 2 + (row - 8) ** 2 <= 36 ? 1 : 0);
  });

  it('restores presets (BF disk, ABF half to full BF radius, ADF) and moves the pick with the arrows', async () => {
    const { api } = fakeApi();
    const store = createAcquisitionStore(() => api);
    await store.getState().openFiles([file('demo_master.h5')]);
    const g = store.getState().data!.geometry;
    await store.getState().setRegion('abf', annulus(3, 3, 1, 2));
    await store.getState().applyPreset('abf');
    const s = store.getState();
    expect(s.error).toBeNull();
    expect(s.detectorMode).toBe('abf');
    expect(s.regions!.abf).toEqual(annulus(g.centre.cx, g.centre.cy, g.bfRadius / 2, g.bfRadius));
    expect(s.imageMasks.abf).toBe(s.masks!.abf);
    await store.getState().applyPreset('adf');
    expect(store.getState().regions!.adf).toEqual(g.adf);
    await store.getState().movePick(-1, 1);
    expect(store.getState().picked).toEqual({ row: 1, col: 4 });
    await store.getState().movePick(-5, 9);
    expect(store.getState().picked).toEqual({ row: 0, col: 5 });
    expect(store.getState().frame?.index).toBe(5);
  });

  it('lets the newest open win when two overlap', async () => {
    const { api } = fakeApi({ delays: { 'slow_master.h5': 30 } });
    const store = createAcquisitionStore(() => api);
    const first = store.getState().openFiles([file('slow_master.h5')]);
    await new Promise((r) => setTimeout(r, 5));
    const second = store.getState().openFiles([file('small_master.h5')]);
    await Promise.all([first, second]);
    expect(store.getState().phase).toBe('ready');
    // The newer open waited for the slow one in the worker; the store and the worker agree on 'small'.
    expect(store.getState().summary?.name).toBe('small');
    expect(store.getState().virtualImages.bf?.length).toBe(6);
    expect(store.getState().frame?.index).toBe(4);
  });

  it('names files briefly', () => {
    expect(fileList([{ name: 'a' }, { name: 'b' }])).toBe('a, b');
    expect(fileList(['a', 'b', 'c', 'd', 'e'].map((name) => ({ name })))).toBe('a, b, c and 2 more');
    expect(scanIndex({ scan: [4, 6] }, { row: 2, col: 3 })).toBe(15);
    expect(scanCentre({ scan: [5, 7] })).toEqual({ row: 2, col: 3 });
  });

  it('combines shapes and brush strokes into the mask, and the image follows each edit exactly', async () => {
    const { api } = fakeApi();
    const store = createAcquisitionStore(() => api);
    await store.getState().openFiles([file('demo_master.h5')]);
    const s = store.getState();
    const primary = s.regions!.bf;
    const expectImage = async (layers: MaskLayer[]) => {
      await store.getState().virtualSettled();
      const now = store.getState();
      const mask = composeMask(primary, layers, 16, 16);
      expect(now.masks!.bf).toEqual(mask);
      expect(now.imageMasks.bf).toBe(now.masks!.bf);
      const frame = await api.frame(5);
      let sum = 0;
      for (let p = 1; p < 256; p++) if (mask[p]) sum += frame[p];
      expect(now.virtualImages.bf![5]).toBe(sum);
    };
    // Subtract the centre of the BF disk: a hole.
    const hole = shapeLayer(disk(7, 8, 1), 'subtract');
    expect(store.getState().addLayer(hole)).toBe(0);
    expect(store.getState().selectedLayer).toBe(0);
    await expectImage([hole]);
    // Edit the selected shape (a layer), not the primary region.
    const bigger = { ...hole, region: disk(7, 8, 2) };
    await store.getState().setSelectedRegion(bigger.region);
    expect(store.getState().regions!.bf).toBe(primary);
    await expectImage([bigger]);
    // A brush stroke adds a corner; removing the hole keeps the stroke.
    const stroke = extendStroke(strokeLayer('add', 1, [[1, 1]]), 4, 1);
    expect(store.getState().addLayer(stroke)).toBe(1);
    expect(store.getState().selectedLayer).toBe(0);
    await expectImage([bigger, stroke]);
    await store.getState().removeLayer(0);
    expect(store.getState().selectedLayer).toBe(-1);
    await expectImage([stroke]);
    // Other detectors are untouched; the preset removes the layers.
    expect(store.getState().layers.adf).toEqual([]);
    await store.getState().applyPreset('bf');
    expect(store.getState().layers.bf).toEqual([]);
    await expectImage([]);
  });

  it('sums the pattern over a picked scan region, and a later pick of a position shows its frame', async () => {
    const { api } = fakeApi();
    const store = createAcquisitionStore(() => api);
    await store.getState().openFiles([file('demo_master.h5')]);
    const region = { row0: 1, row1: 2, col0: 3, col1: 5 };
    await store.getState().pickRegion(region);
    const s = store.getState();
    expect(s.patternView).toBe('region');
    expect(s.regionPattern?.region).toEqual(region);
    const frames = makeFrames(24);
    const expected = new Float64Array(256);
    for (const i of [9, 10, 11, 15, 16, 17]) for (let p = 0; p < 256; p++) expected[p] += frames[i * 256 + p];
    expect(s.regionPattern?.values).toEqual(expected);
    // The flagged pixel is summed too (6 x 65535), like a frame shows it.
    expect(s.regionPattern?.values[0]).toBe(6 * 65535);
    await store.getState().pick({ row: 0, col: 0 });
    expect(store.getState().patternView).toBe('frame');
    expect(store.getState().frame?.index).toBe(0);
  });

  it('forgets the acquisition when the worker dies, says so, and opens again afterwards', async () => {
    const { api } = fakeApi({ delays: { virtualImage: 30 } });
    const store = createAcquisitionStore(() => api);
    await store.getState().openFiles([file('demo_master.h5')]);
    store.getState().workerLost('The acquisition worker stopped.');
    expect(store.getState()).toMatchObject({ phase: 'error', summary: null, data: null, regions: null });
    expect(store.getState().error).toBe(
      'The acquisition worker stopped. A new worker was started; open the files again.',
    );
    await store.getState().openFiles([file('small_master.h5')]);
    expect(store.getState()).toMatchObject({ phase: 'ready', error: null });
    expect(store.getState().summary?.scan).toEqual([2, 3]);
  });
});
