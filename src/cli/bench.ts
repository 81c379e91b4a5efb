import { mkdtempSync, rmSync } from 'node:fs';
import { open, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expectedLoad } from '../bench/expected';
import { generateSynthetic } from '../bench/synthetic';
import { shardPaths, syntheticSource, writeChunkFile } from '../bench/synthetic-source';
import { type GpuLoad, loadToGpu } from '../compute/gpu-load';
import { createVirtualImager, defaultDetectors } from '../compute/gpu-products';
import { acquireDevice, type GpuContext } from '../gpu/device';
import { createGpuTimer } from '../gpu/gpu-timer';
import { describePlan } from '../gpu/load-plan';
import { nodeGpu } from '../gpu/node-gpu';
import type { TransposeLoads } from '../gpu/passes/detector-transpose';
import { createResidentPool } from '../gpu/resident-pool';
import { createStagingPool } from '../gpu/staging-pool';
import { residentReads } from '../kernels/resident-virtual-image';
import { flaggedFromMask } from '../products/frame-stats';
import { benchGestures, benchRepeatedGestures } from './bench-gestures';
import { GB, logChecks, logLoad, logProfile, logResident, ms, readLoadTimeline } from './bench-load-report';
import { profileLoadPasses } from './bench-profile';
import { checkResidentRows } from './bench-resident-check';

export interface BenchOptions {
  scan: number;
  det: number;
  distinct: number;
  batch?: number;
  slots?: number;
  repeat: number;
  json?: string;
  keep?: boolean;
  /** Loads after the first reuse the resident buffers and the chunk staging of the previous one (resident-pool.ts, staging-pool.ts). */
  pool?: boolean;
  /** Decode variants to profile (any name of bslz4-decode-variants.ts parseDecodeVariant). */
  variants?: string[];
  /** Transpose variants to profile in interleaved rounds (bench-profile.ts parseTransposeVariant). */
  transposeVariants?: string[];
  /** How the loads' transpose loads its tiles (detector-transpose.ts). */
  transposeLoads?: TransposeLoads;
  /** uint16: scan positions per hot-bitmap segment (resident-layout.ts). */
  segmentFrames?: number;
  /** uint16: compact the high byte plane after each load (gpu/resident-compact.ts; with --high full). */
  compact?: boolean;
  /** uint16: the high byte plane in slot pools (default) or full rows (load-plan.ts). */
  highPlane?: 'slots' | 'full';
  /** 'slots': the pools' first share of all (pixel, segment) pairs. */
  poolShare?: number;
  /** The loads' decode variant (bslz4-decode-variants.ts). */
  decodeVariant?: string;
  /** At most this many pixels a resident row buffer (default: as many as one binding holds). */
  rowPixels?: number;
  /** Resident rows in tiles of the batch (default) or whole (load-plan.ts). */
  rowTiles?: 'batch' | 'untiled';
  /** Parse batch k + 1 beside the decode of batch k (load-plan.ts; default on for the list decode). */
  parseAhead?: boolean;
  /** Copy batch k + 2's chunks after batch k's decode (GpuLoadOptions.copyAhead). */
  copyAhead?: boolean;
  /** Which pass counts the audit histogram's bins 1..255 (GpuLoadOptions.histogramIn). */
  histogramIn?: 'decode' | 'transpose';
  /** The decoded slot's form (GpuLoadOptions.decoded). */
  decoded?: 'packed' | 'planes';
  /** Slices of the virtual-image pass (resident-virtual-image.ts). */
  slices?: number;
  /** Threads per workgroup of the virtual-image pass (resident-virtual-image.ts). */
  workgroupSize?: number;
  /** Gestures: also time each update's pixels as this many passes in one submission (clock kept up). */
  sustain?: number;
}

