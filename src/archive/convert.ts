/**
 * The converter: acquisitions in, one archive out (docs/archive-format.md). Records are encoded one after
 * another by a RecordEncoder (the CPU twins here, the GPU passes in gpu-encoder.ts); shards are hashed as
 * they are written, while the next records are encoded (at most `writesInFlight` shards waiting, so host
 * memory stays bounded; with the target's `hashParts` the hashing runs off the main thread); the state .npz
 * and the manifest come last, and the archive is published only when every file is complete. Any failure or
 * cancellation waits for the writes in flight, then discards the temporaries.
 */
import { StemflowError, throwIfAborted } from '../errors';
import type { AcquisitionSource } from '../source/acquisition-source';
import { type RecordTiming, ShardWrites, writeFile } from './convert-write';
import type { ArchiveTarget, Sha256Factory } from './files';
import { MSB_IN_TOKEN, NEIGHBOUR_BUCKETS, SPLIT, tokenCount } from './hybrid-uint';
import { type ArchiveDtype, DTYPE_BITS, type LaneGeometry, laneGeometry } from './lanes';
import {
  ARCHIVE_FORMAT,
  ARCHIVE_VERSION,
  type ArchiveManifest,
  type CalibrationValue,
  CODEC_NAME,
  CODEC_VERSION,
  MANIFEST_NAME,
  type ManifestAcquisition,
  type ManifestFile,
  STATE_NAME,
} from './manifest';
import { encodeNpz, type NpzArray, type NpzMember, npzMember, npzParts } from './npz';
import { modelRecord, type RecordModel, recordTables } from './record-tables';
import { encodeShardHead } from './shard';
import { tansEncode } from './tans-encode';
import type { Values } from './tans-stats';

export { FILES_PER_WRITE, type RecordTiming } from './convert-write';

export interface CodecParams {
  recordFrames: number;
  /** Lanes per frame; 0 = automatic (lanesPerFrameFor). */
  lanesPerFrame: number;
  tableLog: number;
  classes: number;
  blockFrames: number;
}

/** Pixels per lane the automatic lane count aims at (192 x 192 detectors get 16 lanes a frame). */
export const AUTO_LANE_PIXELS = 2304;

/**
 * Lanes per frame: `requested` when given (> 0), else about one lane per AUTO_LANE_PIXELS pixels (short lanes
 * decode queries faster; each lane costs a 4-byte offset and its final state, which small detectors feel).
 */
export function lanesPerFrameFor(pixels: number, requested: number): number {
  const n = requested > 0 ? requested : Math.round(pixels / AUTO_LANE_PIXELS);
  return Math.max(1, Math.min(n, 1024, pixels));
}

export const DEFAULT_CODEC: CodecParams = {
  recordFrames: 16384,
  lanesPerFrame: 0,
  tableLog: 11,
  classes: 32,
  blockFrames: 256,
};

/** One encoded record. */
export interface EncodedRecord {
  model: RecordModel;
  offsets: Uint32Array;
  words: Uint32Array;
  audit: RecordAudit;
  /**
   * The words are memory the encoder lends until `recycle` (a GPU readback mapped in place, not shared with
   * other threads): the converter writes them, hashes the written file (the target's `hashWriting`) rather
   * than handing them to another thread, and gives them back as soon as they are written.
   */
  lent?: boolean;
}

export interface RecordAudit {
  max: number;
  total: bigint;
  above255: number;
}

/** Encodes records of one acquisition. */
export interface RecordEncoder {
  encode(
    source: AcquisitionSource,
    firstFrame: number,
    frames: number,
    params: { dtype: ArchiveDtype; geometry: LaneGeometry; cols: number; tableLog: number; classes: number },
    signal?: AbortSignal,
  ): Promise<EncodedRecord>;
  close?(): void;
  /** The converter is done with a record's words (written and hashed): the encoder may reuse their memory. */
  recycle?(record: EncodedRecord): void;
}

export function auditValues(values: Values): RecordAudit {
  let max = 0;
  let total = 0n;
  let above255 = 0;
  let partial = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v > max) max = v;
    if (v > 255) above255++;
    partial += v;
    if (partial > 2 ** 52) {
      total += BigInt(partial);
      partial = 0;
    }
  }
  return { max, total: total + BigInt(partial), above255 };
}

