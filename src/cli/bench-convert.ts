/**
 * `stemflow bench convert`: the lossless tANS archive (issue #5) on a synthetic ARINA-like acquisition.
 * Converts with the GPU encoder into a temporary archive folder, opens it (every file's SHA-256 checked),
 * verifies every count on the GPU (0 mismatches required) and spot-checks frames decoded by the CPU twin
 * against the source. Prints stage timings, raw GB/s, archive bytes and the ratio archive / bitshuffle-LZ4
 * bytes, and the verification's GB/s raw-equivalent. References on the same data: the conversion with shards
 * written one after another and hashed on the main thread (`writesInFlight: 0`, must give the same manifest),
 * and opening with every file hashed on the main thread.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type CodecParams,
  convertArchive,
  DEFAULT_CODEC,
  FILES_PER_WRITE,
  lanesPerFrameFor,
} from '../archive/convert';
import { type GpuEncoderTimings, gpuRecordEncoder } from '../archive/gpu-encoder';
import { laneGeometry } from '../archive/lanes';
import type { ManifestFile } from '../archive/manifest';
import { nodeArchiveFiles, nodeArchiveTarget, nodeFileIdentities, nodeSha256 } from '../archive/node-folder';
import { openArchive } from '../archive/reader';
import { generateSynthetic } from '../bench/synthetic';
import { shardPaths, syntheticSource, writeChunkFile } from '../bench/synthetic-source';
import { acquireDevice } from '../gpu/device';
import { nodeGpu } from '../gpu/node-gpu';
import type { AcquisitionSource } from '../source/acquisition-source';
import { hashAtEnd, hostReference, identitiesHere, spotCheck } from './bench-convert-references';
import {
  lastShardsLine,
  stageLine,
  startupLine,
  timelineLine,
  timelineSummary,
} from './bench-convert-report';
import { benchConvertSeries } from './bench-convert-series';
import { benchVerify } from './bench-convert-verify';
import { GB, gbps, ms } from './bench-load-report';

export interface BenchConvertOptions {
  scan: number;
  det: number;
  distinct: number;
  /** Frames per record (default 16,384). */
  record?: number;
  /** Records in flight in the encoder (default 2). */
  slots?: number;
  /** Records staged at once by the verification (default VERIFY_SLOTS). */
  verifySlots?: number;
  /** Frames the verifier checks at once (default VERIFY_PIECE_FRAMES). */
  verifyPieces?: number;
  /** MiB per concurrent read of source chunks and archive words (default 8). */
  readPieceMiB?: number;
  /** Output readbacks the encoder lends (written without a host copy; default 2, 0: copy every record). */
  lend?: number;
  /**
   * Copy a record's words into host memory when every lent readback is out (the behaviour before the twelfth
   * session); by default records wait for one (GpuEncoderOptions.lentOnly).
   */
  copyFallback?: boolean;
  /**
   * Shards whose record bytes writes may hold while the next records are encoded (default 4; convertArchive's
   * writesInFlight); files hashed from disk once written (lent records) keep being hashed and synced meanwhile,
   * up to FILES_PER_WRITE x as many.
   */
  writes?: number;
  /** GPU memory the encoder may plan, GiB (default 64). */
  budgetGiB?: number;
  /**
   * Also converts this many copies of the acquisition into one archive with one encoder (default 1: not done),
   * as a series is converted: the encoder's start-up is paid once.
   */
  acquisitions?: number;
  /**
   * Lent shards hashed from disk only once fully written (the twelfth session's form), not piece by piece as
   * they are written: for comparison.
   */
  hashAtEnd?: boolean;
  /**
   * The source files' identity: hashed in worker threads alongside the conversion (default, as `stemflow
   * convert`), on the main thread before it ('before': the CLI before the thirteenth session), or not ('none').
   */
  sources?: 'alongside' | 'before' | 'none';
  /** The source decode's variant in the encoder and the verifier (default DEFAULT_DECODE_VARIANT). */
  decode?: string;
  /** Cold conversions run one after another (default 1); the last is verified and reported in full. */
  runs?: number;
  json?: string;
  keep?: boolean;
}

