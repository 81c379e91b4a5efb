/**
 * `stemflow bench decode`: the bitshuffle/LZ4 decode + audit pass alone, variant against variant. A batch of
 * the synthetic acquisition of `bench load` (src/bench/synthetic.ts) is uploaded once; each variant
 * (src/gpu/passes/bslz4-decode-variants.ts) is timed with GPU timestamps between `repeat` back-to-back runs in
 * one submission (median of the second half: the first runs bring the clocks up), and checked exact: every
 * decoded word against the generated values, every error code and frame total against the CPU, the audit
 * against the CPU's count over the generated frames (it was compared with the `base` variant's, which shares
 * the audit code); then on a small batch with corrupted chunks, every output against the CPU
 * twin (src/kernels/bslz4-decode.ts), so each error code path of each variant runs on the real GPU too.
 */
import { writeFile } from 'node:fs/promises';
import { generateSynthetic, type SyntheticAcquisition } from '../bench/synthetic';
import { readBuffer } from '../compute/readback';
import { acquireDevice, type GpuContext } from '../gpu/device';
import { createGpuTimer } from '../gpu/gpu-timer';
import { nodeGpu } from '../gpu/node-gpu';
import {
  type Bslz4DecodePass,
  createAuditBuffer,
  createBslz4DecodePass,
  readDecodeResults,
} from '../gpu/passes/bslz4-decode';
import { DEFAULT_DECODE_VARIANT } from '../gpu/passes/bslz4-decode-variants';
import {
  AUDIT_LAYOUT,
  auditFrame,
  bslz4DecodeBatch,
  emptyAudit,
  HISTOGRAM_BINS,
  minWordsPerFrame,
} from '../kernels/bslz4-decode';
import { mulberry32 } from '../util/prng';

export interface BenchDecodeOptions {
  scan: number;
  det: number;
  distinct: number;
  /** Frames in the timed batch (default 8,192, at most the scan's). */
  batch?: number;
  /** Variants to time besides the baseline ('base', always first). */
  variants: string[];
  repeat: number;
  /** Interleaved timing rounds over all variants (default 3). */
  rounds?: number;
  json?: string;
}

interface Batch {
  slot: Uint8Array;
  index: Uint32Array;
  frames: number;
}

interface VariantReport {
  name: string;
  /** GPU time of one run of the batch: the median of the kept runs (the second half of each round's). */
  ms: number | null;
  /** The fastest kept run. */
  minMs?: number;
  /** The kept runs, round after round (timestamps, or wall time / runs without timestamps). */
  runsMs: number[];
  /** Compile and exactness checks. */
  checkMs?: number;
  decodedGBps: number | null;
  exact: Record<string, boolean>;
  error?: string;
}

const GB = 1e9;

/** The chunks of scan frames [0, frames) back to back, each 4-byte aligned. */
function buildBatch(acq: SyntheticAcquisition, frames: number): Batch {
  const index = new Uint32Array(2 * frames);
  let size = 0;
  for (let f = 0; f < frames; f++) size += Math.ceil(acq.chunks[acq.chunkOf(f)].length / 4) * 4;
  const slot = new Uint8Array(size);
  let at = 0;
  for (let f = 0; f < frames; f++) {
    const chunk = acq.chunks[acq.chunkOf(f)];
    slot.set(chunk, at);
    index[2 * f] = at;
    index[2 * f + 1] = chunk.length;
    at += Math.ceil(chunk.length / 4) * 4;
  }
  return { slot, index, frames };
}

/** A copy of the first `frames` chunks, a third of them corrupted (a byte changed, a bit flipped, cut short). */
function corruptBatch(acq: SyntheticAcquisition, frames: number): Batch {
  const next = mulberry32(7);
  const chunks: Uint8Array[] = [];
  for (let f = 0; f < frames; f++) {
    const chunk = acq.chunks[acq.chunkOf(f)].slice();
    const kind = next() % 6;
    if (kind === 0) chunk[next() % chunk.length] = next() & 0xff;
    if (kind === 1) chunk[12 + (next() % (chunk.length - 12))] ^= 1 << (next() % 8);
    chunks.push(kind === 2 ? chunk.subarray(0, next() % chunk.length) : chunk);
  }
  const index = new Uint32Array(2 * frames);
  const slot = new Uint8Array(chunks.reduce((s, c) => s + c.length, 0));
  let at = 0;
  chunks.forEach((c, f) => {
    slot.set(c, at);
    index[2 * f] = at;
    index[2 * f + 1] = c.length;
    at += c.length;
  });
  return { slot, index, frames };
}

