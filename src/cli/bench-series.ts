/**
 * `stemflow bench series`: series queries (issue #6) on the GPU. A synthetic ARINA-like 512 x 512 x 192 x 192
 * acquisition is converted with the GPU encoder into an archive; the archive's acquisition is then loaded N
 * times as N acquisitions of one series (N = as many as the budget admits, or --count): each copy has its own
 * GPU buffers and is decoded by every query, exactly as N different scans would be (the benchmark does not
 * convert N scans because that would take N x the disk). Gestures are timed end to end (mask upload, decode,
 * readback of every image, exact combine): BF, ABF and ADF from scratch, a small nudge, a large edge motion and
 * a wide ADF radius change, each repeated; median and p95. Exactness: the images of 64 sampled frames are
 * compared with the CPU twin's full decode, and every copy's image must be identical.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { convertArchive, DEFAULT_CODEC } from '../archive/convert';
import { gpuRecordEncoder } from '../archive/gpu-encoder';
import { nodeArchiveFiles, nodeArchiveTarget, nodeSha256 } from '../archive/node-folder';
import { type Archive, openArchive } from '../archive/reader';
import { generateSynthetic } from '../bench/synthetic';
import { syntheticSource, writeChunkFile } from '../bench/synthetic-source';
import { acquireDevice } from '../gpu/device';
import { createGpuTimer } from '../gpu/gpu-timer';
import { nodeGpu } from '../gpu/node-gpu';
import { annulus, disk, regionMask } from '../products/detector-geometry';
import type { IndexLaunch } from '../series/packed-index-gpu';
import { type ExactImage, loadSeries, planSeries } from '../series/series';
import { type TuneConfig, tuneSeriesQuery } from './bench-series-tune';

export interface BenchSeriesOptions {
  scan: number;
  det: number;
  distinct: number;
  /** Acquisitions to load (default: as many as the budget admits). */
  count?: number;
  /** GPU bytes the series may take (default 120 GiB). */
  budgetGiB?: number;
  repeat: number;
  /** Lanes per frame of the archive (default: the codec's default). */
  lanes?: number;
  /**
   * Build the exact index (src/series/packed-index.ts) after loading, within the budget left by the series, and
   * time the gestures on it.
   */
  index?: boolean;
  /** With --index: launch shapes of the index query, each timed in turn per gesture. */
  indexLaunch?: IndexLaunch[];
  /** Query launch shapes to compare instead of the gestures (bench-series-tune.ts). */
  tune?: TuneConfig[];
  json?: string;
}

const GiB = 2 ** 30;

function stats(values: number[]) {
  const s = [...values].sort((a, b) => a - b);
  const q = (p: number) => s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)];
  return { median: q(0.5), p95: q(0.95), min: s[0], max: s[s.length - 1], runs: s.length };
}

