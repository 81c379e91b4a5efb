/**
 * The archive manifest (`manifest.json`): what the archive holds and the identity of every file. The
 * specification is docs/archive-format.md; `parseManifest` is its executable form: it accepts exactly
 * version 1 of format "stemflow-archive" and checks every field before anything is read.
 */
import { StemflowError } from '../errors';
import { MSB_IN_TOKEN, SPLIT } from './hybrid-uint';
import type { ArchiveDtype } from './lanes';
import { MAX_TABLE_LOG, MIN_TABLE_LOG } from './tans-table';

export const ARCHIVE_FORMAT = 'stemflow-archive';
export const ARCHIVE_VERSION = 1;
export const CODEC_NAME = 'tans-hybrid-uint';
export const CODEC_VERSION = 1;
export const MANIFEST_NAME = 'manifest.json';
export const STATE_NAME = 'state.npz';
/** Refuse manifests larger than this before parsing them. */
export const MAX_MANIFEST_BYTES = 64 * 1024 * 1024;

export interface ManifestFile {
  /** Path relative to the archive folder, '/'-separated. */
  path: string;
  size: number;
  /** Lower-case hex SHA-256 of the file's bytes. */
  sha256: string;
}

export interface ManifestRecord {
  file: string;
  firstFrame: number;
  frames: number;
}

export type CalibrationValue = number | string | null | number[];

export interface ManifestAcquisition {
  name: string;
  scan: [number, number];
  detector: [number, number];
  dtype: ArchiveDtype;
  /** Scan positions per record (the last record may hold fewer). */
  recordFrames: number;
  lanesPerFrame: number;
  tableLog: number;
  classes: number;
  /** Frames per verification block. */
  blockFrames: number;
  records: ManifestRecord[];
  /** Members of the state .npz: class maps [records, rows, cols] u8, frequencies [records, classes, tokens] u16,
   *  and the pixel mask [rows, cols] u32 (nonzero = flagged) or null when the source had none. */
  state: { classMap: string; freqs: string; pixelMask: string | null; pixelSums: string | null };
  flaggedPixels: number;
  calibration: Record<string, CalibrationValue>;
  /** Exact audit of the counts written: maximum, sum (decimal string: it can pass 2^53), values above 255. */
  audit: { max: number; total: string; above255: number };
  /** The files the acquisition was converted from. */
  sources: ManifestFile[];
}

export interface ArchiveManifest {
  format: typeof ARCHIVE_FORMAT;
  version: typeof ARCHIVE_VERSION;
  created: string;
  writer: string;
  codec: { name: typeof CODEC_NAME; version: typeof CODEC_VERSION; split: number; msbInToken: number };
  state: string;
  acquisitions: ManifestAcquisition[];
  files: ManifestFile[];
}

type Json = unknown;

class Check {
  constructor(private readonly where: string) {}
  fail(message: string): never {
    throw new StemflowError('corrupt', `manifest.json: ${this.where}${message}`);
  }
  object(v: Json, what: string): Record<string, Json> {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) this.fail(`${what} is not an object.`);
    return v as Record<string, Json>;
  }
  array(v: Json, what: string, max = 1 << 24): Json[] {
    if (!Array.isArray(v) || v.length > max) this.fail(`${what} is not an array of at most ${max} entries.`);
    return v as Json[];
  }
  string(v: Json, what: string, max = 4096): string {
    if (typeof v !== 'string' || v.length > max)
      this.fail(`${what} is not a string of at most ${max} characters.`);
    return v as string;
  }
  int(v: Json, what: string, min: number, max: number): number {
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min || v > max) {
      this.fail(`${what} (${JSON.stringify(v)}) is not an integer in ${min}..${max}.`);
    }
    return v as number;
  }
  path(v: Json, what: string): string {
    const p = this.string(v, what, 512);
    if (
      !/^[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.-]+)*$/.test(p) ||
      p.split('/').some((s) => s === '.' || s === '..')
    ) {
      this.fail(`${what} "${p}" is not a safe relative path.`);
    }
    return p;
  }
  sha(v: Json, what: string): string {
    const s = this.string(v, what, 64);
    if (!/^[0-9a-f]{64}$/.test(s)) this.fail(`${what} is not a lower-case hex SHA-256.`);
    return s;
  }
}

