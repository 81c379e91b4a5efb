import { StemflowError } from '../../errors';
import type { ByteSource } from '../byte-source';
import { FileContext } from './context';

const SIGNATURE = [0x89, 0x48, 0x44, 0x46, 0x0d, 0x0a, 0x1a, 0x0a];

export interface Superblock {
  readonly version: number;
  readonly offsetSize: number;
  readonly lengthSize: number;
  /** Absolute offset of the superblock signature; all stored addresses are relative to it. */
  readonly baseAddress: number;
  /** Object header address of the root group (relative to baseAddress, as stored). */
  readonly rootObjectAddress: number;
  /** End-of-file address, as stored (an absolute offset when the file has not been moved). */
  readonly eofAddress: number;
  /** v1 B-tree K of group nodes (v0/v1 superblocks; 16 and 4 otherwise by default). */
  readonly groupLeafK: number;
  readonly groupInternalK: number;
  /** v1 B-tree K of chunk index nodes (32 unless a v1 superblock says otherwise). */
  readonly chunkK: number;
}

/** Finds the superblock (at 0, 512, 1024, 2048, ...), checks it and returns it with a FileContext. */
export async function readSuperblock(
  source: ByteSource,
  signal?: AbortSignal,
): Promise<{ superblock: Superblock; ctx: FileContext }> {
  const fail = (kind: 'corrupt' | 'truncated' | 'unsupported', msg: string, offset?: number) =>
    new StemflowError(kind, msg, { file: source.name, offset });
  if (source.size < SIGNATURE.length) throw fail('truncated', 'The file is too short to be an HDF5 file');
  let at = -1;
  for (let o = 0; o + SIGNATURE.length <= source.size; o = o === 0 ? 512 : o * 2) {
    const sig = await source.read(o, SIGNATURE.length, signal);
    if (SIGNATURE.every((b, k) => sig[k] === b)) {
      at = o;
      break;
    }
  }
  if (at < 0) throw fail('corrupt', 'This is not an HDF5 file: no HDF5 signature was found');
  const head = await source.read(at, Math.min(256, source.size - at), signal);
  if (head.length < 12) throw fail('truncated', 'The file ends inside the HDF5 superblock', at);
  const version = head[8];
  if (version > 3) throw fail('unsupported', `HDF5 superblock version ${version} is not supported`, at);
  const sizesAt = version < 2 ? 13 : 9;
  const offsetSize = head[sizesAt];
  const lengthSize = head[sizesAt + 1];
  for (const s of [offsetSize, lengthSize]) {
    if (![2, 4, 8].includes(s)) throw fail('corrupt', `Invalid address size ${s} in the HDF5 superblock`, at);
  }
  // The context's base is the signature offset, as the HDF5 library does when a user block moved the file.
  const ctx = new FileContext(source, { offsetSize, lengthSize, baseAddress: at });
  const c = ctx.cursor(head, 0, 'HDF5 superblock');
  let groupLeafK = 4;
  let groupInternalK = 16;
  let chunkK = 32;
  let rootObjectAddress: number;
  let eofAddress: number;
  let storedBase = 0;
  try {
    if (version < 2) {
      c.pos = 16;
      groupLeafK = c.u16();
      groupInternalK = c.u16();
      c.skip(4); // file consistency flags
      if (version === 1) {
        chunkK = c.u16();
        c.skip(2);
      }
      storedBase = c.offset();
      c.offset(); // free-space info address
      eofAddress = c.offset();
      c.offset(); // driver information block
      // Root group symbol table entry: link name offset, object header address, cache type, reserved, scratch.
      c.offset();
      rootObjectAddress = c.offset();
      // Cache type 0 (nothing cached), 1 (group B-tree and heap) or 2 (soft link); the library refuses others.
      const cacheType = c.u32();
      if (cacheType > 2) c.fail(`Unknown symbol table entry cache type ${cacheType} for the root group`);
      c.skip(20);
    } else {
      c.pos = 12;
      storedBase = c.offset();
      c.offset(); // superblock extension
      eofAddress = c.offset();
      rootObjectAddress = c.offset();
      ctx.verifyChecksum(head, c.pos, 0, 'HDF5 superblock');
    }
  } catch (e) {
    if (e instanceof StemflowError && head.length < 256 && c.pos >= head.length - 8) {
      throw fail('truncated', 'The file ends inside the HDF5 superblock', at);
    }
    throw e;
  }
  if (groupLeafK === 0 || groupInternalK === 0 || chunkK === 0) {
    throw fail('corrupt', 'The HDF5 superblock declares a B-tree with K = 0', at);
  }
  if (eofAddress < 0 || rootObjectAddress < 0 || storedBase < 0) {
    throw fail('corrupt', 'The HDF5 superblock has an undefined end-of-file or root group address', at);
  }
  // The stored end-of-file address is absolute; shift it as the library does when the superblock moved.
  const end = eofAddress - storedBase + at;
  if (end < at) {
    // A base address past the end of the file (the library computes an end beyond 2^63 and refuses it).
    throw fail(
      'corrupt',
      `The HDF5 superblock's base address ${storedBase} lies past its end-of-file address ${eofAddress}`,
      at,
    );
  }
  if (end > source.size) {
    throw fail(
      'truncated',
      `The file is ${source.size} bytes but its HDF5 superblock says it ends at byte ${end}; it is probably truncated (an incomplete download or copy)`,
    );
  }
  const superblock: Superblock = {
    version,
    offsetSize,
    lengthSize,
    baseAddress: at,
    rootObjectAddress,
    eofAddress,
    groupLeafK,
    groupInternalK,
    chunkK,
  };
  return { superblock, ctx };
}