export async function benchSeries(o: BenchSeriesOptions): Promise<number> {
  const log = (s: string) => process.stdout.write(`${s}\n`);
  const acq = generateSynthetic({
    scan: [o.scan, o.scan],
    detector: o.det,
    distinct: o.distinct,
    seed: 20261129,
  });
  const dir = mkdtempSync(join(tmpdir(), 'stemflow-bench-series-'));
  const path = join(dir, 'synthetic_data.bslz4');
  const offsets = await writeChunkFile(acq, path);
  const ctx = await acquireDevice(nodeGpu());
  const { device } = ctx;
  const source = await syntheticSource(acq, path, offsets);
  const report: Record<string, unknown> = {
    command: `stemflow bench series --scan ${o.scan} --det ${o.det} --distinct ${o.distinct}${o.count ? ` --count ${o.count}` : ''} --repeat ${o.repeat}${o.lanes ? ` --lanes ${o.lanes}` : ''}${o.index ? ' --index' : ''}`,
    adapter: ctx.adapter,
  };
  try {
    let t = performance.now();
    const encoder = gpuRecordEncoder(device);
    const archiveDir = join(dir, 'archive');
    const converted = await convertArchive(
      [{ name: 'synthetic', source, sources: [] }],
      await nodeArchiveTarget(archiveDir),
      {
        hash: nodeSha256,
        encoder,
        codec: { ...DEFAULT_CODEC, lanesPerFrame: o.lanes ?? DEFAULT_CODEC.lanesPerFrame },
      },
    );
    encoder.close?.();
    const convertMs = performance.now() - t;
    log(
      `converted ${acq.frames} frames in ${convertMs.toFixed(0)} ms: ${converted.archiveBytes} bytes (${(converted.archiveBytes / offsets[acq.frames]).toFixed(3)} x bitshuffle/LZ4)`,
    );
    t = performance.now();
    const archive = await openArchive(nodeArchiveFiles(archiveDir), { hash: nodeSha256 });
    const openMs = performance.now() - t;
    const one = planSeries(archive, [0], device.limits, Number.MAX_SAFE_INTEGER);
    const budget = (o.budgetGiB ?? 120) * GiB;
    const fit = Math.floor(budget / one.totalBytes);
    const count = Math.max(1, Math.min(o.count ?? fit, fit));
    log(
      `one acquisition needs ${(one.totalBytes / GiB).toFixed(2)} GiB on the GPU; ${fit} fit a budget of ${(budget / GiB).toFixed(0)} GiB; loading ${count}`,
    );
    // The same archived acquisition as `count` acquisitions of one series (own GPU buffers each).
    const base = archive.acquisitions[0];
    const series: Archive = {
      ...archive,
      acquisitions: Array.from({ length: count }, (_, i) => ({
        ...base,
        index: i,
        info: { ...base.info, name: `synthetic-${i}` },
      })),
    };
    const [rows, cols] = base.info.detector;
    const c = cols / 2;
    const r = rows / 2;
    const bfR = rows / 8;
    const circle = (cx: number, cy: number, rad: number) => regionMask(disk(cx, cy, rad), rows, cols);
    const ring = (inner: number, outer: number) => regionMask(annulus(c, r, inner, outer), rows, cols);
    const masks = {
      bf: circle(c, r, bfR),
      abf: ring(bfR / 2, bfR),
      adf: ring(bfR * 1.5, rows * 0.48),
    };
    if (o.tune) {
      const tuned = await tuneSeriesQuery(
        ctx,
        series,
        o.tune,
        [
          { name: 'BF', mask: masks.bf },
          { name: 'ADF', mask: masks.adf },
        ],
        { rounds: 3, repeat: o.repeat, budgetBytes: budget },
        log,
      );
      Object.assign(report, { loaded: count, tune: tuned });
      await archive.close();
      if (o.json) await writeFile(o.json, `${JSON.stringify(report, null, 2)}\n`);
      return tuned.every((x) => x.identical) ? 0 : 1;
    }
    t = performance.now();
    const s = await loadSeries(device, series, {
      budgetBytes: budget,
      index: o.index ? { budgetBytes: budget - one.totalBytes * count } : undefined,
    });
    const loadMs = performance.now() - t;
    log(
      `loaded ${count} acquisitions (${(s.plan.totalBytes / GiB).toFixed(1)} GiB: ${s.plan.lines.join('; ')}) in ${loadMs.toFixed(0)} ms`,
    );
    if (s.index) for (const line of s.index.lines) log(line);

    const gestures: { name: string; from: Uint8Array; to: Uint8Array; mode: 'full' | 'auto' }[] = [
      { name: 'BF from scratch', from: masks.adf, to: masks.bf, mode: 'full' },
      { name: 'ABF from scratch', from: masks.bf, to: masks.abf, mode: 'full' },
      { name: 'ADF from scratch', from: masks.bf, to: masks.adf, mode: 'full' },
      { name: 'small nudge (BF centre +1 px)', from: masks.bf, to: circle(c + 1, r, bfR), mode: 'auto' },
      {
        name: 'large edge motion (BF radius x1.5)',
        from: masks.bf,
        to: circle(c, r, bfR * 1.5),
        mode: 'auto',
      },
      { name: 'wide ADF inner radius change', from: masks.adf, to: ring(bfR, rows * 0.48), mode: 'auto' },
    ];
    // As an interactive caller does: the images of the query before last are filled again (no fresh memory a
    // query), two sets in turn. Every image checked below is a copy.
    const sets = o.index
      ? [0, 1].map(() => Array.from({ length: count }, () => new Uint32Array(acq.frames)))
      : undefined;
    // Warm-up: pipelines, first bind groups, the two sets' pages.
    for (const into of sets ?? [undefined]) await s.virtualImages(masks.bf, { mode: 'full', into });
    const results: Record<string, unknown>[] = [];
    const variants = o.index && o.indexLaunch?.length ? o.indexLaunch : [undefined];
    const shapeImages = new Map<string, ExactImage[]>();
    let shapesIdentical = true;
    for (const g of gestures) {
      for (const variant of variants) {
        const times: number[] = [];
        const gpu: number[] = [];
        const stages = {
          prepareMs: [] as number[],
          gpuAndReadbackMs: [] as number[],
          combineMs: [] as number[],
        };
        let modes: string[] = [];
        let decoded = 0;
        for (let k = 0; k < o.repeat; k++) {
          await s.virtualImages(g.from, { mode: 'full', indexLaunch: variant, into: sets?.[0] });
          const timer = createGpuTimer(ctx, 3);
          const q = await s.virtualImages(g.to, {
            mode: g.mode,
            timer: timer ?? undefined,
            indexLaunch: variant,
            into: sets?.[1],
          });
          if (timer) {
            const marks = await timer.read();
            gpu.push(marks[1].ms - marks[0].ms);
            timer.destroy();
          }
          times.push(q.ms);
          // Every launch shape gives the images of the first.
          const key = `${g.name}|${k}`;
          const seen = shapeImages.get(key);
          if (!seen) {
            if (variants.length > 1)
              shapeImages.set(
                key,
                q.images.map((im) => im.slice()),
              );
          } else shapesIdentical &&= q.images.every((im, i) => im.every((v, f) => v === seen[i][f]));
          for (const key of Object.keys(stages) as (keyof typeof stages)[]) stages[key].push(q.stages[key]);
          modes = [...new Set(q.modes)];
          decoded = q.decodedPixels[0];
        }
        const st = stats(times);
        const median = (xs: number[]) => (xs.length ? stats(xs).median : Number.NaN);
        results.push({
          gesture: g.name,
          indexLaunch: variant,
          modes,
          decodedPixelsPerFrame: decoded,
          ms: st,
          perAcquisitionMs: st.median / count,
          gpuPassesMs: median(gpu),
          prepareMs: median(stages.prepareMs),
          gpuAndReadbackMs: median(stages.gpuAndReadbackMs),
          combineMs: median(stages.combineMs),
        });
        log(
          `${g.name}${variant ? ` [workgroups of ${variant.workgroup}]` : ''}: median ${st.median.toFixed(1)} ms, p95 ${st.p95.toFixed(1)} ms for ${count} acquisitions (${(st.median / count).toFixed(2)} ms each; ${modes.join('/')}, ${decoded} pixels decoded per frame); median stages: host ${median(stages.prepareMs).toFixed(1)} ms, GPU passes ${median(gpu).toFixed(1)} ms (timestamps), submit to mapped ${median(stages.gpuAndReadbackMs).toFixed(1)} ms, combine ${median(stages.combineMs).toFixed(1)} ms`,
        );
      }
    }

    // Exactness: every copy equal; 64 sampled frames against the CPU twin's decode.
    const check = await s.virtualImages(masks.adf, { mode: 'full' });
    const same = check.images.every((im) => im.every((v, i) => v === check.images[0][i]));
    const flagged = base.pixelMask;
    let sampled = 0;
    let exact = true;
    for (let k = 0; k < 64; k++) {
      const f = Math.floor((k * acq.frames) / 64);
      const values = await base.readFrames(f, 1);
      let sum = 0;
      for (let p = 0; p < values.length; p++) if (masks.adf[p] && !flagged?.[p]) sum += values[p];
      exact &&= sum === check.images[0][f];
      sampled++;
    }
    log(
      `exact: ${exact && same && shapesIdentical ? 'yes' : 'NO'} (${sampled} sampled frames against the CPU decode; ${count} copies identical: ${same}${variants.length > 1 ? `; launch shapes identical: ${shapesIdentical}` : ''})`,
    );
    Object.assign(report, {
      frames: acq.frames,
      archiveBytes: converted.archiveBytes,
      bslz4Bytes: offsets[acq.frames],
      convertMs,
      openWithChecksumsMs: openMs,
      perAcquisitionGpuBytes: one.totalBytes,
      fitInBudget: fit,
      loaded: count,
      loadMs,
      plan: s.plan.lines,
      index: s.index,
      gestures: results,
      exact: exact && same && shapesIdentical,
    });
    await s.release();
    await archive.close();
    if (o.json) await writeFile(o.json, `${JSON.stringify(report, null, 2)}\n`);
    return exact && same && shapesIdentical ? 0 : 1;
  } finally {
    await source.close();
    ctx.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
}
