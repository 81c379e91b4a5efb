/**
 * The coding model of one record: the pixel class map and, per class, the token frequencies (what the
 * archive stores), plus the encoder's and decoder's tables derived from them.
 */
import { StemflowError } from '../errors';
import { NEIGHBOUR_BUCKETS, tokenCount } from './hybrid-uint';
import { type ArchiveDtype, DTYPE_BITS, type LaneGeometry } from './lanes';
import { classMapFromSums, tansPixelSums, tansTokenHistogram, type Values } from './tans-stats';
import { buildDecodeCells, buildEncodeTables, checkFrequencies, normaliseCounts } from './tans-table';

export interface RecordModel {
  dtype: ArchiveDtype;
  tableLog: number;
  classes: number;
  /** Tokens of the dtype's alphabet (hybrid-uint.ts). */
  tokens: number;
  /** Detector columns (neighbour contexts stop at row ends). */
  cols: number;
  /** Class of each detector pixel (row-major). */
  classMap: Uint8Array;
  /** (classes x NEIGHBOUR_BUCKETS contexts) x tokens frequencies, each context summing to 2^tableLog. */
  freqs: Uint16Array;
  /** Exact sum of each detector pixel over the record's frames (float64 holds them exactly: < 2^53). */
  pixelSums?: Float64Array;
}

export interface RecordTables extends RecordModel {
  /** contexts x L packed decoder cells (tans-table.ts). */
  decodeCells: Uint32Array;
  /** contexts x tokens: freq | start << 16. */
  encodeSymbols: Uint32Array;
  /** contexts x L cell positions. */
  encodePositions: Uint16Array;
}

/** Builds a record's model from its decoded values (frames x pixels). */
export function modelRecord(
  values: Values,
  frames: number,
  g: LaneGeometry,
  cols: number,
  { dtype, tableLog, classes }: { dtype: ArchiveDtype; tableLog: number; classes: number },
): RecordModel {
  const pixelSums = tansPixelSums(values, frames, g.pixels);
  const classMap = classMapFromSums(pixelSums, classes);
  const tokens = tokenCount(DTYPE_BITS[dtype]);
  const hist = tansTokenHistogram(values, frames, g, cols, classMap, classes, tokens);
  return {
    dtype,
    tableLog,
    classes,
    tokens,
    cols,
    classMap,
    freqs: frequenciesFromHistogram(hist, classes * NEIGHBOUR_BUCKETS, tokens, tableLog),
    pixelSums,
  };
}

/** Per-context frequencies from a (context, token) histogram; an unused context gets a one-token table. */
export function frequenciesFromHistogram(
  hist: ArrayLike<number>,
  classes: number,
  tokens: number,
  tableLog: number,
): Uint16Array {
  const freqs = new Uint16Array(classes * tokens);
  for (let c = 0; c < classes; c++) {
    const counts = Array.from({ length: tokens }, (_, t) => hist[c * tokens + t]);
    if (!counts.some((n) => n > 0)) counts[0] = 1;
    freqs.set(normaliseCounts(counts, tableLog), c * tokens);
  }
  return freqs;
}

/** Checks a stored model and derives its tables. */
export function recordTables(model: RecordModel, what = 'record'): RecordTables {
  const { tableLog, classes, tokens, classMap, freqs, cols } = model;
  const contexts = classes * NEIGHBOUR_BUCKETS;
  if (tokens !== tokenCount(DTYPE_BITS[model.dtype])) {
    throw new StemflowError('corrupt', `${what}: ${tokens} tokens do not match ${model.dtype}.`);
  }
  if (!Number.isInteger(classes) || classes < 1 || classes > 256) {
    throw new StemflowError('corrupt', `${what}: ${classes} pixel classes (1..256 allowed).`);
  }
  if (freqs.length !== contexts * tokens) {
    throw new StemflowError('corrupt', `${what}: ${freqs.length} frequencies, not ${contexts} x ${tokens}.`);
  }
  if (!Number.isInteger(cols) || cols < 1 || classMap.length % cols !== 0) {
    throw new StemflowError(
      'corrupt',
      `${what}: ${cols} detector columns do not divide ${classMap.length} pixels.`,
    );
  }
  for (let p = 0; p < classMap.length; p++) {
    if (classMap[p] >= classes) {
      throw new StemflowError('corrupt', `${what}: pixel ${p} has class ${classMap[p]} of ${classes}.`);
    }
  }
  const L = 1 << tableLog;
  const decodeCells = new Uint32Array(contexts * L);
  const encodeSymbols = new Uint32Array(contexts * tokens);
  const encodePositions = new Uint16Array(contexts * L);
  for (let c = 0; c < contexts; c++) {
    const f = freqs.subarray(c * tokens, (c + 1) * tokens);
    checkFrequencies(f, tableLog, `${what} context ${c}`);
    buildDecodeCells(f, tableLog, decodeCells, c * L);
    buildEncodeTables(f, tableLog, encodeSymbols, encodePositions, c * tokens, c * L);
  }
  return { ...model, decodeCells, encodeSymbols, encodePositions };
}
