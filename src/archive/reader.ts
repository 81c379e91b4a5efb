/**
 * Opening an archive: the manifest, then every file's size and SHA-256 (several files at once, off the main
 * thread where the files offer `sha256`), then the state .npz and every
 * shard's header and lane offsets are checked before anything is returned (published). Opening reads only;
 * it never writes a file.
 */
import { StemflowError, throwIfAborted } from '../errors';
import type { ByteSource } from '../io/byte-source';
import type { NpyArray } from '../io/npy';
import type { ArchiveFiles, Sha256Factory } from './files';
import { NEIGHBOUR_BUCKETS, tokenCount } from './hybrid-uint';
import { DTYPE_BITS, type LaneGeometry, laneGeometry, sliceRange } from './lanes';
import {
  type ArchiveManifest,
  MANIFEST_NAME,
  MAX_MANIFEST_BYTES,
  type ManifestAcquisition,
  parseManifest,
} from './manifest';
import { decodeNpz } from './npz';
import { type RecordTables, recordTables } from './record-tables';
import { parseShardHead, shardHeadBytes } from './shard';
import { decodeLane, LANE_ERROR_NAMES, LANE_OK } from './tans-decode';
import type { Values } from './tans-stats';

/** Bytes hashed per read while checking files. */
const HASH_CHUNK = 16 * 1024 * 1024;
/** Bytes per read when a record's data is read into the caller's memory (reads run concurrently; default). */
export const READ_PIECE_BYTES = 8 * 1024 * 1024;

export interface OpenProgress {
  bytesChecked: number;
  bytesTotal: number;
}

export interface ArchiveRecord {
  index: number;
  file: string;
  firstFrame: number;
  frames: number;
  /** Lane offsets (frames x lanesPerFrame + 1), words from the start of the data. */
  offsets: Uint32Array;
  dataWords: number;
  /** Byte offset of the data in the file. */
  dataOffset: number;
  tables: RecordTables;
}

export interface ArchiveAcquisition {
  index: number;
  info: ManifestAcquisition;
  geometry: LaneGeometry;
  pixelMask: Uint32Array | null;
  /** Exact sum of each detector pixel over all frames (the summed diffraction pattern), when stored. */
  sumPattern: Float64Array | null;
  records: ArchiveRecord[];
  /**
   * The data words of a record (read from its shard); into `into` (4-byte aligned, large enough) when given,
   * then the words are a view of it.
   */
  /**
   * Reads a record's data words: all of them, or words [from, to) (the lanes of some of its frames, bounded by
   * its lane offsets). Into `into` (a mapped staging buffer, 4-aligned) when it is large enough.
   */
  readRecordData(
    record: number,
    signal?: AbortSignal,
    into?: Uint8Array,
    words?: { from: number; to: number },
  ): Promise<Uint32Array>;
  /** Decodes frames [start, start + count) on the CPU, frame-major. */
  readFrames(start: number, count: number, signal?: AbortSignal): Promise<Values>;
}

export interface Archive {
  manifest: ArchiveManifest;
  acquisitions: ArchiveAcquisition[];
  /** Compressed bytes of every file listed in the manifest. */
  bytes: number;
  close(): Promise<void>;
}

async function readAll(src: ByteSource, signal?: AbortSignal): Promise<Uint8Array> {
  return src.read(0, src.size, signal);
}

