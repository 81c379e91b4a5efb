/**
 * Memory plan of the GPU verifier (gpu-verify.ts): every buffer sized before anything is allocated, and refused
 * ('budget', with the numbers) when a buffer exceeds the device's limits or the whole exceeds the budget.
 *
 * Per record the big inputs are the source's stored chunks and the record's data words. They are read on the
 * host into mapped staging (`slots` of them: MAP_WRITE buffers can only be copy sources) and copied by the GPU
 * into one of `sets` sets of bound inputs. With two sets, record r + 1's copies run while record r is decoded
 * and compared (gpu-verify.ts explains the submission order that lets them).
 */
import { StemflowError } from '../errors';
import { NEIGHBOUR_BUCKETS } from './hybrid-uint';

export interface GpuVerifyPlanInput {
  /** Frames of the acquisition, of its largest piece verified at once, and of its largest record. */
  frameCount: number;
  maxFrames: number;
  maxRecordFrames: number;
  pixels: number;
  wordsPerFrame: number;
  /** Lanes per frame. */
  slices: number;
  classes: number;
  tableLog: number;
  /** Mismatch blocks of the acquisition. */
  blocks: number;
  /** Largest stored (compressed) bytes of one record, and largest data words of one record. */
  maxStoredBytes: number;
  maxDataWords: number;
  /** Mapped staging slots (records read ahead). */
  slots: number;
  /** Sets of bound inputs (2: copies overlap the decode and compare of the record before; 1: they do not). */
  sets: number;
  /** The decode pass's scratch for the largest record (decodeScratchBytes). */
  decodeScratchBytes: number;
  /** GPU bytes the verifier may allocate in all (optional). */
  budgetBytes?: number;
  limits: { maxBufferSize: number; maxStorageBufferBindingSize: number };
}

export interface GpuVerifyBuffer {
  label: string;
  bytes: number;
  /** 'shared': one buffer; 'set': one per set of bound inputs; 'slot': one mapped staging buffer per slot. */
  per: 'shared' | 'set' | 'slot';
  bound: boolean;
}

export interface GpuVerifyPlan extends GpuVerifyPlanInput {
  buffers: GpuVerifyBuffer[];
  sharedBytes: number;
  setBytes: number;
  slotBytes: number;
  /** sharedBytes + sets x setBytes + slots x slotBytes + decodeScratchBytes. */
  totalBytes: number;
}

const align4 = (n: number) => Math.ceil(Math.max(4, n) / 4) * 4;

export function planGpuVerify(input: GpuVerifyPlanInput): GpuVerifyPlan {
  const { frameCount, maxFrames, pixels, wordsPerFrame, slices, limits } = input;
  const cells = input.classes * NEIGHBOUR_BUCKETS * (1 << input.tableLog);
  const stored = align4(input.maxStoredBytes + 4);
  const data = align4(input.maxDataWords * 4);
  const b = (label: string, bytes: number, per: GpuVerifyBuffer['per'], bound = true): GpuVerifyBuffer => ({
    label,
    bytes: align4(bytes),
    per,
    bound,
  });
  const buffers = [
    b('decoded', maxFrames * wordsPerFrame * 4, 'shared'),
    b('pixel flags', pixels * 4, 'shared'),
    b('frame errors', frameCount * 4, 'shared'),
    b('frame totals', frameCount * 8, 'shared'),
    b('mismatches', input.blocks * 4, 'shared'),
    b('lane errors', 4, 'shared'),
    b('compressed', stored, 'set'),
    b('index', maxFrames * 8, 'set'),
    b('record data', data, 'set'),
    b('lane offsets', (input.maxRecordFrames * slices + 1) * 4, 'set'),
    b('decode cells', cells * 4, 'set'),
    b('class map', pixels * 4, 'set'),
    b('chunks staging', stored, 'slot', false),
    b('record data staging', data, 'slot', false),
  ];
  for (const x of buffers) {
    const max = x.bound ? limits.maxStorageBufferBindingSize : limits.maxBufferSize;
    if (x.bytes > max) {
      throw new StemflowError(
        'budget',
        `GPU verification: the ${x.label} buffer needs ${x.bytes} bytes; this GPU allows ${max} per ${x.bound ? 'binding' : 'buffer'}. Use the CPU verifier, or an archive of smaller records.`,
      );
    }
  }
  const sum = (per: GpuVerifyBuffer['per']) =>
    buffers.filter((x) => x.per === per).reduce((n, x) => n + x.bytes, 0);
  const sharedBytes = sum('shared');
  const setBytes = sum('set');
  const slotBytes = sum('slot');
  const fixed = sharedBytes + input.sets * setBytes + input.decodeScratchBytes;
  const totalBytes = fixed + input.slots * slotBytes;
  if (input.budgetBytes !== undefined && totalBytes > input.budgetBytes) {
    const gib = (n: number) => `${(n / 2 ** 30).toFixed(2)} GiB`;
    const fit = Math.floor((input.budgetBytes - fixed) / slotBytes);
    throw new StemflowError(
      'budget',
      `GPU verification: shared buffers ${gib(sharedBytes)} + ${input.sets} input set(s) of ${gib(setBytes)} + decode scratch ${gib(input.decodeScratchBytes)} + ${input.slots} staging slot(s) of ${gib(slotBytes)} = ${gib(totalBytes)} exceed the budget of ${gib(input.budgetBytes)}; ${fit >= 1 ? `at most ${fit} slot(s) fit` : 'use the CPU verifier'}.`,
    );
  }
  return { ...input, buffers, sharedBytes, setBytes, slotBytes, totalBytes };
}

