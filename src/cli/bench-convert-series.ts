/**
 * The series part of `stemflow bench convert --acquisitions N` (bench-convert.ts): N copies of the acquisition
 * (the same source under different names) converted into one archive with one encoder, as `stemflow convert
 * --acquisition ...` and the app's Archive panel convert a series: the encoder's start-up is paid once. Reports
 * the whole archive's GB/s and, from the encoder's record timeline, how long each acquisition's records took
 * after the previous acquisition's last one (the later acquisitions' GB/s).
 */
import { rmSync } from 'node:fs';
import { type CodecParams, convertArchive } from '../archive/convert';
import { gpuRecordEncoder } from '../archive/gpu-encoder';
import { nodeArchiveTarget, nodeSha256 } from '../archive/node-folder';
import type { AcquisitionSource } from '../source/acquisition-source';
import { gbps, ms } from './bench-load-report';

export interface SeriesBench {
  copies: number;
  source: AcquisitionSource;
  frames: number;
  rawBytes: number;
  /** Bytes of the single-acquisition archive converted before, for the size comparison. */
  singleArchiveBytes: number;
  codec: CodecParams;
  encoderOptions: Parameters<typeof gpuRecordEncoder>[1];
  writesInFlight: number;
  /** Folder to write the series archive in (removed afterwards). */
  dir: string;
  log: (line: string) => void;
}

export async function benchConvertSeries(device: GPUDevice, s: SeriesBench) {
  const { copies, rawBytes, codec } = s;
  await device.queue.onSubmittedWorkDone(); // the deferred free of the encoder before
  const encoder = gpuRecordEncoder(device, s.encoderOptions);
  const t = performance.now();
  const series = await convertArchive(
    Array.from({ length: copies }, (_, i) => ({ name: `synthetic-${i}`, source: s.source, sources: [] })),
    await nodeArchiveTarget(s.dir),
    { hash: nodeSha256, encoder, codec, writesInFlight: s.writesInFlight },
  );
  const seriesMs = performance.now() - t;
  const lines = encoder.timings.timeline;
  await encoder.dispose();
  rmSync(s.dir, { recursive: true, force: true });
  const perAcquisition = Math.ceil(s.frames / codec.recordFrames);
  const ends = Array.from({ length: copies }, (_, k) =>
    Math.max(...lines.slice(k * perAcquisition, (k + 1) * perAcquisition).map((l) => l.endMs)),
  );
  const intervals = ends.map((e, k) => (k === 0 ? e : e - ends[k - 1]));
  const overCopies = series.archiveBytes / (copies * s.singleArchiveBytes);
  const later = intervals.slice(1);
  const report = {
    acquisitions: copies,
    totalMs: seriesMs,
    rawGBps: gbps(copies * rawBytes, seriesMs),
    encodedMsEach: intervals,
    laterRawGBps: later.length ? gbps(rawBytes, later.reduce((a, b) => a + b, 0) / later.length) : 0,
    archiveBytes: series.archiveBytes,
    overSingleArchives: overCopies,
  };
  s.log(
    `series: ${copies} acquisitions into one archive, one encoder: ${ms(seriesMs)} = ${report.rawGBps.toFixed(2)} GB/s of raw counts; last record of each encoded after ${intervals.map((v) => v.toFixed(0)).join(' / ')} ms (later acquisitions ${report.laterRawGBps.toFixed(2)} GB/s); archive ${series.archiveBytes} bytes = ${overCopies.toFixed(4)} x ${copies} single archives`,
  );
  return report;
}
