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
    if (cls === 1) return { class: 'float', size, littleEndian };
    return { class: bits & 0x08 ? 'int' : 'uint', size, littleEndian };
  }
  return { unsupported: `the ${CLASS_NAMES[cls] ?? `class ${cls}`} datatype` };
}
