/**
 * Exhaustive verification: every saved count of an acquisition is decoded and compared with the source
 * it was converted from. Only mismatch counts per block (blockFrames frames) and lane error codes come back.
 * `cpuVerifier` is the CPU twin of the GPU verifier (gpu-verify.ts).
 */
import { StemflowError, throwIfAborted } from '../errors';
import type { AcquisitionSource } from '../source/acquisition-source';
import { viewValues } from './convert';
import type { ArchiveAcquisition } from './reader';
import { tansCompare } from './tans-compare';

export interface RecordVerdict {
  /** Mismatched values per block of the record. */
  mismatches: Uint32Array;
  /** Lanes that failed to decode. */
  laneErrors: number;
}

export interface RecordVerifier {
  verifyRecord(
    acq: ArchiveAcquisition,
    record: number,
    source: AcquisitionSource,
    signal?: AbortSignal,
  ): Promise<RecordVerdict>;
  close?(): void;
}

export const cpuVerifier: RecordVerifier = {
  async verifyRecord(acq, r, source, signal) {
    const rec = acq.records[r];
    const data = await acq.readRecordData(r, signal);
    const reference = viewValues(await source.readFrames(rec.firstFrame, rec.frames, signal), acq.info.dtype);
    const { mismatches, errors } = tansCompare(
      data,
      rec.offsets,
      rec.frames,
      acq.geometry,
      rec.tables,
      reference,
      acq.info.blockFrames,
    );
    return { mismatches, laneErrors: errors.reduce((n, e) => n + (e === 0 ? 0 : 1), 0) };
  },
};

export interface VerifyReport {
  acquisition: string;
  compared: number;
  mismatches: number;
  /** Blocks (first frame, frames, mismatches) with at least one mismatch. */
  badBlocks: { firstFrame: number; frames: number; mismatches: number }[];
  laneErrors: number;
  ms: number;
}

/** Compares every count of an acquisition with its source. */
export async function verifyAcquisition(
  acq: ArchiveAcquisition,
  source: AcquisitionSource,
  verifier: RecordVerifier,
  options: { signal?: AbortSignal; onProgress?: (framesDone: number, frameCount: number) => void } = {},
): Promise<VerifyReport> {
  const { info } = acq;
  const s = source.summary;
  const frameCount = info.scan[0] * info.scan[1];
  if (
    source.frameCount !== frameCount ||
    s.detector[0] !== info.detector[0] ||
    s.detector[1] !== info.detector[1] ||
    s.dtype !== info.dtype
  ) {
    throw new StemflowError(
      'mismatch',
      `The source (${source.frameCount} frames of ${s.detector.join('x')} ${s.dtype}) is not the archived acquisition (${frameCount} frames of ${info.detector.join('x')} ${info.dtype}).`,
    );
  }
  const t0 = performance.now();
  let mismatches = 0;
  let laneErrors = 0;
  const badBlocks: VerifyReport['badBlocks'] = [];
  for (const rec of acq.records) {
    throwIfAborted(options.signal);
    const v = await verifier.verifyRecord(acq, rec.index, source, options.signal);
    laneErrors += v.laneErrors;
    for (let b = 0; b < v.mismatches.length; b++) {
      if (v.mismatches[b] === 0) continue;
      mismatches += v.mismatches[b];
      const firstFrame = rec.firstFrame + b * info.blockFrames;
      badBlocks.push({
        firstFrame,
        frames: Math.min(info.blockFrames, rec.firstFrame + rec.frames - firstFrame),
        mismatches: v.mismatches[b],
      });
    }
    options.onProgress?.(rec.firstFrame + rec.frames, frameCount);
  }
  return {
    acquisition: info.name,
    compared: frameCount * info.detector[0] * info.detector[1],
    mismatches,
    badBlocks,
    laneErrors,
    ms: performance.now() - t0,
  };
}
