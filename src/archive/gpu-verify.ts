/**
 * Exhaustive verification on the GPU. Per record: the source's stored chunks are uploaded and decoded by
 * bslz4-decode.wgsl into a frame-major scratch buffer, the record's lanes are uploaded and
 * tans-compare.wgsl decodes every lane and compares every value. Mismatch counts per block and lane error
 * codes stay on the GPU until one readback at the end; the host waits only for bounded back-pressure (at
 * most two records in flight). CPU twin: `cpuVerifier` (verify.ts) over `tansCompare` (tans-decode.ts).
 */
import { StemflowError, throwIfAborted } from '../errors';
import { checkBindable, type DispatchChunk, encodeChunks } from '../gpu/chunked-dispatch';
import { createAuditBuffer, createBslz4DecodePass } from '../gpu/passes/bslz4-decode';
import { structLayout } from '../gpu/uniform-layout';
import source from '../shaders/tans-compare.wgsl?raw';
import type { AcquisitionSource } from '../source/acquisition-source';
import { NEIGHBOUR_BUCKETS } from './hybrid-uint';
import { DTYPE_BITS } from './lanes';
import type { ArchiveAcquisition } from './reader';
import type { VerifyReport } from './verify';

const layout = structLayout(source, 'Params');
const LANES_PER_DISPATCH = 65536;
const WORKGROUP = 64;

export interface TansComparePass {
  encode(
    encoder: GPUCommandEncoder,
    job: {
      data: GPUBuffer;
      dataWords: number;
      offsets: GPUBuffer;
      cells: GPUBuffer;
      classMap: GPUBuffer;
      reference: GPUBuffer;
      mismatches: GPUBuffer;
      errors: GPUBuffer;
      frames: number;
      slices: number;
      slicePixels: number;
      pixels: number;
      wordsPerFrame: number;
      blockFrames: number;
      blockBase: number;
      laneBase: number;
      cols: number;
    },
  ): GPUBuffer;
}

export function createTansComparePass(
  device: GPUDevice,
  { bits, tableLog, tokens }: { bits: 8 | 16 | 32; tableLog: number; tokens: number },
): TansComparePass {
  const pipeline = device.createComputePipeline({
    label: `tans-compare u${bits}`,
    layout: 'auto',
    compute: {
      module: device.createShaderModule({ label: 'tans-compare.wgsl', code: source }),
      entryPoint: 'main',
      constants: { WORKGROUP_SIZE: WORKGROUP, TABLE_LOG: tableLog, BITS: bits, TOKENS: tokens },
    },
  });
  return {
    encode(encoder, job) {
      for (const [b, what] of [
        [job.data, 'record data'],
        [job.reference, 'reference'],
      ] as const) {
        checkBindable(device, b, what);
      }
      const lanes = job.frames * job.slices;
      const chunks: DispatchChunk[] = [];
      for (let first = 0; first < lanes; first += LANES_PER_DISPATCH) {
        const count = Math.min(LANES_PER_DISPATCH, lanes - first);
        chunks.push({
          params: {
            lane_first: first,
            lane_count: count,
            frames: job.frames,
            slices: job.slices,
            slice_pixels: job.slicePixels,
            pixels: job.pixels,
            words_per_frame: job.wordsPerFrame,
            block_frames: job.blockFrames,
            block_base: job.blockBase,
            data_words: job.dataWords,
            cols: job.cols,
            lane_base: job.laneBase,
          },
          workgroups: Math.ceil(count / WORKGROUP),
        });
      }
      return encodeChunks(
        encoder,
        {
          device,
          pipeline,
          layout,
          label: 'tans-compare',
          bindings: [
            { binding: 1, resource: { buffer: job.data } },
            { binding: 2, resource: { buffer: job.offsets } },
            { binding: 3, resource: { buffer: job.cells } },
            { binding: 4, resource: { buffer: job.classMap } },
            { binding: 5, resource: { buffer: job.reference } },
            { binding: 6, resource: { buffer: job.mismatches } },
            { binding: 7, resource: { buffer: job.errors } },
          ],
        },
        chunks,
      );
    },
  };
}

export interface GpuVerifyTimings {
  readMs: number;
  uploadMs: number;
  gpuWaitMs: number;
  totalMs: number;
}