export async function benchConvert(o: BenchConvertOptions): Promise<number> {
  const log = (s: string) => process.stdout.write(`${s}\n`);
  const codec: CodecParams = { ...DEFAULT_CODEC, recordFrames: o.record ?? DEFAULT_CODEC.recordFrames };
  const writesInFlight = o.writes ?? 4;
  const encoderOptions = {
    slots: o.slots,
    lendReadbacks: o.lend ?? 2,
    lentOnly: !o.copyFallback,
    budgetBytes: (o.budgetGiB ?? 64) * 2 ** 30,
    decodeVariant: o.decode,
  };
  let t = performance.now();
  const acq = generateSynthetic({
    scan: [o.scan, o.scan],
    detector: o.det,
    distinct: o.distinct,
    seed: 20261129,
  });
  const generateMs = performance.now() - t;
  const dir = mkdtempSync(join(tmpdir(), 'stemflow-bench-convert-'));
  const path = join(dir, 'synthetic_data.bslz4');
  const offsets = await writeChunkFile(acq, path);
  const rawBytes = acq.frames * o.det * o.det * 2;
  const compressedBytes = offsets[acq.frames];
  log(
    `synthetic ${o.scan}x${o.scan} x ${o.det}x${o.det} uint16: ${acq.frames} frames (${o.distinct} distinct), raw ${(rawBytes / GB).toFixed(3)} GB, bitshuffle/LZ4 ${(compressedBytes / GB).toFixed(3)} GB; generated in ${(generateMs / 1000).toFixed(1)} s`,
  );
  const ctx = await acquireDevice(nodeGpu());
  const { device } = ctx;
  log(`adapter: ${ctx.adapter.vendor} ${ctx.adapter.architecture} ${ctx.adapter.description}`);
  // Source reads, shard writes and fsyncs share libuv's pool (4 threads unless UV_THREADPOOL_SIZE is set).
  const uvThreads = Number(process.env.UV_THREADPOOL_SIZE ?? 4);
  log(
    `encoder: ${o.slots ?? 2} record slots (+1 record reading ahead), ${encoderOptions.lendReadbacks} lent readbacks${o.copyFallback ? ' (copied into host memory when all are out)' : ' (every record lent: records wait for one)'}, ${writesInFlight} shards written at once (${FILES_PER_WRITE * writesInFlight} files hashed and synced at once), libuv threads ${uvThreads}`,
  );
  const readPieceBytes = Math.round((o.readPieceMiB ?? 8) * 2 ** 20);
  const source = await syntheticSource(acq, path, offsets, readPieceBytes);
  const report: Record<string, unknown> = {
    command: `stemflow bench convert --scan ${o.scan} --det ${o.det} --distinct ${o.distinct} --record ${codec.recordFrames} --slots ${o.slots ?? 2} --lend ${encoderOptions.lendReadbacks}${o.copyFallback ? ' --copy-fallback' : ''} --writes ${writesInFlight} --budget ${o.budgetGiB ?? 64} --read-piece ${readPieceBytes / 2 ** 20}${(o.acquisitions ?? 1) > 1 ? ` --acquisitions ${o.acquisitions}` : ''}${o.verifySlots ? ` --verify-slots ${o.verifySlots}` : ''}${o.verifyPieces ? ` --verify-pieces ${o.verifyPieces}` : ''}${o.runs ? ` --runs ${o.runs}` : ''}${o.hashAtEnd ? ' --hash-at-end' : ''}${o.sources ? ` --sources ${o.sources}` : ''}${o.decode ? ` --decode ${o.decode}` : ''}`,
    adapter: ctx.adapter,
    uvThreadpool: uvThreads,
    frames: acq.frames,
    detector: [o.det, o.det],
    codec,
    rawBytes,
    compressedBytes,
  };
  try {
    // Per-stage GPU times: the first records encoded one pass at a time (waits after every pass).
    report.profile = await profileStages(device, source, codec, log);

    // Buffers destroyed are freed by the driver at the next wait on the queue (H200: ~20 ms per GB, see
    // docs/performance.md): pay for the profile's here, not inside the timed conversion.
    await device.queue.onSubmittedWorkDone();
    // Each run is cold (a new encoder); the last one's archive is verified and reported in full.
    const runs = Math.max(1, Math.floor(o.runs ?? 1));
    const runsMs: number[] = [];
    const wallMs: number[] = [];
    const sourcesMs: number[] = [];
    const sourceMode = o.sources ?? 'alongside';
    const shardFiles = shardPaths(path, acq.frames);
    let archiveDir = '';
    let run: Awaited<ReturnType<typeof convertOnce>> | undefined;
    const convertOnce = async (i: number) => {
      const out = join(dir, `archive-${i}`);
      const encoder = gpuRecordEncoder(device, encoderOptions);
      // The source files' identity for the manifest, as `stemflow convert` computes it (worker threads, while
      // converting), or on this thread before converting (the CLI before the thirteenth session), or not at all.
      const t0 = performance.now();
      let hashedMs = 0;
      let sources: ManifestFile[] | Promise<ManifestFile[]> = [];
      if (sourceMode === 'before') {
        sources = await identitiesHere(shardFiles);
        hashedMs = performance.now() - t0;
      } else if (sourceMode === 'alongside') {
        sources = nodeFileIdentities(shardFiles).then((s) => {
          hashedMs = performance.now() - t0;
          return s;
        });
      }
      const t1 = performance.now();
      const result = await convertArchive(
        [{ name: 'synthetic', source, sources }],
        hashAtEnd(await nodeArchiveTarget(out), o.hashAtEnd),
        { hash: nodeSha256, encoder, codec, writesInFlight },
      );
      const ms = performance.now() - t1;
      const wall = performance.now() - t0;
      const plan = encoder.plan; // read before dispose, which forgets it
      const timings = encoder.timings;
      await encoder.dispose();
      await device.queue.onSubmittedWorkDone(); // the deferred free, outside the next run
      return { out, plan, timings, result, ms, wall, hashedMs };
    };
    for (let i = 0; i < runs; i++) {
      if (archiveDir) rmSync(archiveDir, { recursive: true, force: true });
      run = await convertOnce(i);
      archiveDir = run.out;
      runsMs.push(run.ms);
      wallMs.push(run.wall);
      sourcesMs.push(run.hashedMs);
      log(
        `convert run ${i + 1} of ${runs}: ${ms(run.ms)} = ${gbps(rawBytes, run.ms).toFixed(2)} GB/s; ${sourceMode === 'none' ? 'source files not hashed' : `${shardFiles.length} source files hashed ${sourceMode === 'before' ? 'before converting' : 'alongside (worker threads)'}, done at ${ms(run.hashedMs)}`}; from the start to the archive published ${ms(run.wall)} = ${gbps(rawBytes, run.wall).toFixed(2)} GB/s`,
      );
    }
    if (!run) throw new Error('unreachable');
    const { plan, timings: encoderTimings, result, ms: convertMs } = run;
    const ratio = result.archiveBytes / compressedBytes;
    const eagerBytes = plan?.buffers.reduce((n, b) => n + (b.lazy ? 0 : b.bytes), 0) ?? 0;
    report.convert = {
      totalMs: convertMs,
      runsMs,
      sources: { mode: sourceMode, files: shardFiles.length, hashedMs: sourcesMs, wallMs },
      medianMs: [...runsMs].sort((a, b) => a - b)[Math.floor(runsMs.length / 2)],
      encodeMs: result.timings.encodeMs,
      writeHashMs: result.timings.writeMs,
      tail: result.timings.tail,
      encoderStages: { ...encoderTimings, timeline: undefined },
      timeline: timelineSummary(encoderTimings.timeline, result.timings.records),
      records: encoderTimings.timeline.map((line, r) => ({ ...line, ...result.timings.records[r] })),
      rawGBps: gbps(rawBytes, convertMs),
      archiveBytes: result.archiveBytes,
      archiveOverBslz4: ratio,
      archiveOverRaw: result.archiveBytes / rawBytes,
      slotBytes: plan?.slotBytes,
      slotCreatedBytes: eagerBytes,
      gpuBytes: plan?.totalBytes,
    };
    log(
      `plan: ${plan?.slots} record slots of ${((plan?.slotBytes ?? 0) / 2 ** 30).toFixed(2)} GiB, of which created with the slot ${(eagerBytes / 2 ** 30).toFixed(2)} GiB (${plan?.buffers.map((b) => `${b.label}${b.lazy ? ' (when needed)' : ''} ${(b.bytes / 2 ** 20).toFixed(1)} MiB`).join(', ')}); one lane scratch for all slots ${((plan?.sharedBytes ?? 0) / 2 ** 30).toFixed(2)} GiB`,
    );
    log(
      `convert: ${ms(convertMs)} = ${gbps(rawBytes, convertMs).toFixed(2)} GB/s of raw counts; in the encoder ${ms(result.timings.encodeMs)}, write+hash ${ms(result.timings.writeMs)}`,
    );
    log(`encoder stages, summed over records (records overlap): ${stageLine(encoderTimings)}`);
    log(timelineLine(report.convert as { timeline: ReturnType<typeof timelineSummary> }));
    log(startupLine(encoderTimings, codec.recordFrames));
    log(lastShardsLine(result.timings.records));
    const tail = result.timings.tail;
    log(
      `tail after the last record is encoded: ${ms(tail.totalMs)} (state .npz built ${ms(tail.stateMs)} while the last shards are written; then waiting for shards + state written + hashed ${ms(tail.drainMs)}, manifest ${ms(tail.manifestMs)}, publish ${ms(tail.publishMs)})`,
    );
    log(
      `archive: ${result.archiveBytes} bytes = ${ratio.toFixed(3)} x bitshuffle/LZ4 (${compressedBytes} bytes), ${(rawBytes / result.archiveBytes).toFixed(2)}x smaller than raw`,
    );

    const copies = Math.max(1, Math.floor(o.acquisitions ?? 1));
    if (copies > 1) {
      report.convertSeries = await benchConvertSeries(device, {
        copies,
        source,
        frames: acq.frames,
        rawBytes,
        singleArchiveBytes: result.archiveBytes,
        codec,
        encoderOptions,
        writesInFlight,
        dir: join(dir, 'archive-series'),
        log,
      });
    }

    // Reference: the same conversion with shards written one after another, hashed on the main thread.
    const serialDir = join(dir, 'archive-serial');
    await device.queue.onSubmittedWorkDone(); // the deferred free of the encoder above
    const serialEncoder = gpuRecordEncoder(device, encoderOptions);
    t = performance.now();
    const serial = await convertArchive(
      [{ name: 'synthetic', source, sources: result.manifest.acquisitions[0].sources }],
      await nodeArchiveTarget(serialDir),
      { hash: nodeSha256, encoder: serialEncoder, codec, writesInFlight: 0 },
    );
    const serialMs = performance.now() - t;
    await serialEncoder.dispose();
    const sameManifest =
      JSON.stringify(serial.manifest.files) === JSON.stringify(result.manifest.files) &&
      JSON.stringify(serial.manifest.acquisitions) === JSON.stringify(result.manifest.acquisitions);
    rmSync(serialDir, { recursive: true, force: true });
    report.convertSerial = { totalMs: serialMs, rawGBps: gbps(rawBytes, serialMs), sameManifest };
    log(
      `reference, shards one after another hashed on the main thread: ${ms(serialMs)} = ${gbps(rawBytes, serialMs).toFixed(2)} GB/s; same manifest: ${sameManifest}`,
    );

    report.hostReference = await hostReference(
      dir,
      Math.ceil(result.archiveBytes / Math.ceil(acq.frames / codec.recordFrames)),
    );
    const ref = report.hostReference as Awaited<ReturnType<typeof hostReference>>;
    log(
      `host reference for one shard of ${ref.bytes} bytes: SHA-256 ${ms(ref.sha256Ms)}, write ${ms(ref.writeMs)}, fsync ${ms(ref.fsyncMs)}`,
    );

    const files = nodeArchiveFiles(archiveDir);
    t = performance.now();
    const serialOpen = await openArchive({ open: files.open }, { hash: nodeSha256 });
    const openMainThreadMs = performance.now() - t;
    await serialOpen.close();
    t = performance.now();
    const archive = await openArchive(files, { hash: nodeSha256, readPieceBytes });
    const openMs = performance.now() - t;
    try {
      const acquisition = archive.acquisitions[0];
      const v = await benchVerify(device, acquisition, source, {
        slots: o.verifySlots,
        pieceFrames: o.verifyPieces,
        decodeVariant: o.decode,
        rawBytes,
        log,
      });
      const spot = await spotCheck(acquisition, source);
      const ok =
        sameManifest &&
        v.exact &&
        v.verify.compared === acq.frames * o.det * o.det &&
        spot.every((s) => s.exact);
      report.verify = {
        openWithHashCheckMs: openMs,
        openHashedOnMainThreadMs: openMainThreadMs,
        ...v.report,
        spotCheck: spot,
      };
      log(
        `open (every SHA-256 checked): ${ms(openMs)} (hashed on the main thread, 4 files at once: ${ms(openMainThreadMs)})`,
      );
      log(
        `spot check (CPU twin decode vs source): ${spot.map((s) => `frame ${s.frame} ${s.exact ? 'exact' : 'MISMATCH'}`).join(', ')}`,
      );
      report.exact = ok;
      log(`summary: ${ok ? 'exact' : 'NOT EXACT'}`);
      if (o.json)
        await writeFile(
          o.json,
          JSON.stringify(report, (_k, v) => (typeof v === 'bigint' ? v.toString() : v), 2),
        );
      return ok ? 0 : 1;
    } finally {
      await archive.close();
    }
  } finally {
    await source.close();
    ctx.destroy();
    if (!o.keep) rmSync(dir, { recursive: true, force: true });
  }
}

