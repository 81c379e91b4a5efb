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
  /** Frames of the acquisition, and of its largest record. */
  frameCount: number;
  maxFrames: number;
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
    b('lane errors', frameCount * slices * 4, 'shared'),
    b('compressed', stored, 'set'),
    b('index', maxFrames * 8, 'set'),
    b('record data', data, 'set'),
    b('lane offsets', (maxFrames * slices + 1) * 4, 'set'),
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
