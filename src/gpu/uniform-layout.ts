/**
 * One definition of each uniform struct: the WGSL source. `structLayout` reads a struct of 4-byte scalars
 * (u32, i32, f32) from the shader text, and `packStruct` writes named values at the reflected offsets, so
 * offsets are never copied by hand between WGSL and TypeScript.
 */
import { StemflowError } from '../errors.ts';

type Scalar = 'u32' | 'i32' | 'f32';

export interface StructLayout {
  name: string;
  fields: readonly { name: string; type: Scalar }[];
  /** Size in bytes (a multiple of 16, as uniform buffers need). */
  byteSize: number;
}

export function structLayout(wgsl: string, name: string): StructLayout {
  const body = new RegExp(`struct\\s+${name}\\s*\\{([^}]*)\\}`).exec(wgsl)?.[1];
  if (body === undefined) throw new StemflowError('invalid', `The shader declares no struct ${name}.`);
  const fields = body
    .replace(/\/\/[^\n]*/g, '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((decl) => {
      const m = /^(\w+)\s*:\s*(\w+)$/.exec(decl);
      if (!m || !['u32', 'i32', 'f32'].includes(m[2])) {
        throw new StemflowError('invalid', `Struct ${name} field "${decl}" is not a 4-byte scalar.`);
      }
      return { name: m[1], type: m[2] as Scalar };
    });
  return { name, fields, byteSize: Math.ceil((fields.length * 4) / 16) * 16 };
}

/** Packs every field of `layout` (all required, no extras) into `target` at byte `offset`. */
export function packStruct(
  layout: StructLayout,
  values: Readonly<Record<string, number>>,
  target: ArrayBuffer = new ArrayBuffer(layout.byteSize),
  offset = 0,
): ArrayBuffer {
  const extra = Object.keys(values).filter((k) => !layout.fields.some((f) => f.name === k));
  if (extra.length)
    throw new StemflowError('invalid', `Struct ${layout.name} has no field ${extra.join(', ')}.`);
  const view = new DataView(target, offset, layout.byteSize);
  layout.fields.forEach(({ name, type }, i) => {
    const v = values[name];
    if (v === undefined)
      throw new StemflowError('invalid', `Struct ${layout.name} field ${name} is missing.`);
    if (type === 'f32') view.setFloat32(i * 4, v, true);
    else if (type === 'i32') view.setInt32(i * 4, checkInt(layout, name, v, -(2 ** 31), 2 ** 31 - 1), true);
    else view.setUint32(i * 4, checkInt(layout, name, v, 0, 2 ** 32 - 1), true);
  });
  return target;
}

function checkInt(layout: StructLayout, name: string, v: number, min: number, max: number): number {
  if (!Number.isInteger(v) || v < min || v > max) {
    throw new StemflowError('invalid', `Struct ${layout.name} field ${name} = ${v} does not fit its type.`);
  }
  return v;
}