/**
 * Frames verified at once by default (a piece of a record; with VERIFY_SLOTS = 2 staging slots). Pieces bound
 * the decoded scratch, the input sets and the mapped staging by their frames, not by the record's: at
 * 16,384-frame records of 192 x 192 uint16 a whole record needs 1.97 GiB (1.1 GiB decoded, 0.26 GiB of
 * staging that took ~60 ms to create on the H200), a quarter record with two slots 0.60 GiB. On the H200
 * (512 x 512 x 192 x 192, medians of three runs), once a piece's host work was out of the read path (lane
 * offsets per record, copies submitted first): quarter records with two slots 346.9 ms, with three 347.7,
 * half records with one 379.0, whole records with one 380.3, eighths with two 491.8. Smaller pieces start
 * sooner (less staging to create, a shorter first read) until their reads, into staging mapped again for
 * each piece, stop keeping up with the GPU.
 */
export const VERIFY_PIECE_FRAMES = 4096;

/** Frames [start, start + frames) of a record, verified as one step. */
export interface VerifyPiece {
  /** The record's index in the acquisition. */
  record: number;
  /** First frame of the piece in the acquisition, and in its record. */
  firstFrame: number;
  start: number;
  frames: number;
  /** Its lanes' data words in the record: [from, to). */
  from: number;
  to: number;
  /** Its stored (compressed) source bytes. */
  storedBytes: number;
  /** The mismatch block of its first frame, in the acquisition. */
  blockBase: number;
}

/**
 * Splits every record into pieces of at most `pieceFrames` frames, rounded down to whole mismatch blocks (at
 * least one block), so that every block is counted by one piece. Records are checked by the reader: their lane
 * offsets rise and span their data, so every piece's words lie within its record.
 */
export function planVerifyPieces(
  records: readonly { frames: number; firstFrame: number; offsets: Uint32Array }[],
  {
    slices,
    blockFrames,
    pieceFrames,
    storedSizes,
  }: {
    slices: number;
    blockFrames: number;
    pieceFrames: number;
    storedSizes: ArrayLike<number>;
  },
): VerifyPiece[] {
  if (!(Number.isInteger(pieceFrames) && pieceFrames >= 1))
    throw new StemflowError(
      'invalid',
      `Frames a verified piece must be a positive integer, not ${pieceFrames}.`,
    );
  const step = Math.max(1, Math.floor(pieceFrames / blockFrames)) * blockFrames;
  const pieces: VerifyPiece[] = [];
  let blockBase = 0;
  for (const [record, rec] of records.entries()) {
    for (let start = 0; start < rec.frames; start += step) {
      const frames = Math.min(step, rec.frames - start);
      const firstFrame = rec.firstFrame + start;
      let storedBytes = 0;
      for (let f = firstFrame; f < firstFrame + frames; f++) storedBytes += storedSizes[f];
      pieces.push({
        record,
        firstFrame,
        start,
        frames,
        from: rec.offsets[start * slices],
        to: rec.offsets[(start + frames) * slices],
        storedBytes,
        blockBase: blockBase + start / blockFrames,
      });
    }
    blockBase += Math.ceil(rec.frames / blockFrames);
  }
  return pieces;
}