/** The CPU twins as a RecordEncoder (reference and fallback). */
export const cpuRecordEncoder: RecordEncoder = {
  async encode(source, firstFrame, frames, { dtype, geometry, cols, tableLog, classes }, signal) {
    const bytes = await source.readFrames(firstFrame, frames, signal);
    const values = viewValues(bytes, dtype);
    const model = modelRecord(values, frames, geometry, cols, { dtype, tableLog, classes });
    const enc = tansEncode(values, frames, geometry, recordTables(model));
    if (enc.errors.some((e) => e !== 0)) throw new StemflowError('invalid', 'A record could not be encoded.');
    return { model, offsets: enc.offsets, words: enc.words, audit: auditValues(values) };
  },
};

/**
 * The GPU encoder where it can take the source's stored chunks (bitshuffle/LZ4, one frame per chunk), the CPU
 * twins otherwise; both write the same bytes.
 */
export function preferGpuEncoder(gpu: RecordEncoder): RecordEncoder {
  const fromGpu = new WeakSet<EncodedRecord>();
  return {
    async encode(source, firstFrame, frames, params, signal) {
      if (!source.storedCodec.gpu) return cpuRecordEncoder.encode(source, firstFrame, frames, params, signal);
      const record = await gpu.encode(source, firstFrame, frames, params, signal);
      fromGpu.add(record);
      return record;
    },
    close: () => gpu.close?.(),
    // Only the GPU encoder's own arrays go back to it.
    recycle: (record) => {
      if (fromGpu.has(record)) gpu.recycle?.(record);
    },
  };
}

export function viewValues(bytes: Uint8Array, dtype: ArchiveDtype): Values {
  const size = DTYPE_BITS[dtype] / 8;
  const aligned = bytes.byteOffset % size === 0 ? bytes : bytes.slice();
  const n = aligned.byteLength / size;
  if (dtype === 'uint8') return aligned;
  if (dtype === 'uint16') return new Uint16Array(aligned.buffer, aligned.byteOffset, n);
  return new Uint32Array(aligned.buffer, aligned.byteOffset, n);
}

export interface ConvertInput {
  name: string;
  source: AcquisitionSource;
  /**
   * Identity of the source files (name, size, SHA-256), or its promise: the sources may be hashed while they
   * are converted (the manifest needs them only at the end; a rejection fails the conversion).
   */
  sources: ManifestFile[] | Promise<ManifestFile[]>;
}

export interface ConvertProgress {
  acquisition: number;
  framesDone: number;
  frameCount: number;
  bytesWritten: number;
}

export interface ConvertResult {
  manifest: ArchiveManifest;
  rawBytes: number;
  archiveBytes: number;
  timings: {
    encodeMs: number;
    writeMs: number;
    totalMs: number;
    /**
     * Per record: how long the converter waited for the encoder, and for shards being written + hashed; when
     * (ms from the start) its shard's bytes were written, the file synced, its SHA-256 known.
     */
    records: RecordTiming[];
    /**
     * After the last record is encoded: the state .npz built (on this thread, while the last shards are written),
     * waiting for the shards and the state file to be written + hashed (and for sources still being hashed), the
     * manifest written, the publish.
     */
    tail: { totalMs: number; stateMs: number; drainMs: number; manifestMs: number; publishMs: number };
  };
}

