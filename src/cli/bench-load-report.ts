/**
 * The text report of `stemflow bench load` (src/cli/bench.ts): each load's timings and GPU timeline, the
 * resident form, the per-batch pass profile and its variants, the exactness checks.
 */
import type { GpuLoad } from '../compute/gpu-load';
import type { GpuLoadTimings } from '../compute/gpu-load-types';
import { type GpuTimer, summariseMarks } from '../gpu/gpu-timer';
import type { ResidentReads } from '../kernels/resident-virtual-image';
import type { PassProfile } from './bench-profile';

export const GB = 1e9;

export type Log = (s: string) => void;

export function ms(v: unknown): string {
  return `${(v as number).toFixed(1)} ms`;
}

/** GB/s of `bytes` moved in `millis` ms. */
export const gbps = (bytes: number, millis: number) => bytes / (millis / 1000) / GB;

/** One load's wall times (load 0 is the warm-up). */
export function logLoad(log: Log, r: number, timings: GpuLoadTimings): void {
  log(
    `load ${r === 0 ? '(warm-up)' : r}: ${ms(timings.totalMs)} (allocate ${ms(timings.allocateMs)}, read wait ${ms(timings.readWaitMs)}, upload ${ms(timings.uploadMs)}, submit ${ms(timings.submitMs)}, GPU wait ${ms(timings.gpuWaitMs)}, readback ${ms(timings.readbackMs)})`,
  );
}

/**
 * A timed load's GPU timeline (marks per batch: copy, decode, transpose[, place], then gap to the next batch; with
 * copyAhead decode, copy, ...), read and logged; the timer is destroyed. Returns the per-batch log (each batch's
 * marks up to its 'gap', the parse-ahead's first encoder the first entry without host times) and the summed
 * timeline.
 */
export async function readLoadTimeline(
  log: Log,
  timer: GpuTimer,
  batchHostMs: GpuLoadTimings['batchHostMs'],
): Promise<{ batchLog: unknown[]; line: Record<string, number> }> {
  const marks = await timer.read();
  const { byLabel, spanMs } = summariseMarks(marks);
  timer.destroy();
  const groups: (typeof marks)[] = [];
  let open: typeof marks = [];
  for (const mark of marks) {
    open.push(mark);
    if (mark.label === 'gap') {
      groups.push(open);
      open = [];
    }
  }
  const firstBatch = groups.length - (batchHostMs?.length ?? groups.length);
  const batchLog = groups.map((g, k) => ({
    gpuStart: g[0].ms,
    gpu: Object.fromEntries(g.slice(0, -1).map((m, j) => [m.label, g[j + 1].ms - m.ms])),
    gap: k + 1 < groups.length ? groups[k + 1][0].ms - g[g.length - 1].ms : null,
    host: k >= firstBatch ? batchHostMs?.[k - firstBatch] : undefined,
  }));
  const line = { ...byLabel, spanMs };
  log(
    `  GPU timeline (timestamps, all batches): ${Object.entries(line)
      .map(([k, v]) => `${k} ${ms(v)}`)
      .join(', ')}`,
  );
  return { batchLog, line };
}

/** The resident form of a uint16 load in byte planes (nothing for other forms). */
export function logResident(log: Log, load: GpuLoad, all: ResidentReads): void {
  const r = load.plan.resident;
  if (r.form === 'planes')
    log(
      `resident: ${r.high} high plane, ${(load.plan.residentBytes / GB).toFixed(3)} GB resident${r.high === 'slots' ? ` (${r.hotSlots.reduce((a, b) => a + b, 0)} slots of ${r.slotFrames} B${load.timings.compactMs ? `, compacted in ${ms(load.timings.compactMs)}` : ''})` : ''}; ${all.hotSegments} of ${all.segments} (pixel, segment) pairs hot (${((100 * all.hotSegments) / all.segments).toFixed(2)} %, segments of ${r.segmentFrames}); low plane ${(all.loBytes / GB).toFixed(2)} GB, high plane ${(all.loBytes / GB).toFixed(2)} GB of which ${(all.hiBytes / GB).toFixed(3)} GB in hot segments`,
    );
}

/** GPU time per batch of the decode and transpose passes, and of each variant profiled. */
export function logProfile(log: Log, profile: PassProfile): void {
  log(
    `GPU per batch of ${profile.batchFrames} frames (wall / repeats): decode+audit ${ms(profile.decodeMs)} (${(profile.decodedBytes / (profile.decodeMs / 1000) / GB).toFixed(0)} GB/s decoded), transpose+DP ${ms(profile.transposeMs)}; whole scan: ${ms(profile.scanGpuMs)} GPU`,
  );
  if (profile.timestamps) {
    const t = profile.timestamps;
    log(
      `GPU per batch (timestamps): decode+audit ${ms(t.decodeMs)} (${(profile.decodedBytes / (t.decodeMs / 1000) / GB).toFixed(0)} GB/s decoded), transpose+DP ${ms(t.transposeMs)}; whole scan ${ms(t.scanGpuMs)}`,
    );
  }
  for (const v of profile.variants) {
    log(
      `decode variant ${v.name}: ${ms(v.decodeMs)} per batch (${(profile.decodedBytes / (v.decodeMs / 1000) / GB).toFixed(0)} GB/s), ${v.identical ? 'identical outputs' : 'MISMATCH'}`,
    );
  }
  for (const t of profile.transposeVariants) {
    log(
      `transpose variant ${t.name}: ${ms(t.transposeMs)} per batch (best ${ms(t.minMs)}; ${(profile.decodedBytes / (t.transposeMs / 1000) / GB).toFixed(0)} GB/s of decoded input), ${t.identical ? 'identical DP sums and rows' : 'MISMATCH'}${t.vec4 ? ', 16-byte accesses' : ''}`,
    );
  }
}

/** Each exactness check, ok or MISMATCH. */
export function logChecks(log: Log, checks: Record<string, boolean>): void {
  log(
    `exact: ${Object.entries(checks)
      .map(([k, v]) => `${k} ${v ? 'ok' : 'MISMATCH'}`)
      .join(', ')}`,
  );
}
