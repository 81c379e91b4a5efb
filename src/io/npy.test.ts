import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { decodeNpy, encodeNpy } from './npy';

describe('npy', () => {
  it('round-trips every supported dtype', () => {
    const arrays = [
      Uint8Array.of(0, 1, 255, 7, 8, 9),
      Uint16Array.of(0, 65535, 256, 3, 4, 5),
      Uint32Array.of(0, 4294967295, 65536, 1, 2, 3),
      Float64Array.of(0, 2 ** 53, -1.5, 3, 4, 5),
    ];
    for (const a of arrays) {
      const bytes = encodeNpy(a, [2, 3]);
      expect((10 + new DataView(bytes.buffer).getUint16(8, true)) % 64).toBe(0);
      const back = decodeNpy(bytes);
      expect(back.shape).toEqual([2, 3]);
      expect(Array.from(back.data)).toEqual(Array.from(a));
    }
  });

  it('writes files numpy reads exactly, and reads what numpy writes', () => {
    const dir = mkdtempSync(join(tmpdir(), 'npy-'));
    const ours = join(dir, 'ours.npy');
    writeFileSync(ours, encodeNpy(Uint16Array.of(1, 65535, 300, 0), [2, 2]));
    const theirs = join(dir, 'theirs.npy');
    const script = `import numpy as np, sys
a = np.load(sys.argv[1]); assert a.dtype == np.uint16 and a.shape == (2, 2), (a.dtype, a.shape)
assert a.tolist() == [[1, 65535], [300, 0]], a.tolist()
np.save(sys.argv[2], np.arange(12, dtype='<u4').reshape(3, 4) * 1000003)`;
    execFileSync('/usr/bin/python3', ['-c', script, ours, theirs]);
    const back = decodeNpy(readFileSync(theirs));
    expect(back.shape).toEqual([3, 4]);
    expect(Array.from(back.data)).toEqual(Array.from({ length: 12 }, (_, i) => (i * 1000003) >>> 0));
  });

  it('rejects bytes that are not .npy', () => {
    expect(() => decodeNpy(Uint8Array.of(1, 2, 3))).toThrow(/Not a .npy file/);
  });
});
