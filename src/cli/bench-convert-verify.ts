/**
 * The verification part of `stemflow bench convert` (bench-convert.ts): the GPU verifier timed with the next
 * record's staging copies overlapping this record's decode and compare (default), without the overlap (one
 * input set, as before), with one staging slot more, one step at a time (profile), and at other compare
 * dispatch sizes. Every run must be exact.
 */
import {
  COMPARE_LANES_PER_DISPATCH,
  VERIFY_PIECE_FRAMES,
  VERIFY_SLOTS,
  verifyAcquisitionGpu,
} from '../archive/gpu-verify';
import type { ArchiveAcquisition } from '../archive/reader';
import { DEFAULT_DECODE_VARIANT, loadDecodeVariant } from '../gpu/passes/bslz4-decode-variants';
import { createStagingPool } from '../gpu/staging-pool';
import type { AcquisitionSource } from '../source/acquisition-source';
import { gbps, ms } from './bench-load-report';

type Verify = Awaited<ReturnType<typeof verifyAcquisitionGpu>>;
const exact = (r: Verify) => r.mismatches === 0 && r.laneErrors === 0 && r.sourceErrors === 0;

export async function benchVerify(
  device: GPUDevice,
  acquisition: ArchiveAcquisition,
  source: AcquisitionSource,
  {
    slots = VERIFY_SLOTS,
    pieceFrames = VERIFY_PIECE_FRAMES,
    decodeVariant,
    rawBytes,
    log,
  }: {
    slots?: number;
    pieceFrames?: number;
    decodeVariant?: string;
    rawBytes: number;
    log: (s: string) => void;
  },
) {
  const run = async (options: Parameters<typeof verifyAcquisitionGpu>[3] = {}) => {
    // The run before destroyed its buffers; the driver frees them at the next wait on the queue: here.
    await device.queue.onSubmittedWorkDone();
    return verifyAcquisitionGpu(device, acquisition, source, {
      slots,
      pieceFrames,
      decodeVariant,
      ...options,
    });
  };
  await run(); // warm-up (pipelines)
  const verify = await run();
  // This run's decode against the default's and the load's (the list decode, where the device has it), cold, in
  // alternating rounds (hosts vary run to run).
  const variants = [
    ...new Set([
      verify.decodeVariant,
      DEFAULT_DECODE_VARIANT,
      loadDecodeVariant(device.limits.maxStorageBuffersPerShaderStage, device.features.has('subgroups')),
    ]),
  ];
  const decodeRounds: Record<string, number[]> = Object.fromEntries(variants.map((v) => [v, []]));
  let decodeRoundsExact = true;
  for (const v of variants.slice(1)) await run({ decodeVariant: v }); // their pipelines
  for (let round = 0; round < 3 && variants.length > 1; round++) {
    for (const v of variants) {
      const r = await run({ decodeVariant: v });
      decodeRoundsExact &&= exact(r);
      decodeRounds[v].push(r.ms);
    }
  }
  // With staging kept between verifications (a second verification on the same device): filled once, then
  // three runs (median).
  const staging = createStagingPool();
  await run({ staging });
  const pooledRuns = [await run({ staging }), await run({ staging }), await run({ staging })];
  staging.clear();
  const pooled = [...pooledRuns].sort((a, b) => a.ms - b.ms)[1];
  const serialCopies = await run({ overlap: false });
  const moreSlots = await run({ slots: slots + 1 });
  // Where a record's verification goes: each step waited for (the timed runs overlap them).
  const prof = await run({ profile: true });
  const nRec = acquisition.records.length;
  const perRecord = {
    records: nRec,
    pipelinedMs: verify.ms / nRec,
    serialCopiesMs: serialCopies.ms / nRec,
    moreSlotsMs: moreSlots.ms / nRec,
    setupMs: verify.timings.setupMs,
    /** Per record after the set-up (buffers, first reads, compare pipeline). */
    afterSetupMs: (verify.ms - verify.timings.setupMs) / nRec,
    copyMs: prof.timings.copyMs / nRec,
    decodeMs: prof.timings.decodeMs / nRec,
    compareMs: prof.timings.compareMs / nRec,
    notDecodeMs: verify.ms / nRec - prof.timings.decodeMs / nRec,
    profiledTotalMs: prof.ms,
    exact: exact(prof) && exact(serialCopies) && exact(moreSlots),
  };
  // Piece sizes by staging slots: rounds of every configuration in turn (hosts vary run to run), medians.
  const configs = [
    [16384, 1],
    [8192, 1],
    [8192, 2],
    [4096, 1],
    [4096, 2],
    [4096, 3],
    [2048, 2],
    [2048, 3],
  ];
  const runs: Verify[][] = configs.map(() => []);
  for (let round = 0; round < 3; round++) {
    for (const [k, [frames, n]] of configs.entries())
      runs[k].push(await run({ pieceFrames: frames, slots: n }));
  }
  const median = (v: number[]) => [...v].sort((a, b) => a - b)[v.length >> 1];
  const pieceSweep = configs.map(([frames, n], k) => {
    const rs = runs[k];
    const m = (f: (t: Verify['timings']) => number) => median(rs.map((r) => f(r.timings)));
    return {
      pieceFrames: frames,
      slots: n,
      ms: median(rs.map((r) => r.ms)),
      allMs: rs.map((r) => r.ms),
      setupMs: m((t) => t.setupMs),
      readMs: m((t) => t.readMs),
      stagingWaitMs: m((t) => t.stagingWaitMs),
      uploadMs: m((t) => t.uploadMs),
      planBytes: rs[0].plan.totalBytes,
      GBps: gbps(rawBytes, median(rs.map((r) => r.ms))),
      exact: rs.every(exact),
    };
  });
  // Compare per record at other dispatch sizes (each step waited for; every run must stay exact). Sizes above a
  // piece's lanes dispatch the same as a whole piece, so they are left out.
  const compareSweep = [];
  const pieceLanes = pieceFrames * acquisition.geometry.slices;
  for (const lanes of [32768, 131072, 262144].filter((n) => n <= pieceLanes)) {
    const r = await run({ profile: true, compareLanes: lanes });
    compareSweep.push({ lanesPerDispatch: lanes, compareMs: r.timings.compareMs / nRec, exact: exact(r) });
  }
  const t = verify.timings;
  const p = verify.plan;
  const gib = (n: number) => `${(n / 2 ** 30).toFixed(2)} GiB`;
  log(
    `GPU verify: ${verify.compared} values, ${verify.mismatches} mismatches, ${verify.laneErrors} lane errors, ${verify.sourceErrors} source errors in ${ms(verify.ms)} = ${gbps(rawBytes, verify.ms).toFixed(1)} GB/s raw-equivalent (decode ${verify.decodeVariant}; set-up ${ms(t.setupMs)}: plan and decode pass ${ms(t.setupPrepareMs)} (pieces ${ms(t.setupPiecesMs)}), staging ${ms(t.setupStagingMs)}, GPU buffers ${ms(t.setupBuffersMs)}, compare pipeline ${ms(t.setupPipelineMs)}; read ${ms(t.readMs)}, waiting for staging slots ${ms(t.stagingWaitMs)}, upload ${ms(t.uploadMs)} (unmapping ${ms(t.unmapMs)}), loop waiting for reads + final readback ${ms(t.gpuWaitMs)}); plan ${gib(p.totalBytes)}: ${p.sets} input sets of ${gib(p.setBytes)}, ${p.slots} staging slots of ${gib(p.slotBytes)}, shared ${gib(p.sharedBytes)}, decode scratch ${gib(p.decodeScratchBytes)}`,
  );
  log(
    `GPU verify by source decode (cold, 3 alternating rounds): ${Object.entries(decodeRounds)
      .map(([v, all]) => `${v} ${all.map((x) => x.toFixed(0)).join(' / ')} ms`)
      .join('; ')}${decodeRoundsExact ? '' : ' NOT EXACT'}`,
  );
  log(
    `GPU verify with pooled staging (a second verification on the device; median of 3): ${ms(pooled.ms)} = ${gbps(rawBytes, pooled.ms).toFixed(1)} GB/s (set-up ${ms(pooled.timings.setupMs)}, staging ${ms(pooled.timings.setupStagingMs)}; runs ${pooledRuns.map((r) => r.ms.toFixed(0)).join(' / ')} ms)`,
  );
  const v = perRecord;
  log(
    `GPU verify per record: ${ms(v.pipelinedMs)} pipelined (copies overlapping the record before; ${slots} slots; ${ms(v.afterSetupMs)} after the set-up); ${ms(v.serialCopiesMs)} with copies not overlapped (${gbps(rawBytes, serialCopies.ms).toFixed(1)} GB/s); ${ms(v.moreSlotsMs)} with ${slots + 1} slots (${gbps(rawBytes, moreSlots.ms).toFixed(1)} GB/s); one step at a time: staging copies + small uploads ${ms(v.copyMs)}, decode ${ms(v.decodeMs)}, compare ${ms(v.compareMs)}; not the decode: ${ms(v.notDecodeMs)} (${((100 * v.notDecodeMs) / v.pipelinedMs).toFixed(0)} %)`,
  );
  log(
    `GPU verify by frames a piece x staging slots (default ${pieceFrames} x ${slots}: ${ms(verify.ms)}):\n${pieceSweep.map((p) => `  ${p.pieceFrames} x ${p.slots}: median ${ms(p.ms)} = ${p.GBps.toFixed(1)} GB/s of ${p.allMs.map((x) => x.toFixed(0)).join(' / ')} ms (set-up ${ms(p.setupMs)}, read ${ms(p.readMs)}, staging waits ${ms(p.stagingWaitMs)}, upload ${ms(p.uploadMs)}, ${gib(p.planBytes)})${p.exact ? '' : ' NOT EXACT'}`).join('\n')}`,
  );
  // Where the default run's pieces waited: the slot mapped again after the submission that copied from it,
  // the mapped range taken, the reads, and the host's turn before the passes are submitted.
  const line = verify.timings.pieces;
  const mean = (f: (k: number) => number, from = 0, to = line.length) => {
    let sum = 0;
    for (let k = from; k < to; k++) sum += f(k);
    return to > from ? sum / (to - from) : 0;
  };
  const timeline = {
    pieces: line.length,
    readMs: mean((k) => line[k].readEnd - line[k].readStart),
    mapRangeMs: mean((k) => line[k].readStart - line[k].ready),
    readEndToSubmitMs: mean((k) => line[k].submitted - line[k].readEnd),
    /** Submission of piece k to its slot mapped again for piece k + slots. */
    remapMs: mean((k) => line[k + slots].ready - line[k].submitted, 0, Math.max(0, line.length - slots)),
    intervalMs: mean((k) => line[k].submitted - line[k - 1].submitted, 1),
    firstSubmittedMs: line[0]?.submitted ?? 0,
    lastSubmittedMs: line.at(-1)?.submitted ?? 0,
  };
  log(
    `GPU verify timeline (${timeline.pieces} pieces, means): read ${ms(timeline.readMs)}, mapped range ${ms(timeline.mapRangeMs)}, read end to submitted ${ms(timeline.readEndToSubmitMs)}, submitted to the slot mapped again ${ms(timeline.remapMs)}, one piece every ${ms(timeline.intervalMs)}; first submitted at ${ms(timeline.firstSubmittedMs)}, last at ${ms(timeline.lastSubmittedMs)}, done at ${ms(verify.ms)}`,
  );
  log(
    line
      .slice(0, 6)
      .map(
        (l, k) =>
          `  piece ${k}: ready ${ms(l.ready)}, reads ${ms(l.readStart)} to ${ms(l.readEnd)}, submitted ${ms(l.submitted)}`,
      )
      .join('\n'),
  );
  log(
    `compare per record by lanes a dispatch: ${COMPARE_LANES_PER_DISPATCH} (default) ${ms(v.compareMs)}, ${compareSweep.map((c) => `${c.lanesPerDispatch} ${ms(c.compareMs)}${c.exact ? '' : ' NOT EXACT'}`).join(', ')}`,
  );
  return {
    verify,
    report: {
      ...verify,
      rawEquivalentGBps: gbps(rawBytes, verify.ms),
      serialCopiesGBps: gbps(rawBytes, serialCopies.ms),
      moreSlotsGBps: gbps(rawBytes, moreSlots.ms),
      perRecord,
      pooled: {
        ms: pooled.ms,
        allMs: pooledRuns.map((r) => r.ms),
        setupMs: pooled.timings.setupMs,
        stagingMs: pooled.timings.setupStagingMs,
        rawEquivalentGBps: gbps(rawBytes, pooled.ms),
        exact: pooledRuns.every(exact),
      },
      timeline,
      decodeRounds,
      pieceFrames,
      pieceSweep,
      compareSweep,
    },
    exact:
      exact(verify) &&
      pooledRuns.every(exact) &&
      decodeRoundsExact &&
      perRecord.exact &&
      compareSweep.every((c) => c.exact) &&
      pieceSweep.every((p) => p.exact),
  };
}