/**
 * Verifies every count of an archived acquisition against its source on the GPU. The source must be
 * bitshuffle/LZ4 with one frame per chunk (`storedCodec.gpu`); otherwise use the CPU verifier.
 */
export async function verifyAcquisitionGpu(
  device: GPUDevice,
  acq: ArchiveAcquisition,
  src: AcquisitionSource,
  options: { signal?: AbortSignal; onProgress?: (framesDone: number, frameCount: number) => void } = {},
): Promise<VerifyReport & { timings: GpuVerifyTimings; sourceErrors: number }> {
  const { info, geometry } = acq;
  const { signal } = options;
  if (!src.storedCodec.gpu)
    throw new StemflowError('unsupported', `GPU verification: ${src.storedCodec.reason}`);
  const frameCount = info.scan[0] * info.scan[1];
  if (
    src.frameCount !== frameCount ||
    src.summary.dtype !== info.dtype ||
    src.summary.detector.join() !== info.detector.join()
  ) {
    throw new StemflowError(
      'mismatch',
      'The source is not the archived acquisition (frames, detector or dtype differ).',
    );
  }
  const t0 = performance.now();
  const bits = DTYPE_BITS[info.dtype];
  const elem = (bits / 8) as 1 | 2 | 4;
  const pixels = geometry.pixels;
  const wordsPerFrame = Math.ceil((pixels * elem) / 4);
  const tokens = acq.records[0].tables.tokens;
  const L = 1 << info.tableLog;
  const maxFrames = Math.max(...acq.records.map((r) => r.frames));
  const maxDataWords = Math.max(1, ...acq.records.map((r) => r.dataWords));
  const storedSizes = src.storedSizes();
  let maxStored = 4;
  for (const r of acq.records) {
    let s = 0;
    for (let f = r.firstFrame; f < r.firstFrame + r.frames; f++) s += storedSizes[f];
    maxStored = Math.max(maxStored, s);
  }
  const blocks = acq.records.reduce((n, r) => n + Math.ceil(r.frames / info.blockFrames), 0);
  const buffers: GPUBuffer[] = [];
  const make = (label: string, size: number, usage: number) => {
    const b = device.createBuffer({
      label: `verify ${label}`,
      size: Math.ceil(Math.max(4, size) / 4) * 4,
      usage,
    });
    buffers.push(b);
    return b;
  };
  const STORAGE_IN = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST;
  device.pushErrorScope('out-of-memory');
  const compressed = make('compressed', maxStored + 4, STORAGE_IN);
  const index = make('index', maxFrames * 8, STORAGE_IN);
  const flags = make('flags', pixels * 4, STORAGE_IN);
  const decoded = make('decoded', maxFrames * wordsPerFrame * 4, GPUBufferUsage.STORAGE);
  const frameErrors = make('frame errors', frameCount * 4, GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC);
  const totals = make('frame totals', frameCount * 8, GPUBufferUsage.STORAGE);
  const audit = createAuditBuffer(device, 'verify audit');
  buffers.push(audit);
  const data = make('record data', maxDataWords * 4, STORAGE_IN);
  const offsets = make('lane offsets', (maxFrames * geometry.slices + 1) * 4, STORAGE_IN);
  const cells = make('decode cells', info.classes * NEIGHBOUR_BUCKETS * L * 4, STORAGE_IN);
  const classMap = make('class map', pixels * 4, STORAGE_IN);
  const mismatches = make(
    'mismatches',
    blocks * 4,
    GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
  );
  const laneErrors = make(
    'lane errors',
    frameCount * geometry.slices * 4,
    GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC,
  );
  const oom = await device.popErrorScope();
  try {
    if (oom)
      throw new StemflowError('budget', `GPU verification: the GPU ran out of memory (${oom.message}).`);
    const decode = createBslz4DecodePass(device, { elemSize: elem });
    const compare = createTansComparePass(device, { bits, tableLog: info.tableLog, tokens });
    const timings: GpuVerifyTimings = { readMs: 0, uploadMs: 0, gpuWaitMs: 0, totalMs: 0 };
    let blockBase = 0;
    const inFlight: Promise<undefined>[] = [];
    for (const rec of acq.records) {
      throwIfAborted(signal);
      let t = performance.now();
      const [stored, words] = await Promise.all([
        src.readStored(rec.firstFrame, rec.frames, signal),
        acq.readRecordData(rec.index, signal),
      ]);
      timings.readMs += performance.now() - t;
      t = performance.now();
      const idx = new Uint32Array(rec.frames * 2);
      for (let f = 0; f < rec.frames; f++) {
        idx[2 * f] = stored.offsets[f];
        idx[2 * f + 1] = stored.sizes[f];
      }
      const padded = stored.bytes.byteLength % 4 === 0 ? stored.bytes : copyPadded(stored.bytes);
      device.queue.writeBuffer(compressed, 0, padded);
      device.queue.writeBuffer(index, 0, idx);
      device.queue.writeBuffer(data, 0, words);
      device.queue.writeBuffer(offsets, 0, rec.offsets);
      device.queue.writeBuffer(cells, 0, rec.tables.decodeCells);
      device.queue.writeBuffer(classMap, 0, Uint32Array.from(rec.tables.classMap));
      timings.uploadMs += performance.now() - t;
      const encoder = device.createCommandEncoder({ label: `verify record ${rec.index}` });
      const p1 = decode.encode(encoder, {
        compressed,
        compressedBytes: padded.byteLength,
        index,
        flags,
        decoded,
        errors: frameErrors,
        totals,
        audit,
        frameCount: rec.frames,
        pixels,
        firstFrame: rec.firstFrame,
        wordsPerFrame,
      });
      const p2 = compare.encode(encoder, {
        data,
        dataWords: rec.dataWords,
        offsets,
        cells,
        classMap,
        reference: decoded,
        mismatches,
        errors: laneErrors,
        frames: rec.frames,
        slices: geometry.slices,
        slicePixels: geometry.slicePixels,
        pixels,
        wordsPerFrame,
        blockFrames: info.blockFrames,
        blockBase,
        laneBase: rec.firstFrame * geometry.slices,
        cols: info.detector[1],
      });
      device.queue.submit([encoder.finish()]);
      p1.destroy();
      p2.destroy();
      blockBase += Math.ceil(rec.frames / info.blockFrames);
      inFlight.push(device.queue.onSubmittedWorkDone().then(() => undefined));
      if (inFlight.length > 2) {
        t = performance.now();
        await inFlight.shift();
        timings.gpuWaitMs += performance.now() - t;
      }
      options.onProgress?.(rec.firstFrame + rec.frames, frameCount);
    }
    const t = performance.now();
    const [mm, le, fe] = await Promise.all([
      readU32(device, mismatches, blocks),
      readU32(device, laneErrors, frameCount * geometry.slices),
      readU32(device, frameErrors, frameCount),
    ]);
    timings.gpuWaitMs += performance.now() - t;
    timings.totalMs = performance.now() - t0;
    const badBlocks: VerifyReport['badBlocks'] = [];
    let total = 0;
    let b = 0;
    for (const rec of acq.records) {
      for (let first = 0; first < rec.frames; first += info.blockFrames, b++) {
        if (mm[b] === 0) continue;
        total += mm[b];
        badBlocks.push({
          firstFrame: rec.firstFrame + first,
          frames: Math.min(info.blockFrames, rec.frames - first),
          mismatches: mm[b],
        });
      }
    }
    return {
      acquisition: info.name,
      compared: frameCount * pixels,
      mismatches: total,
      badBlocks,
      laneErrors: le.reduce((n, e) => n + (e === 0 ? 0 : 1), 0),
      sourceErrors: fe.reduce((n, e) => n + (e === 0 ? 0 : 1), 0),
      ms: timings.totalMs,
      timings,
    };
  } finally {
    for (const b of buffers) b.destroy();
  }
}

function copyPadded(bytes: Uint8Array): Uint8Array {
  const out = new Uint8Array(Math.ceil(bytes.byteLength / 4) * 4);
  out.set(bytes);
  return out;
}

async function readU32(device: GPUDevice, buffer: GPUBuffer, count: number): Promise<Uint32Array> {
  const staging = device.createBuffer({
    size: Math.max(4, count * 4),
    usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
  });
  try {
    const encoder = device.createCommandEncoder();
    if (count > 0) encoder.copyBufferToBuffer(buffer, 0, staging, 0, count * 4);
    device.queue.submit([encoder.finish()]);
    await staging.mapAsync(GPUMapMode.READ);
    const out = new Uint32Array(staging.getMappedRange().slice(0, count * 4));
    staging.unmap();
    return out;
  } finally {
    staging.destroy();
  }
}