const DTYPES: readonly ArchiveDtype[] = ['uint8', 'uint16', 'uint32'];
const MAX_EXTENT = 1 << 20;

function parseFile(c: Check, v: Json, what: string): ManifestFile {
  const o = c.object(v, what);
  return {
    path: c.path(o.path, `${what}.path`),
    size: c.int(o.size, `${what}.size`, 0, Number.MAX_SAFE_INTEGER),
    sha256: c.sha(o.sha256, `${what}.sha256`),
  };
}

function parseAcquisition(v: Json, index: number): ManifestAcquisition {
  const c = new Check(`acquisitions[${index}]: `);
  const o = c.object(v, 'the acquisition');
  const pair = (x: Json, what: string): [number, number] => {
    const a = c.array(x, what, 2);
    if (a.length !== 2) c.fail(`${what} is not [rows, cols].`);
    return [c.int(a[0], `${what}[0]`, 1, MAX_EXTENT), c.int(a[1], `${what}[1]`, 1, MAX_EXTENT)];
  };
  const scan = pair(o.scan, 'scan');
  const detector = pair(o.detector, 'detector');
  const frames = scan[0] * scan[1];
  const pixels = detector[0] * detector[1];
  if (frames > 2 ** 32 - 1 || pixels > 1 << 24) c.fail(`${frames} frames of ${pixels} pixels is too large.`);
  const dtype = c.string(o.dtype, 'dtype', 8) as ArchiveDtype;
  if (!DTYPES.includes(dtype)) c.fail(`dtype "${dtype}" is not uint8, uint16 or uint32.`);
  const recordFrames = c.int(o.recordFrames, 'recordFrames', 1, 1 << 20);
  const lanesPerFrame = c.int(o.lanesPerFrame, 'lanesPerFrame', 1, Math.min(pixels, 1024));
  const tableLog = c.int(o.tableLog, 'tableLog', MIN_TABLE_LOG, MAX_TABLE_LOG);
  const classes = c.int(o.classes, 'classes', 1, 256);
  const blockFrames = c.int(o.blockFrames, 'blockFrames', 1, 1 << 20);
  const records = c.array(o.records, 'records').map((r, i) => {
    const ro = c.object(r, `records[${i}]`);
    return {
      file: c.path(ro.file, `records[${i}].file`),
      firstFrame: c.int(ro.firstFrame, `records[${i}].firstFrame`, 0, frames),
      frames: c.int(ro.frames, `records[${i}].frames`, 1, recordFrames),
    };
  });
  let next = 0;
  for (const [i, r] of records.entries()) {
    if (r.firstFrame !== next) c.fail(`records[${i}] starts at frame ${r.firstFrame}, not ${next}.`);
    if (r.frames !== Math.min(recordFrames, frames - next)) c.fail(`records[${i}] holds ${r.frames} frames.`);
    next += r.frames;
  }
  if (next !== frames) c.fail(`the records hold ${next} frames; the scan has ${frames}.`);
  const so = c.object(o.state, 'state');
  const audit = c.object(o.audit, 'audit');
  const total = c.string(audit.total, 'audit.total', 40);
  if (!/^(0|[1-9][0-9]*)$/.test(total)) c.fail('audit.total is not a decimal integer.');
  const calibration = c.object(o.calibration ?? {}, 'calibration');
  for (const [k, x] of Object.entries(calibration)) {
    const ok =
      x === null ||
      typeof x === 'number' ||
      typeof x === 'string' ||
      (Array.isArray(x) && x.length <= 16 && x.every((e) => typeof e === 'number'));
    if (!ok) c.fail(`calibration.${k} is not a number, string or list of numbers.`);
  }
  return {
    name: c.string(o.name, 'name', 256),
    scan,
    detector,
    dtype,
    recordFrames,
    lanesPerFrame,
    tableLog,
    classes,
    blockFrames,
    records,
    state: {
      classMap: c.string(so.classMap, 'state.classMap', 128),
      freqs: c.string(so.freqs, 'state.freqs', 128),
      pixelMask: so.pixelMask === null ? null : c.string(so.pixelMask, 'state.pixelMask', 128),
      pixelSums: so.pixelSums == null ? null : c.string(so.pixelSums, 'state.pixelSums', 128),
    },
    flaggedPixels: c.int(o.flaggedPixels, 'flaggedPixels', 0, pixels),
    calibration: calibration as Record<string, CalibrationValue>,
    audit: {
      max: c.int(audit.max, 'audit.max', 0, 2 ** 32 - 1),
      total,
      above255: c.int(audit.above255, 'audit.above255', 0, Number.MAX_SAFE_INTEGER),
    },
    // Source names are identities, not paths in the archive: any name is kept as it was.
    sources: c.array(o.sources, 'sources', 1 << 16).map((s, i) => {
      const so = c.object(s, `sources[${i}]`);
      return {
        path: c.string(so.path, `sources[${i}].path`, 1024),
        size: c.int(so.size, `sources[${i}].size`, 0, Number.MAX_SAFE_INTEGER),
        sha256: c.sha(so.sha256, `sources[${i}].sha256`),
      };
    }),
  };
}

