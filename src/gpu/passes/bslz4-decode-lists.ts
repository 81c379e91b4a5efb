/**
 * The parse pass's sequence lists of a list decode variant (bslz4-decode.ts): for the block entries of one
 * dispatch, in 1 or 2 sets (set s from block entry s * entries; two let a batch's decode dispatch parse the next
 * batch into the other set), grown when a dispatch needs more (the bytes decodeListBytes counts, per set).
 * Formats: src/kernels/bslz4-parse.ts.
 */
import { StemflowError } from '../../errors.ts';
import { checkBindable } from '../chunked-dispatch.ts';

export interface DecodeLists {
  /** LIST_CAP (8-byte) sequences per block entry (COPY_SRC: tests and tools read them back). */
  seqs: GPUBuffer;
  /** (sequences written, verdict + 1, or 0: no list) per block entry. */
  info: GPUBuffer;
  /** Block entries a set. */
  entries: number;
  sets: number;
}

/**
 * The lists of one decode pass, made by `ensure` (`keep`: the caller holds lists parsed ahead in them, so they
 * must not be replaced: refuse instead). Replaced buffers go to `retire` (encoders not yet submitted may use them).
 */
export function createDecodeLists(
  device: GPUDevice,
  listCap: number,
  retire: (buffers: GPUBuffer[]) => void,
) {
  let lists: DecodeLists | null = null;
  return {
    current: (): DecodeLists | null => lists,
    ensure(entries: number, sets: number, keep: boolean): DecodeLists {
      if (!lists || lists.entries < entries || lists.sets < sets) {
        if (keep) {
          throw new StemflowError(
            'invalid',
            `The decode's lists hold ${lists?.sets ?? 0} set(s) of ${lists?.entries ?? 0} blocks, not ${sets} of ${entries}: reserve them before parsing ahead.`,
          );
        }
        if (lists) retire([lists.seqs, lists.info]);
        const n = Math.max(1, entries);
        lists = {
          seqs: device.createBuffer({
            label: 'bslz4-parse sequences',
            size: Math.max(16, sets * n * listCap * 8),
            usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC,
          }),
          info: device.createBuffer({
            label: 'bslz4-parse block verdicts',
            size: Math.max(16, sets * n * 8),
            usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC,
          }),
          entries: n,
          sets,
        };
        checkBindable(device, lists.seqs, 'decode sequence list');
      }
      return lists;
    },
    destroy() {
      lists?.seqs.destroy();
      lists?.info.destroy();
      lists = null;
    },
  };
}