export async function benchLoad(o: BenchOptions): Promise<number> {
  const log = (s: string) => process.stdout.write(`${s}\n`);
  let t = performance.now();
  const acq = generateSynthetic({
    scan: [o.scan, o.scan],
    detector: o.det,
    distinct: o.distinct,
    seed: 20261129,
  });
  const generateMs = performance.now() - t;
  const dir = mkdtempSync(join(tmpdir(), 'stemflow-bench-'));
  const path = join(dir, 'synthetic_data.bslz4');
  t = performance.now();
  const offsets = await writeChunkFile(acq, path);
  const writeMs = performance.now() - t;
  const rawBytes = acq.frames * o.det * o.det * 2;
  const compressedBytes = offsets[acq.frames];
  log(
    `synthetic ${o.scan}x${o.scan} x ${o.det}x${o.det} uint16: ${acq.frames} frames (${o.distinct} distinct), raw ${(rawBytes / GB).toFixed(2)} GB, compressed ${(compressedBytes / GB).toFixed(3)} GB (ratio ${(rawBytes / compressedBytes).toFixed(2)}); generated in ${(generateMs / 1000).toFixed(1)} s, written in ${(writeMs / 1000).toFixed(1)} s`,
  );

  // Unquantized GPU timestamps (Dawn rounds them otherwise).
  const ctx = await acquireDevice(nodeGpu(['disable-dawn-features=timestamp_quantization']));
  log(
    `adapter: ${ctx.adapter.vendor} ${ctx.adapter.architecture} ${ctx.adapter.description} (fallback ${ctx.adapter.isFallbackAdapter}); maxStorageBufferBindingSize ${ctx.limits.maxStorageBufferBindingSize}`,
  );
  const source = await syntheticSource(acq, path, offsets);
  const expected = expectedLoad(acq);
  const flagged = flaggedFromMask(acq.pixelMask);
  const report: Record<string, unknown> = {
    command: `stemflow bench load --scan ${o.scan} --det ${o.det} --distinct ${o.distinct} --repeat ${o.repeat}${o.decodeVariant ? ` --decode ${o.decodeVariant}` : ''}${o.parseAhead === undefined ? '' : ` --parse-ahead ${o.parseAhead ? 'on' : 'off'}`}${o.copyAhead === undefined ? '' : ` --copy-ahead ${o.copyAhead ? 'on' : 'off'}`}${o.histogramIn ? ` --histogram ${o.histogramIn}` : ''}${o.decoded ? ` --decoded ${o.decoded}` : ''}${o.rowPixels ? ` --row-pixels ${o.rowPixels}` : ''}${o.rowTiles ? ` --row-tiles ${o.rowTiles}` : ''}${o.batch ? ` --batch ${o.batch}` : ''}${o.slots ? ` --slots ${o.slots}` : ''}${o.pool ? ' --pool' : ''}${o.segmentFrames ? ` --segment ${o.segmentFrames}` : ''}${o.highPlane ? ` --high ${o.highPlane}` : ''}${o.poolShare ? ` --pool-share ${o.poolShare}` : ''}${o.compact ? ' --compact' : ''}${o.slices ? ` --slices ${o.slices}` : ''}${o.workgroupSize ? ` --vi-workgroup ${o.workgroupSize}` : ''}${o.sustain ? ` --sustain ${o.sustain}` : ''}${o.transposeLoads ? ` --transpose-loads ${o.transposeLoads}` : ''}${o.transposeVariants?.length ? ` --transpose-variants ${o.transposeVariants.join(',')}` : ''}`,
    adapter: ctx.adapter,
    scan: [o.scan, o.scan],
    detector: [o.det, o.det],
    frames: acq.frames,
    distinctFrames: o.distinct,
    rawBytes,
    compressedBytes,
    generateMs,
    writeMs,
  };
  try {
    // Host-only reference points: reading the chunk file from the page cache, and uploading it to the GPU.
    report.readOnlyMs = await timeRead(shardPaths(path, acq.frames));
    report.uploadOnlyMs = await timeUpload(ctx, shardPaths(path, acq.frames));
    log(
      `host read of the chunk file (page cache): ${ms(report.readOnlyMs)}; upload alone (read + writeBuffer + wait): ${ms(report.uploadOnlyMs)}`,
    );

    const runs: Record<string, number>[] = [];
    const timelines: Record<string, number>[] = [];
    const batchLogs: unknown[] = [];
    let last: GpuLoad | null = null;
    const pool = o.pool ? createResidentPool() : undefined;
    const staging = o.pool ? createStagingPool() : undefined;
    for (let r = 0; r < o.repeat + 1; r++) {
      last?.release();
      // Timed loads carry GPU timestamps: 4 marks per batch (copy, decode, transpose, gap to the next batch).
      const batches = Math.ceil(acq.frames / (o.batch ?? 4096));
      // (5 marks with a slotted uint16 high plane: 'place' too; the timer holds the larger count; parsing ahead, 3
      // more for the first batch's copy and parse.)
      const marks = batches * 5 + 3;
      const timer = r > 0 && marks <= 4096 ? createGpuTimer(ctx, marks) : null;
      last = await loadToGpu(ctx, source, {
        batchFrames: o.batch,
        slots: o.slots,
        timer: timer ?? undefined,
        pool,
        staging,
        segmentFrames: o.segmentFrames,
        compactHigh: o.compact,
        highPlane: o.highPlane,
        poolShare: o.poolShare,
        decodeVariant: o.decodeVariant,
        parseAhead: o.parseAhead,
        copyAhead: o.copyAhead,
        histogramIn: o.histogramIn,
        decoded: o.decoded,
        pixelsPerBufferLimit: o.rowPixels,
        rowTiles: o.rowTiles,
        transposeLoads: o.transposeLoads,
        onPlan:
          r === 0
            ? (_plan, lines) => {
                for (const l of lines) log(`plan: ${l}`);
              }
            : undefined,
      });
      const { batchHostMs, ...flat } = last.timings;
      if (r > 0) runs.push(flat);
      logLoad(log, r, last.timings);
      if (timer) {
        const { batchLog, line } = await readLoadTimeline(log, timer, batchHostMs);
        batchLogs.push(batchLog);
        timelines.push(line);
      }
    }
    const load = last!;
    report.plan = {
      lines: describePlan(load.plan),
      residentBytes: load.plan.residentBytes,
      scratchBytes: load.plan.scratchBytes,
      peakBytes: load.plan.peakBytes,
      batches: load.plan.batches,
      batchFrames: load.plan.batchFrames,
      slots: load.plan.slots,
    };
    const r = load.plan.resident;
    const all = residentReads(
      r,
      load.hotBitmap,
      Uint32Array.from({ length: r.pixels }, (_, p) => p),
    );
    report.resident = {
      form: r.form,
      segmentFrames: r.segmentFrames,
      hotSegments: all.hotSegments,
      segments: all.segments,
      lowPlaneBytes: all.loBytes,
      // The high plane's bytes in hot segments: what a compacted high plane would keep.
      hotHighBytes: all.hiBytes,
      fullHighPlaneBytes: r.form === 'planes' ? all.loBytes : 0,
      hotBitmapBytes: r.hotBytes,
      high: r.high,
      // Resident bytes as planned before the load, and now (grown pools, or after compaction with --compact).
      loadedBytes: load.plan.peakBytes - load.plan.scratchBytes - load.plan.resultBytes,
      residentBytes: load.plan.residentBytes,
      compactMs: load.timings.compactMs,
      poolSlots: r.high === 'slots' ? r.hotSlots.reduce((a, b) => a + b, 0) : 0,
      poolGrowths: load.timings.poolGrowths,
    };
    logResident(log, load, all);
    report.loads = runs;
    report.gpuTimelines = timelines;
    report.batchLogs = batchLogs;
    const best = runs.reduce((a, b) => (a.totalMs <= b.totalMs ? a : b));
    report.best = best;

    // Exactness, on this machine: every audit number, every frame total, every DP sum, sampled resident rows.
    const checks: Record<string, boolean> = {};
    checks.frameTotals = load.frameTotals.every((v, i) => Number(v) === expected.frameTotals(i));
    checks.maxValue = load.audit.maxValue === expected.maxValue;
    checks.countAbove255 = load.audit.countAbove255 === expected.countAbove255;
    checks.histogram = expected.histogram.every((v, b) => load.audit.histogram[b] === v);
    checks.dpSums = load.dpSums.every((v, p) => Number(v) === expected.dpSums[p]);
    checks.residentRows = await checkResidentRows(ctx, load, acq);

    t = performance.now();
    const detectors = defaultDetectors(load.dpSums, acq.detector, flagged);
    const geometryMs = performance.now() - t;
    const imager = createVirtualImager(ctx, load, flagged, {
      slices: o.slices,
      workgroupSize: o.workgroupSize,
    });
    const masks = [detectors.masks.bf, detectors.masks.abf, detectors.masks.adf];
    await imager.images(masks); // warm-up (pipeline creation)
    t = performance.now();
    const images = await imager.images(masks);
    const productsMs = performance.now() - t;
    checks.virtualImages = masks.every((mask, m) => {
      const want = expected.imageOf(mask);
      return images[m].every((v, i) => Number(v) === want(i));
    });
    report.products = {
      geometryMs,
      bfAbfAdfMs: productsMs,
      pixels: masks.map((m) => m.reduce((a, b) => a + b, 0)),
    };
    report.gestures = await benchGestures(
      ctx,
      load,
      imager,
      detectors,
      acq.detector,
      flagged,
      expected,
      log,
      o.sustain,
    );
    checks.gestures = (report.gestures as { exact: boolean }[]).every((g) => g.exact);
    report.repeatedGestures = await benchRepeatedGestures(
      ctx,
      load,
      imager,
      detectors,
      acq.detector,
      flagged,
      expected,
      log,
    );
    checks.repeatedGestures = (report.repeatedGestures as { exact: boolean }[]).every((g) => g.exact);
    log(
      `products: BF/ABF/ADF (${(report.products as { pixels: number[] }).pixels.join('/')} pixels) in ${ms(productsMs)} incl. readback; geometry ${ms(geometryMs)}`,
    );
    load.release();
    imager.release();
    pool?.clear();
    staging?.clear();

    const profile = await profileLoadPasses(ctx, source, {
      batchFrames: o.batch,
      variants: o.variants,
      transposeVariants: o.transposeVariants,
    });
    report.profile = profile;
    logProfile(log, profile);
    checks.decodeVariants = profile.variants.every((v) => v.identical);
    checks.transposeVariants = profile.transposeVariants.every((t) => t.identical);
    report.exact = checks;
    logChecks(log, checks);
    const ok = Object.values(checks).every(Boolean);
    // The loads' own GPU timelines (timestamps around every batch's copy, decode and transpose): the GPU work of
    // the whole graph a scan, and the decode's rate inside it. The single-batch profile's figures (repeated runs
    // of one batch after the loads) varied 2.5-14.5 ms a batch between runs whose loads decoded at the same rate;
    // they stay in the report as `profile*`.
    const fastest = (key: string) =>
      timelines.length ? Math.min(...timelines.map((t) => t[key] ?? Number.NaN)) : null;
    const work = timelines.length
      ? Math.min(
          ...timelines.map((t) => (t.copy ?? 0) + (t.decode ?? 0) + (t.transpose ?? 0) + (t.place ?? 0)),
        )
      : null;
    const decodeMs = fastest('decode');
    report.summary = {
      endToEndMs: best.totalMs,
      endToEndOverUploadOnly: best.totalMs / (report.uploadOnlyMs as number),
      rawGBps: rawBytes / (best.totalMs / 1000) / GB,
      gpuWorkMs: work,
      decodeGBps: decodeMs ? rawBytes / (decodeMs / 1000) / GB : null,
      gpuLoadSpanMs: fastest('spanMs'),
      // GPU time from timestamps where the device has them (wall time over repeats includes idle clocks).
      profileDecodeGBps:
        profile.decodedBytes / ((profile.timestamps?.decodeMs ?? profile.decodeMs) / 1000) / GB,
      profileScanMs: profile.timestamps?.scanGpuMs ?? profile.scanGpuMs,
      profileScanMsWall: profile.scanGpuMs,
      peakOverResident: load.plan.peakBytes / load.plan.residentBytes,
      exact: ok,
    };
    log(`summary: ${JSON.stringify(report.summary)}`);
    if (o.json)
      await writeFile(
        o.json,
        JSON.stringify(report, (_k, v) => (typeof v === 'bigint' ? v.toString() : v), 2),
      );
    return ok ? 0 : 1;
  } finally {
    await source.close();
    ctx.destroy();
    if (!o.keep) rmSync(dir, { recursive: true, force: true });
  }
}

