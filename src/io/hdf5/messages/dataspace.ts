import type { Cursor } from '../cursor';

export interface Dataspace {
  shape: number[];
  maxShape: (number | null)[];
}

const MAX_RANK = 32;

/** Dataspace message (type 0x01), versions 1 and 2. Scalar is shape [], null dataspace is rejected. */
export function parseDataspace(c: Cursor): Dataspace {
  const version = c.u8();
  if (version !== 1 && version !== 2) c.fail(`Unknown dataspace message version ${version}`);
  const rank = c.u8();
  const flags = c.u8();
  if (rank > MAX_RANK) c.fail(`A dataspace of rank ${rank}`);
  if (version === 1) c.skip(5);
  else {
    const type = c.u8();
    if (type === 2) c.fail('A null dataspace (a dataset without elements)');
  }
  const size = c.ctx.lengthSize;
  const shape = Array.from({ length: rank }, () => c.uint(size));
  const maxShape: (number | null)[] = shape.slice();
  if (flags & 1) {
    for (let k = 0; k < rank; k++) {
      const m = c.uintOrUndef(size);
      maxShape[k] = m < 0 ? null : m;
    }
  }
  // H5Screate_simple refuses a maximum below the current size, so no HDF5 writer stores one; a message that
  // does is damaged, and each library reads it its own way (fuzz: hdf5 seed 20261129 cases 263, 382, 2781).
  for (let k = 0; k < rank; k++) {
    const m = maxShape[k];
    if (m !== null && m < shape[k]) c.fail(`A dimension of size ${shape[k]} above its maximum ${m}`);
  }
  return { shape, maxShape };
}