async function profileStages(
  device: GPUDevice,
  source: AcquisitionSource,
  codec: CodecParams,
  log: (s: string) => void,
) {
  const [rows, cols] = source.summary.detector;
  const params = {
    dtype: 'uint16' as const,
    geometry: laneGeometry(rows * cols, lanesPerFrameFor(rows * cols, codec.lanesPerFrame)),
    cols,
    tableLog: codec.tableLog,
    classes: codec.classes,
  };
  const encoder = gpuRecordEncoder(device, { prefetch: false, profile: true });
  try {
    const frames = Math.min(codec.recordFrames, source.frameCount);
    encoder.recycle(await encoder.encode(source, 0, frames, params)); // warm-up
    const warm = { ...encoder.timings };
    const records = Math.min(3, Math.floor(source.frameCount / frames));
    for (let r = 0; r < records; r++)
      encoder.recycle(await encoder.encode(source, r * frames, frames, params));
    const per: Record<string, number> = {};
    for (const [k, v] of Object.entries(encoder.timings)) {
      if (k !== 'records' && typeof v === 'number')
        per[k] = (v - (warm[k as keyof GpuEncoderTimings] as number)) / records;
    }
    log(
      `per record of ${frames} frames, one pass at a time: ${stageLine(per as unknown as GpuEncoderTimings)}`,
    );
    return { recordFrames: frames, records, perRecordMs: per };
  } finally {
    await encoder.dispose();
  }
}