/** Reads the shard files one after another into one 256 MiB buffer: the host's read floor. */
async function timeRead(paths: string[]): Promise<number> {
  const buf = new Uint8Array(256 * 1024 * 1024);
  const t = performance.now();
  for (const path of paths) {
    const handle = await open(path, 'r');
    try {
      while ((await handle.read(buf, 0, buf.length)).bytesRead > 0) {}
    } finally {
      await handle.close();
    }
  }
  return performance.now() - t;
}

/** Read the shard files and writeBuffer them in 32 MiB pieces into a 256 MiB ring, then wait: the floor. */
async function timeUpload(ctx: GpuContext, paths: string[]): Promise<number> {
  const { device } = ctx;
  const ring = 256 * 1024 * 1024;
  const target = device.createBuffer({ size: ring, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
  const piece = 32 * 1024 * 1024;
  const bufs = [new Uint8Array(piece), new Uint8Array(piece)];
  try {
    const t = performance.now();
    let at = 0;
    let k = 0;
    for (const path of paths) {
      const handle = await open(path, 'r');
      try {
        for (;;) {
          const b = bufs[k++ % 2];
          const { bytesRead: n } = await handle.read(b, 0, piece);
          if (n === 0) break;
          // The ring's offset stays a multiple of 4: each piece is written rounded up to whole words.
          const words = Math.ceil(n / 4) * 4;
          if ((at % ring) + words > ring) at = 0;
          device.queue.writeBuffer(target, at % ring, b, 0, words);
          at += words;
        }
      } finally {
        await handle.close();
      }
    }
    await device.queue.onSubmittedWorkDone();
    return performance.now() - t;
  } finally {
    target.destroy();
  }
}
