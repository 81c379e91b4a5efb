/**
 * Lines and summaries of `stemflow bench convert` (bench-convert.ts): the encoder's start-up and stages, the
 * timeline of records and their shards.
 */
import type { RecordTiming } from '../archive/convert';
import type { GpuEncoderTimings, RecordTimeline } from '../archive/gpu-encoder';
import { ms } from './bench-load-report';

/** Start-up of the conversion: the encoder's state, and where the first records' time went. */
export function startupLine(et: GpuEncoderTimings, recordFrames: number): string {
  const f = (line: RecordTimeline) =>
    `starts ${ms(line.startMs)}, staging wait ${ms(line.stagingWaitMs)}, read ${ms(line.readMs)}, slot wait ${ms(line.slotWaitMs)}, pipelines ${ms(line.pipelineWaitMs)}, GPU waits: sums ${ms(line.gpuWaits.sums)} / histogram ${ms(line.gpuWaits.histogram)} / lanes ${ms(line.gpuWaits.lanes)} / words ${ms(line.gpuWaits.words)}, model ${ms(line.modelMs)}, readback creation ${ms(line.readbackCreateMs)}, loan wait ${ms(line.loanWaitMs)}, ends ${ms(line.endMs)}`;
  const records = [0, 1, 2]
    .map((r) => et.timeline.find((line) => line.firstFrame === r * recordFrames))
    .filter((line) => line !== undefined);
  return [
    `start-up: state ${ms(et.setupMs)} (first slot's buffers ${ms(et.firstSlotMs)}, decode pass + scratch ${ms(et.decodeSetupMs)}, error scope ${ms(et.setupScopeMs)}); later slots ${ms(et.laterSlotsMs)} (created after the first record's decode is submitted, each slot in one error scope); records waiting for pipelines ${ms(et.pipelineWaitMs)}; creating readbacks ${ms(et.readbackCreateMs)} (all, in the background after the first)`,
    ...records.map((line, r) => `  record ${r}: ${f(line)}`),
  ].join('\n');
}

export function stageLine(s: GpuEncoderTimings): string {
  return [
    `read ${ms(s.readMs)}`,
    `upload ${ms(s.uploadMs)}`,
    `decode${s.sumsMs > 0 ? '' : '+stats'} ${ms(s.decodeMs)}`,
    ...(s.sumsMs > 0 ? [`sums ${ms(s.sumsMs)}`] : []),
    `model on host ${ms(s.modelMs)}`,
    `histogram ${ms(s.histogramMs)}`,
    `encode ${ms(s.encodeMs)}`,
    ...(s.compactMs > 0 ? [`compaction ${ms(s.compactMs)}`] : []),
    `${s.compactMs > 0 ? '' : 'compaction+'}readback ${ms(s.readbackMs)}`,
    `host copy ${ms(s.hostCopyMs)}`,
  ].join(', ');
}

/** Encodes the first (up to 3) records one pass at a time, after a warm-up record; no archive is written. */

/** Mean and max per record of where the time went (the first record, with the pipelines, left out). */
export function timelineSummary(lines: RecordTimeline[], converter: RecordTiming[]) {
  const stat = (values: number[]) => {
    const v = values.length > 1 ? values.slice(1) : values;
    return {
      mean: v.reduce((a, b) => a + b, 0) / Math.max(1, v.length),
      max: v.reduce((a, b) => Math.max(a, b), 0),
    };
  };
  const ends = lines.map((l) => l.endMs).sort((a, b) => a - b);
  return {
    records: lines.length,
    lent: lines.filter((l) => l.lent).length,
    intervalMs: stat(ends.map((e, i) => (i === 0 ? e : e - ends[i - 1]))),
    stagingWaitMs: stat(lines.map((l) => l.stagingWaitMs)),
    readMs: stat(lines.map((l) => l.readMs)),
    slotWaitMs: stat(lines.map((l) => l.slotWaitMs)),
    hostModelMs: stat(lines.map((l) => l.modelMs)),
    hostCopyMs: stat(lines.map((l) => l.copyMs)),
    loanWaitMs: stat(lines.map((l) => l.loanWaitMs)),
    laneTurnWaitMs: stat(lines.map((l) => l.laneTurnWaitMs)),
    gpuWaitMs: stat(lines.map((l) => l.gpuWaitMs)),
    recordMs: stat(lines.map((l) => l.endMs - l.startMs)),
    converterEncodeWaitMs: stat(converter.map((c) => c.encodeWaitMs)),
    converterWriteWaitMs: stat(converter.map((c) => c.writeWaitMs)),
    // Each shard from the record's arrival at the converter: bytes written, file synced, SHA-256 known.
    shardWrittenMs: stat(converter.map((c) => c.writtenMs - c.encodedMs)),
    shardSyncedMs: stat(converter.map((c) => c.syncedMs - c.encodedMs)),
    shardHashedMs: stat(converter.map((c) => c.hashedMs - c.encodedMs)),
  };
}

/** The last shards, from their records' arrival: what the tail waits for. */
export function lastShardsLine(converter: RecordTiming[]): string {
  const f = (c: RecordTiming) =>
    `at ${c.encodedMs.toFixed(0)} ms: written +${(c.writtenMs - c.encodedMs).toFixed(0)}, synced +${(c.syncedMs - c.encodedMs).toFixed(0)}, hashed +${(c.hashedMs - c.encodedMs).toFixed(0)}`;
  return `last shards, from their records' arrival: ${converter.slice(-3).map(f).join('; ')}`;
}

export function timelineLine({ timeline: t }: { timeline: ReturnType<typeof timelineSummary> }): string {
  const f = (s: { mean: number; max: number }) => `${s.mean.toFixed(1)} / ${s.max.toFixed(1)}`;
  return `timeline per record, mean / max ms (${t.records} records, first left out; ${t.lent} written from lent readbacks): one record every ${f(t.intervalMs)}; each record: start to end ${f(t.recordMs)}, waiting for its staging ${f(t.stagingWaitMs)}, read ${f(t.readMs)}, then waiting for its slot ${f(t.slotWaitMs)}, host model ${f(t.hostModelMs)}, host copy ${f(t.hostCopyMs)}, loan wait ${f(t.loanWaitMs)}, lane scratch wait ${f(t.laneTurnWaitMs)}, GPU wait ${f(t.gpuWaitMs)}; converter waiting for the encoder ${f(t.converterEncodeWaitMs)}, for writes + hashes ${f(t.converterWriteWaitMs)}; each shard from its record's arrival: written ${f(t.shardWrittenMs)}, synced ${f(t.shardSyncedMs)}, hashed ${f(t.shardHashedMs)}`;
}