/** Parses and checks manifest text. Other formats and versions are refused by name. */
export function parseManifest(text: string): ArchiveManifest {
  let json: Json;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new StemflowError('corrupt', `manifest.json is not JSON: ${(error as Error).message}`);
  }
  const c = new Check('');
  const o = c.object(json, 'the manifest');
  if (o.format !== ARCHIVE_FORMAT) {
    throw new StemflowError(
      'unsupported',
      `manifest.json is format ${JSON.stringify(o.format)}, not "${ARCHIVE_FORMAT}".`,
    );
  }
  if (o.version !== ARCHIVE_VERSION) {
    throw new StemflowError(
      'unsupported',
      `This archive is ${ARCHIVE_FORMAT} version ${JSON.stringify(o.version)}; this reader reads version ${ARCHIVE_VERSION} only.`,
    );
  }
  const codec = c.object(o.codec, 'codec');
  if (codec.name !== CODEC_NAME || codec.version !== CODEC_VERSION) {
    throw new StemflowError(
      'unsupported',
      `The archive's codec is ${JSON.stringify(codec.name)} version ${JSON.stringify(codec.version)}; this reader knows ${CODEC_NAME} version ${CODEC_VERSION}.`,
    );
  }
  if (codec.split !== SPLIT || codec.msbInToken !== MSB_IN_TOKEN) {
    throw new StemflowError(
      'unsupported',
      'The archive uses a token configuration this reader does not know.',
    );
  }
  const files = c.array(o.files, 'files').map((f, i) => parseFile(c, f, `files[${i}]`));
  const paths = new Set<string>();
  for (const f of files) {
    if (paths.has(f.path)) c.fail(`${f.path} is listed twice.`);
    paths.add(f.path);
  }
  const state = c.path(o.state, 'state');
  if (!paths.has(state)) c.fail(`the state file ${state} is not in files.`);
  const acquisitions = c.array(o.acquisitions, 'acquisitions', 1 << 16).map(parseAcquisition);
  const used = new Set<string>([state]);
  for (const a of acquisitions) {
    for (const r of a.records) {
      if (!paths.has(r.file)) c.fail(`record file ${r.file} is not in files.`);
      if (used.has(r.file)) c.fail(`record file ${r.file} is used twice.`);
      used.add(r.file);
    }
  }
  if (used.size !== paths.size) c.fail('files lists a file that no record uses.');
  return {
    format: ARCHIVE_FORMAT,
    version: ARCHIVE_VERSION,
    created: c.string(o.created, 'created', 64),
    writer: c.string(o.writer, 'writer', 256),
    codec: { name: CODEC_NAME, version: CODEC_VERSION, split: SPLIT, msbInToken: MSB_IN_TOKEN },
    state,
    acquisitions,
    files,
  };
}
