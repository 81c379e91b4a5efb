import type { Cursor } from '../cursor';

export interface Dtype {
  class: 'uint' | 'int' | 'float';
  size: number;
  littleEndian: boolean;
}

const CLASS_NAMES = [
  'fixed-point',
  'floating-point',
  'time',
  'string',
  'bit field',
  'opaque',
  'compound',
  'reference',
  'enumerated',
  'variable-length',
  'array',
];

/** Datatype message (type 0x03): fixed-point and floating-point only. */
export function parseDatatype(c: Cursor): Dtype | { unsupported: string } {
  const classVersion = c.u8();
  const cls = classVersion & 0x0f;
  const version = classVersion >> 4;
  if (version < 1 || version > 5) c.fail(`Unknown datatype message version ${version}`);
  const bits = c.u8() | (c.u8() << 8) | (c.u8() << 16);
  const size = c.u32();
  if (cls === 0 || cls === 1) {
    if (![1, 2, 4, 8, 16].includes(size)) return { unsupported: `a ${size}-byte number` };
    const littleEndian = (bits & 1) === 0;
    if (cls === 1 && bits & 0x40) return { unsupported: 'a VAX floating-point number' };
    const partial = checkBits(c, size);
    if (partial) return { unsupported: partial };
    if (cls === 1) {
      const ieee = IEEE[size];
      const layout = [c.u8(), c.u8(), c.u8(), c.u8(), c.u32()];
      if (
        !ieee ||
        layout.some((v, k) => v !== ieee[k]) ||
        ((bits >> 4) & 3) !== 2 ||
        ((bits >> 8) & 0xff) !== size * 8 - 1
      ) {
        return { unsupported: `a ${size * 8}-bit floating-point number that is not IEEE 754` };
      }
      return { class: 'float', size, littleEndian };
    }
    return { class: bits & 0x08 ? 'int' : 'uint', size, littleEndian };
  }
  return { unsupported: `the ${CLASS_NAMES[cls] ?? `class ${cls}`} datatype` };
}

/** IEEE 754 layouts by size: exponent location and size, mantissa location and size, exponent bias. */
const IEEE: Record<number, number[]> = {
  2: [10, 5, 0, 10, 15],
  4: [23, 8, 0, 23, 127],
  8: [52, 11, 0, 52, 1023],
};

/**
 * The bit offset and precision of a number: bits outside them are padding that the HDF5 library drops when
 * it converts. Stored bits that cannot be in the element (offset + precision past its size) or a precision of
 * 0 (`H5Tset_precision` refuses both) are a damaged message: libhdf5 1.10 then reads bits from outside the
 * element, or zeros (fuzz: hdf5 seed 20261129 cases 3310, 6141). Padding we do not mask is 'unsupported'
 * rather than values read with it. Returns what is unsupported, or null.
 */
function checkBits(c: Cursor, size: number): string | null {
  const offset = c.u16();
  const precision = c.u16();
  if (precision === 0 || offset + precision > size * 8) {
    c.fail(`A ${size}-byte number whose ${precision} significant bits start at bit ${offset}`);
  }
  if (offset !== 0 || precision !== size * 8) {
    return `a ${size}-byte number with ${precision} significant bits at bit ${offset} (padding bits)`;
  }
  return null;
}