/** Converts acquisitions into a new archive written to `target`; publishes it only when complete. */
export async function convertArchive(
  inputs: ConvertInput[],
  target: ArchiveTarget,
  options: {
    hash: Sha256Factory;
    encoder?: RecordEncoder;
    codec?: Partial<CodecParams>;
    signal?: AbortSignal;
    onProgress?: (p: ConvertProgress) => void;
    writer?: string;
    now?: () => Date;
    /**
     * Records' shards being written while the next records are encoded (default 2; 0: one after another,
     * hashed on this thread with `hash`, as a reference). A shard hashed from its file (the encoder's lent
     * records) no longer counts once its bytes are written; up to FILES_PER_WRITE x as many files may still be
     * hashed and synced.
     */
    writesInFlight?: number;
  },
): Promise<ConvertResult> {
  const { hash, encoder = cpuRecordEncoder, signal, onProgress } = options;
  const writesInFlight = Math.max(0, Math.floor(options.writesInFlight ?? 2));
  const codec = { ...DEFAULT_CODEC, ...options.codec };
  const acquisitions: ManifestAcquisition[] = [];
  const state: Record<string, NpzArray> = {};
  const stateMembers: NpzMember[] = [];
  let rawBytes = 0;
  let archiveBytes = 0;
  let encodeMs = 0;
  const recordTimings: RecordTiming[] = [];
  const t0 = performance.now();
  const hashParts = writesInFlight > 0 ? target.hashParts : undefined;
  const shards = new ShardWrites(target, hash, hashParts, writesInFlight, t0);
  /** The state file, written while the last shards are (awaited with them on failure). */
  let stateWrite: Promise<ManifestFile> | null = null;
  // Sources still being hashed are awaited before the manifest; a failure before then must not go unhandled.
  const sourceLists = inputs.map((input) => Promise.resolve(input.sources));
  for (const list of sourceLists) list.catch(() => undefined);
  try {
    if (inputs.length === 0) throw new StemflowError('invalid', 'Nothing to convert.');
    for (const [a, input] of inputs.entries()) {
      const { source } = input;
      const s = source.summary;
      const dtype = s.dtype as ArchiveDtype;
      const pixels = s.detector[0] * s.detector[1];
      const frameCount = s.scan[0] * s.scan[1];
      if (frameCount !== source.frameCount) {
        throw new StemflowError(
          'mismatch',
          `${input.name}: the scan ${s.scan.join('x')} does not match ${source.frameCount} frames.`,
        );
      }
      const geometry = laneGeometry(pixels, lanesPerFrameFor(pixels, codec.lanesPerFrame));
      const records = Math.ceil(frameCount / codec.recordFrames);
      const tokens = tokenCount(DTYPE_BITS[dtype]);
      const classMaps = new Uint8Array(records * pixels);
      const pixelSums = new Float64Array(records * pixels);
      let haveSums = true;
      const contexts = codec.classes * NEIGHBOUR_BUCKETS;
      const freqs = new Uint16Array(records * contexts * tokens);
      const audit: RecordAudit = { max: 0, total: 0n, above255: 0 };
      const prefix = `acq${String(a).padStart(4, '0')}`;
      const manifestRecords = [];
      for (let r = 0; r < records; r++) {
        throwIfAborted(signal);
        const firstFrame = r * codec.recordFrames;
        const frames = Math.min(codec.recordFrames, frameCount - firstFrame);
        const te = performance.now();
        const rec = await encoder.encode(
          source,
          firstFrame,
          frames,
          { dtype, geometry, cols: s.detector[1], tableLog: codec.tableLog, classes: codec.classes },
          signal,
        );
        const encodeWaitMs = performance.now() - te;
        encodeMs += encodeWaitMs;
        const timing: RecordTiming = {
          encodeWaitMs,
          writeWaitMs: 0,
          encodedMs: performance.now() - t0,
          writtenMs: Number.NaN,
          syncedMs: Number.NaN,
          hashedMs: Number.NaN,
        };
        recordTimings.push(timing);
        classMaps.set(rec.model.classMap, r * pixels);
        if (rec.model.pixelSums) pixelSums.set(rec.model.pixelSums, r * pixels);
        else haveSums = false;
        freqs.set(rec.model.freqs, r * contexts * tokens);
        audit.max = Math.max(audit.max, rec.audit.max);
        audit.total += rec.audit.total;
        audit.above255 += rec.audit.above255;
        const file = `${prefix}/rec-${String(r).padStart(6, '0')}.tans`;
        const head = encodeShardHead(
          { acquisition: a, record: r, frames, lanesPerFrame: geometry.slices, dataWords: rec.words.length },
          rec.offsets,
        );
        const body = new Uint8Array(rec.words.buffer, rec.words.byteOffset, rec.words.byteLength);
        archiveBytes += head.byteLength + body.byteLength;
        rawBytes += frames * pixels * (DTYPE_BITS[dtype] / 8);
        manifestRecords.push({ file, firstFrame, frames });
        const bytesWritten = archiveBytes;
        shards.start(
          file,
          [head, body],
          { lent: rec.lent === true, recycle: () => encoder.recycle?.(rec) },
          timing,
          () => onProgress?.({ acquisition: a, framesDone: firstFrame + frames, frameCount, bytesWritten }),
        );
        await shards.bound(timing);
      }
      const own: Record<string, NpzArray> = {};
      own[`${prefix}_class_map`] = { data: classMaps, shape: [records, s.detector[0], s.detector[1]] };
      own[`${prefix}_freqs`] = { data: freqs, shape: [records, contexts, tokens] };
      if (haveSums) own[`${prefix}_pixel_sums`] = { data: pixelSums, shape: [records, pixels] };
      if (source.pixelMask) own[`${prefix}_pixel_mask`] = { data: source.pixelMask, shape: [...s.detector] };
      // The acquisition's state members are encoded and checksummed now, while its last shards are written
      // and the next acquisition is encoded: the tail only assembles the container.
      for (const [name, array] of Object.entries(own)) {
        state[name] = array;
        stateMembers.push(npzMember(name, array));
      }
      acquisitions.push({
        name: input.name,
        scan: [...s.scan],
        detector: [...s.detector],
        dtype,
        recordFrames: codec.recordFrames,
        lanesPerFrame: geometry.slices,
        tableLog: codec.tableLog,
        classes: codec.classes,
        blockFrames: codec.blockFrames,
        records: manifestRecords,
        state: {
          classMap: `${prefix}_class_map`,
          freqs: `${prefix}_freqs`,
          pixelMask: source.pixelMask ? `${prefix}_pixel_mask` : null,
          pixelSums: haveSums ? `${prefix}_pixel_sums` : null,
        },
        flaggedPixels: s.flaggedPixels,
        calibration: JSON.parse(JSON.stringify(s.calibration ?? {})) as Record<string, CalibrationValue>,
        audit: { max: audit.max, total: audit.total.toString(), above255: audit.above255 },
        sources: [], // the source files' identity, once hashed (below, before the manifest)
      });
    }
    // The last shards are still being written and hashed (worker and libuv threads): build and write the state
    // meanwhile. The manifest lists the state first, then the shards in record order, as before.
    const tail = { totalMs: 0, stateMs: 0, drainMs: 0, manifestMs: 0, publishMs: 0 };
    let t = performance.now();
    const tailStart = t;
    const npz = npzParts(stateMembers) ?? [await encodeNpz(state)];
    const npzBytes = npz.reduce((n, p) => n + p.byteLength, 0);
    tail.stateMs = performance.now() - t;
    stateWrite = writeFile(target, STATE_NAME, npz, hash, hashParts);
    stateWrite.catch(() => undefined); // awaited below, or when a failure is cleaned up
    if (writesInFlight === 0) await stateWrite; // the reference: one file after another
    t = performance.now();
    await shards.drain();
    const files = [await stateWrite, ...shards.files];
    for (const [a, list] of sourceLists.entries()) acquisitions[a].sources = await list;
    tail.drainMs = performance.now() - t;
    archiveBytes += npzBytes;
    t = performance.now();
    const manifest: ArchiveManifest = {
      format: ARCHIVE_FORMAT,
      version: ARCHIVE_VERSION,
      created: (options.now?.() ?? new Date()).toISOString(),
      writer: options.writer ?? 'stemflow',
      codec: { name: CODEC_NAME, version: CODEC_VERSION, split: SPLIT, msbInToken: MSB_IN_TOKEN },
      state: STATE_NAME,
      acquisitions,
      files,
    };
    const text = new TextEncoder().encode(`${JSON.stringify(manifest, null, 1)}\n`);
    await writeFile(target, MANIFEST_NAME, [text], hash, hashParts);
    archiveBytes += text.byteLength;
    tail.manifestMs = performance.now() - t;
    throwIfAborted(signal);
    t = performance.now();
    await target.publish();
    tail.publishMs = performance.now() - t;
    tail.totalMs = performance.now() - tailStart;
    return {
      manifest,
      rawBytes,
      archiveBytes,
      timings: {
        encodeMs,
        writeMs: shards.waitMs,
        totalMs: performance.now() - t0,
        records: recordTimings,
        tail,
      },
    };
  } catch (error) {
    await Promise.allSettled([shards.settle(), stateWrite]);
    await target.discard();
    throw error;
  }
}