/** GPU buffers of one batch and the pass's outputs. */
function uploadBatch(device: GPUDevice, b: Batch, flags: Uint32Array, wordsPerFrame: number) {
  const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC;
  const make = (bytes: number) => device.createBuffer({ size: Math.max(4, Math.ceil(bytes / 4) * 4), usage });
  const compressed = make(b.slot.length);
  const padded = new Uint8Array(compressed.size);
  padded.set(b.slot);
  device.queue.writeBuffer(compressed, 0, padded);
  const index = make(b.index.byteLength);
  device.queue.writeBuffer(index, 0, b.index);
  const flagBuffer = make(flags.byteLength);
  device.queue.writeBuffer(flagBuffer, 0, flags);
  const job = {
    compressed,
    compressedBytes: b.slot.length,
    index,
    flags: flagBuffer,
    decoded: make(b.frames * wordsPerFrame * 4),
    errors: make(b.frames * 4),
    totals: make(b.frames * 8),
    audit: createAuditBuffer(device),
    frameCount: b.frames,
    pixels: flags.length,
    wordsPerFrame,
  };
  const buffers = [compressed, index, flagBuffer, job.decoded, job.errors, job.totals, job.audit];
  const destroy = () => {
    for (const x of buffers) x.destroy();
  };
  return { job, destroy };
}

type Job = ReturnType<typeof uploadBatch>['job'];

/** One fresh run into poisoned outputs and a cleared audit; returns every output. */
async function runOnce(ctx: GpuContext, pass: Bslz4DecodePass, job: Job) {
  const { device } = ctx;
  const poison = new Uint8Array(Math.min(job.decoded.size, 16 << 20)).fill(0xa5);
  for (const b of [job.decoded, job.errors, job.totals])
    for (let at = 0; at < b.size; at += poison.length)
      device.queue.writeBuffer(b, at, poison, 0, Math.min(poison.length, b.size - at));
  device.queue.writeBuffer(job.audit, 0, new Uint32Array(AUDIT_LAYOUT.words));
  pass.run(job);
  const words = new Uint32Array((await readBuffer(device, job.decoded, 0, job.decoded.size)).buffer);
  const results = await readDecodeResults(device, job, { frameCount: job.frameCount });
  return { words, ...results };
}

const sameArray = (a: ArrayLike<unknown>, b: ArrayLike<unknown>) =>
  a.length === b.length && Array.prototype.every.call(a, (v, i) => v === b[i]);

const sameAudit = (a: Awaited<ReturnType<typeof runOnce>>['audit'], b: typeof a) =>
  a.maxValue === b.maxValue &&
  a.failedFrames === b.failedFrames &&
  a.countAbove255 === b.countAbove255 &&
  sameArray(a.histogram, b.histogram);

