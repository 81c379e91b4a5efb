/**
 * NumPy .npz files (a ZIP of .npy members, stored uncompressed) for the archive's global state, so Python
 * users can `numpy.load` it. ZIP container by @zip.js/zip.js (streams, ZIP64); .npy members by src/io/npy.ts.
 */
import { configure, Uint8ArrayReader, Uint8ArrayWriter, ZipReader, ZipWriter } from '@zip.js/zip.js';
import { StemflowError } from '../errors';
import { decodeNpy, encodeNpy, type NpyArray } from '../io/npy';

configure({ useWebWorkers: false });

export interface NpzArray {
  data: NpyArray;
  shape: number[];
}

/** Writes arrays as an .npz (member names get the `.npy` suffix numpy expects). */
export async function encodeNpz(arrays: Record<string, NpzArray>): Promise<Uint8Array> {
  const zip = new ZipWriter(new Uint8ArrayWriter(), { level: 0, extendedTimestamp: false });
  for (const [name, { data, shape }] of Object.entries(arrays)) {
    await zip.add(`${name}.npy`, new Uint8ArrayReader(encodeNpy(data, shape)), {
      level: 0,
      lastModDate: new Date(Date.UTC(2000, 0, 1)),
    });
  }
  return zip.close();
}

/** Reads every member of an .npz. A damaged container or member is a 'corrupt' error. */
export async function decodeNpz(bytes: Uint8Array, what = 'npz'): Promise<Map<string, NpzArray>> {
  const out = new Map<string, NpzArray>();
  let zip: ZipReader<unknown> | undefined;
  try {
    zip = new ZipReader(new Uint8ArrayReader(bytes), { checkSignature: true });
    for (const entry of await zip.getEntries()) {
      if (entry.directory) continue;
      if (!entry.filename.endsWith('.npy') || !entry.getData) {
        throw new StemflowError('corrupt', `${what}: member ${entry.filename} is not a .npy array.`);
      }
      const data = await entry.getData(new Uint8ArrayWriter(), { checkSignature: true });
      out.set(entry.filename.slice(0, -4), decodeNpy(data));
    }
  } catch (error) {
    if (error instanceof StemflowError) throw error;
    throw new StemflowError('corrupt', `${what} is not a readable .npz: ${(error as Error).message}`);
  } finally {
    await zip?.close();
  }
  return out;
}