/** Opens and checks an archive. Every damaged or unexpected part is a typed error before anything returns. */
export async function openArchive(
  files: ArchiveFiles,
  options: {
    hash: Sha256Factory;
    signal?: AbortSignal;
    onProgress?: (p: OpenProgress) => void;
    concurrency?: number;
    /** Bytes per concurrent read of record data into the caller's memory (default READ_PIECE_BYTES). */
    readPieceBytes?: number;
  },
): Promise<Archive> {
  const { hash, signal, onProgress } = options;
  const readPiece = options.readPieceBytes ?? READ_PIECE_BYTES;
  if (!(Number.isInteger(readPiece) && readPiece > 0))
    throw new StemflowError('invalid', `Bytes per read must be a positive integer, not ${readPiece}.`);
  const concurrency = options.concurrency ?? files.hashThreads ?? 4;
  const opened = new Map<string, ByteSource & { close?(): Promise<void> }>();
  const closeAll = async () => {
    for (const f of opened.values()) await f.close?.().catch(() => {});
  };
  try {
    const manifestFile = await files.open(MANIFEST_NAME);
    opened.set(MANIFEST_NAME, manifestFile);
    if (manifestFile.size > MAX_MANIFEST_BYTES) {
      throw new StemflowError(
        'corrupt',
        `manifest.json is ${manifestFile.size} bytes; the limit is ${MAX_MANIFEST_BYTES}.`,
      );
    }
    const manifest = parseManifest(new TextDecoder().decode(await readAll(manifestFile, signal)));

    // Every file: present, the size the manifest says, and the same SHA-256.
    const bytesTotal = manifest.files.reduce((a, f) => a + f.size, 0);
    let bytesChecked = 0;
    const queue = [...manifest.files];
    // After a failure the other workers open no more files; every worker has settled before the files are
    // closed (a worker still opening one when the first error was thrown would otherwise leave it open).
    let failed = false;
    const worker = async () => {
      for (let f = failed ? undefined : queue.shift(); f; f = failed ? undefined : queue.shift()) {
        const src = await files.open(f.path);
        opened.set(f.path, src);
        if (src.size !== f.size) {
          throw new StemflowError(
            'truncated',
            `${f.path} has ${src.size} bytes; the manifest says ${f.size}.`,
            { file: f.path },
          );
        }
        let digest: string;
        if (files.sha256) {
          // Off the main thread, `concurrency` files at once.
          throwIfAborted(signal);
          let heard = 0;
          digest = await files.sha256(f.path, (n) => {
            // At most the file's size (a slice may be heard twice when a hashing thread is replaced).
            const add = Math.min(n, f.size - heard);
            heard += add;
            bytesChecked += add;
            onProgress?.({ bytesChecked, bytesTotal });
          });
          throwIfAborted(signal);
          bytesChecked += f.size - heard;
          onProgress?.({ bytesChecked, bytesTotal });
        } else {
          const h = await hash();
          for (let at = 0; at < f.size; at += HASH_CHUNK) {
            throwIfAborted(signal);
            const n = Math.min(HASH_CHUNK, f.size - at);
            h.update(await src.read(at, n, signal));
            bytesChecked += n;
            onProgress?.({ bytesChecked, bytesTotal });
          }
          digest = h.digest();
        }
        if (digest !== f.sha256) {
          throw new StemflowError(
            'corrupt',
            `${f.path} does not match its SHA-256 in the manifest (it was changed or damaged).`,
            {
              file: f.path,
            },
          );
        }
      }
    };
    // The first error in time is the one reported.
    let firstError: unknown;
    await Promise.allSettled(
      Array.from({ length: Math.max(1, concurrency) }, () =>
        worker().catch((e) => {
          if (!failed) firstError = e;
          failed = true;
        }),
      ),
    );
    if (failed) throw firstError;

    const state = await decodeNpz(
      await readAll(opened.get(manifest.state) as ByteSource, signal),
      manifest.state,
    );
    const member = (name: string, ctor: new (n: number) => NpyArray, shape: number[]): NpyArray => {
      const m = state.get(name);
      if (!m)
        throw new StemflowError('corrupt', `${manifest.state} has no member ${name}.`, {
          file: manifest.state,
        });
      if (m.data.constructor !== ctor || m.shape.join('x') !== shape.join('x')) {
        throw new StemflowError(
          'corrupt',
          `${manifest.state}: ${name} is ${m.data.constructor.name} ${m.shape.join('x')}, not ${ctor.name} ${shape.join('x')}.`,
          { file: manifest.state },
        );
      }
      return m.data;
    };

    const acquisitions: ArchiveAcquisition[] = [];
    for (const [a, info] of manifest.acquisitions.entries()) {
      const [rows, cols] = info.detector;
      const pixels = rows * cols;
      const geometry = laneGeometry(pixels, info.lanesPerFrame);
      const tokens = tokenCount(DTYPE_BITS[info.dtype]);
      const n = info.records.length;
      const classMaps = member(info.state.classMap, Uint8Array, [n, rows, cols]) as Uint8Array;
      const contexts = info.classes * NEIGHBOUR_BUCKETS;
      const freqs = member(info.state.freqs, Uint16Array, [n, contexts, tokens]) as Uint16Array;
      const pixelMask = info.state.pixelMask
        ? (member(info.state.pixelMask, Uint32Array, [rows, cols]) as Uint32Array)
        : null;
      let sumPattern: Float64Array | null = null;
      if (info.state.pixelSums) {
        const sums = member(info.state.pixelSums, Float64Array, [n, pixels]) as Float64Array;
        sumPattern = new Float64Array(pixels);
        for (let i = 0; i < sums.length; i++) {
          const v = sums[i];
          if (!Number.isInteger(v) || v < 0) {
            throw new StemflowError('corrupt', `${manifest.state}: a pixel sum is not a count.`, {
              file: manifest.state,
            });
          }
          sumPattern[i % pixels] += v;
        }
      }
      const records: ArchiveRecord[] = [];
      for (const [r, rec] of info.records.entries()) {
        const src = opened.get(rec.file) as ByteSource;
        const headBytes = shardHeadBytes(rec.frames, geometry.slices);
        if (src.size < headBytes) {
          throw new StemflowError('truncated', `${rec.file} has ${src.size} bytes, less than its header.`, {
            file: rec.file,
          });
        }
        const head = await src.read(0, headBytes, signal);
        const { offsets, dataWords } = parseShardHead(
          head,
          src.size,
          { acquisition: a, record: r, frames: rec.frames, dtype: info.dtype, geometry },
          rec.file,
        );
        const tables = recordTables(
          {
            dtype: info.dtype,
            tableLog: info.tableLog,
            classes: info.classes,
            tokens,
            cols,
            classMap: classMaps.subarray(r * pixels, (r + 1) * pixels),
            freqs: freqs.subarray(r * contexts * tokens, (r + 1) * contexts * tokens),
          },
          `${info.name} record ${r}`,
        );
        records.push({ index: r, ...rec, offsets, dataWords, dataOffset: headBytes, tables });
      }
      const readRecordData = async (
        r: number,
        s?: AbortSignal,
        into?: Uint8Array,
        range?: { from: number; to: number },
      ) => {
        const rec = records[r];
        if (!rec) throw new StemflowError('invalid', `Record ${r} does not exist.`);
        const { from, to } = range ?? { from: 0, to: rec.dataWords };
        if (
          !(Number.isInteger(from) && Number.isInteger(to) && 0 <= from && from <= to && to <= rec.dataWords)
        )
          throw new StemflowError('invalid', `Record ${r}: words ${from} to ${to} are not within its data.`);
        const src = opened.get(rec.file) as ByteSource;
        const start = rec.dataOffset + 4 * from;
        const length = (to - from) * 4;
        if (into && into.byteLength >= length && into.byteOffset % 4 === 0) {
          // Several concurrent reads straight into the caller's memory (a mapped staging buffer).
          const reads: Promise<void>[] = [];
          for (let at = 0; at < length; at += readPiece) {
            const piece = into.subarray(at, Math.min(length, at + readPiece));
            reads.push(
              src.readInto
                ? src.readInto(start + at, piece, s)
                : src.read(start + at, piece.byteLength, s).then((b) => piece.set(b)),
            );
          }
          await Promise.all(reads);
          return new Uint32Array(into.buffer, into.byteOffset, to - from);
        }
        const bytes = await src.read(start, length, s);
        const copy = bytes.byteOffset % 4 === 0 ? bytes : bytes.slice();
        return new Uint32Array(copy.buffer, copy.byteOffset, to - from);
      };
      acquisitions.push({
        index: a,
        info,
        geometry,
        pixelMask,
        sumPattern,
        records,
        readRecordData,
        async readFrames(start, count, s) {
          const total = info.scan[0] * info.scan[1];
          if (
            !Number.isSafeInteger(start) ||
            !Number.isSafeInteger(count) ||
            start < 0 ||
            count < 0 ||
            start + count > total
          ) {
            throw new StemflowError(
              'invalid',
              `Frames ${start}..${start + count} are outside the scan of ${total}.`,
            );
          }
          const Ctor =
            info.dtype === 'uint8' ? Uint8Array : info.dtype === 'uint16' ? Uint16Array : Uint32Array;
          const out = new Ctor(count * pixels);
          let f = start;
          while (f < start + count) {
            const rec = records[Math.floor(f / info.recordFrames)];
            const last = Math.min(start + count, rec.firstFrame + rec.frames);
            // Read only the lanes of frames [f, last).
            const w0 = rec.offsets[(f - rec.firstFrame) * geometry.slices];
            const w1 = rec.offsets[(last - rec.firstFrame) * geometry.slices];
            const bytes = await (opened.get(rec.file) as ByteSource).read(
              rec.dataOffset + 4 * w0,
              4 * (w1 - w0),
              s,
            );
            const data = new Uint32Array(bytes.slice().buffer);
            for (; f < last; f++) {
              const local = f - rec.firstFrame;
              for (let sl = 0; sl < geometry.slices; sl++) {
                const lane = local * geometry.slices + sl;
                const { first, count: n } = sliceRange(geometry, sl);
                const base = (f - start) * pixels + first;
                const from = rec.offsets[lane] - w0;
                const to = rec.offsets[lane + 1] - w0;
                const err = decodeLane(data, from, to, n, first, rec.tables, (i, v) => {
                  out[base + i] = v;
                });
                if (err !== LANE_OK) {
                  throw new StemflowError(
                    'corrupt',
                    `${rec.file}: frame ${f} lane ${sl}: ${LANE_ERROR_NAMES[err]}.`,
                    {
                      file: rec.file,
                      frame: f,
                    },
                  );
                }
              }
            }
          }
          return out;
        },
      });
    }
    return {
      manifest,
      acquisitions,
      bytes: bytesTotal,
      close: closeAll,
    };
  } catch (error) {
    await closeAll();
    throw error;
  }
}