export async function benchDecode(o: BenchDecodeOptions): Promise<number> {
  const log = (s: string) => process.stdout.write(`${s}\n`);
  let t = performance.now();
  const acq = generateSynthetic({
    scan: [o.scan, o.scan],
    detector: o.det,
    distinct: o.distinct,
    seed: 20261129,
  });
  const pixels = o.det * o.det;
  const wordsPerFrame = minWordsPerFrame(pixels, 2);
  const frames = Math.min(o.batch ?? 8192, acq.frames);
  const batch = buildBatch(acq, frames);
  const faults = corruptBatch(acq, Math.min(512, frames));
  const flags = new Uint32Array(pixels);
  flags.set(acq.pixelMask);
  const twin = bslz4DecodeBatch(faults.slot, faults.index, flags, {
    frameCount: faults.frames,
    pixels,
    elemSize: 2,
  });
  // The CPU twin's audit of the main batch, from the distinct frames (each counted as often as the batch holds
  // it): the reference every variant's audit must equal; and each distinct frame's total (unflagged values).
  const uses = new Array<number>(acq.values.length).fill(0);
  for (let f = 0; f < frames; f++) uses[acq.chunkOf(f)]++;
  const mainAudit = emptyAudit();
  const distinctTotals = acq.values.map((v, c) => {
    const one = emptyAudit();
    const total = auditFrame(new Uint8Array(v.buffer, v.byteOffset, pixels * 2), pixels, 2, flags, one);
    if (uses[c] > 0) {
      mainAudit.maxValue = Math.max(mainAudit.maxValue, one.maxValue);
      mainAudit.countAbove255 += one.countAbove255 * BigInt(uses[c]);
      for (let b = 0; b < HISTOGRAM_BINS; b++) mainAudit.histogram[b] += one.histogram[b] * BigInt(uses[c]);
    }
    return total;
  });
  const decodedBytes = frames * pixels * 2;
  log(
    `synthetic ${o.det}x${o.det} uint16, batch of ${frames} frames (${acq.chunks.length} distinct): ${(decodedBytes / GB).toFixed(3)} GB decoded from ${(batch.slot.length / GB).toFixed(3)} GB; generated in ${((performance.now() - t) / 1000).toFixed(1)} s; fault batch ${faults.frames} frames, ${twin.audit.failedFrames} failing`,
  );
  // STEMFLOW_DAWN_FEATURES (diagnostic): Dawn toggles to enable as well, comma-separated (e.g. disable_robustness).
  const extra = process.env.STEMFLOW_DAWN_FEATURES;
  const toggles = ['disable-dawn-features=timestamp_quantization'];
  if (extra) toggles.push(`enable-dawn-features=${extra}`);
  const ctx = await acquireDevice(nodeGpu(toggles));
  const { device } = ctx;
  if (extra) log(`Dawn toggles enabled: ${extra}`);
  log(`adapter: ${ctx.adapter.vendor} ${ctx.adapter.architecture} ${ctx.adapter.description}`);
  const main = uploadBatch(device, batch, flags, wordsPerFrame);
  const bad = uploadBatch(device, faults, flags, wordsPerFrame);
  const timer = createGpuTimer(ctx, o.repeat + 1);
  const rounds = Math.max(1, o.rounds ?? 3);
  const names = ['base', ...o.variants.filter((n) => n !== 'base')];
  const reports: VariantReport[] = [];
  try {
    await device.queue.onSubmittedWorkDone();
    // Every variant is compiled and checked first; then all are timed in interleaved rounds (round r runs each
    // variant `repeat` times back to back), so that a change of the GPU's clocks during the benchmark (seen on
    // the H200: a variant's runs went from 11 to 18.8 ms within one submission) hits every variant alike.
    const passes = new Map<string, Bslz4DecodePass>();
    for (const name of names) {
      const report: VariantReport = { name, ms: null, runsMs: [], decodedGBps: null, exact: {} };
      reports.push(report);
      device.pushErrorScope('validation');
      try {
        t = performance.now();
        const pass = createBslz4DecodePass(device, { elemSize: 2, variant: name });
        passes.set(name, pass);
        // Exactness first (it also warms the pipeline up).
        const got = await runOnce(ctx, pass, main.job);
        const frameBytes = pixels * 2;
        const bytes = new Uint8Array(got.words.buffer);
        let wordsOk = true;
        for (let f = 0; f < frames && wordsOk; f++) {
          const want = acq.values[acq.chunkOf(f)];
          const have = bytes.subarray(f * wordsPerFrame * 4, f * wordsPerFrame * 4 + frameBytes);
          wordsOk = Buffer.compare(have, new Uint8Array(want.buffer, want.byteOffset, frameBytes)) === 0;
          for (let k = frameBytes; k < wordsPerFrame * 4 && wordsOk; k++)
            wordsOk = bytes[f * wordsPerFrame * 4 + k] === 0;
        }
        report.exact.words = wordsOk;
        report.exact.errors = got.errors.every((e) => e === 0);
        report.exact.totals = got.totals.every((v, f) => v === distinctTotals[acq.chunkOf(f)]);
        report.exact.audit = sameAudit(got.audit, mainAudit);
        const bad1 = await runOnce(ctx, pass, bad.job);
        report.exact.faultWords = sameArray(bad1.words.subarray(0, twin.words.length), twin.words);
        report.exact.faultErrors = sameArray(bad1.errors, twin.errors);
        report.exact.faultTotals = sameArray(bad1.totals, twin.totals);
        report.exact.faultAudit = sameAudit(bad1.audit, twin.audit);
        report.checkMs = performance.now() - t;
      } catch (e) {
        report.error = e instanceof Error ? e.message : String(e);
        log(`${name}: FAILED ${report.error}`);
      } finally {
        const err = await device.popErrorScope();
        if (err) {
          report.error = `${report.error ?? ''} ${err.message}`.trim();
          log(`${name}: GPU validation error ${err.message}`);
        }
      }
    }
    for (let round = 0; round < rounds; round++) {
      for (const report of reports) {
        const pass = passes.get(report.name);
        if (!pass || report.error) continue;
        // `repeat` runs in one submission, a timestamp before each and after the last.
        const encoder = device.createCommandEncoder();
        const params: GPUBuffer[] = [];
        for (let r = 0; r < o.repeat; r++) {
          timer?.mark(encoder, 'run');
          params.push(pass.encode(encoder, main.job));
        }
        timer?.mark(encoder, 'end');
        t = performance.now();
        device.queue.submit([encoder.finish()]);
        await device.queue.onSubmittedWorkDone();
        const wall = performance.now() - t;
        for (const p of params) p.destroy();
        let runs: number[];
        if (timer) {
          const marks = await timer.read();
          timer.reset();
          runs = marks.slice(1).map((m, i) => m.ms - marks[i].ms);
        } else runs = Array(o.repeat).fill(wall / o.repeat);
        // The first half of a round brings the clocks up from the previous variant's end.
        report.runsMs.push(...runs.slice(Math.floor(o.repeat / 2)));
      }
    }
    for (const report of reports) {
      if (report.runsMs.length === 0) continue;
      const sorted = [...report.runsMs].sort((a, b) => a - b);
      report.ms = sorted[Math.floor(sorted.length / 2)];
      report.minMs = sorted[0];
      report.decodedGBps = decodedBytes / (report.ms / 1000) / GB;
      log(
        `${report.name}: median ${report.ms.toFixed(3)} ms per batch = ${report.decodedGBps.toFixed(1)} GB/s decoded, best ${report.minMs.toFixed(3)} ms = ${(decodedBytes / (report.minMs / 1000) / GB).toFixed(1)} GB/s (${rounds} rounds; runs ${report.runsMs.map((v) => v.toFixed(2)).join(' ')}); checks + compile ${((report.checkMs ?? 0) / 1000).toFixed(1)} s; ${Object.entries(
          report.exact,
        )
          .map(([k, v]) => `${k} ${v ? 'ok' : 'MISMATCH'}`)
          .join(', ')}`,
      );
    }
    for (const pass of passes.values()) pass.destroy();
  } finally {
    timer?.destroy();
    main.destroy();
    bad.destroy();
    ctx.destroy();
  }
  const ok = reports.every((r) => !r.error && Object.values(r.exact).every(Boolean));
  const base = reports[0].ms;
  log(
    `summary (production default: ${DEFAULT_DECODE_VARIANT}): ${reports
      .map(
        (r) =>
          `${r.name} ${r.decodedGBps?.toFixed(1) ?? '-'} GB/s${base && r.ms ? ` (${(base / r.ms).toFixed(2)}x)` : ''}`,
      )
      .join(', ')}; exact: ${ok ? 'all' : 'MISMATCH'}`,
  );
  if (o.json) {
    const report = {
      command: `stemflow bench decode --scan ${o.scan} --det ${o.det} --distinct ${o.distinct} --batch ${frames} --variant ${names.join(',')} --repeat ${o.repeat} --rounds ${rounds}`,
      adapter: ctx.adapter,
      frames,
      pixels,
      decodedBytes,
      compressedBytes: batch.slot.length,
      defaultVariant: DEFAULT_DECODE_VARIANT,
      variants: reports,
      exact: ok,
    };
    await writeFile(o.json, JSON.stringify(report, null, 2));
  }
  return ok ? 0 : 1;
}
