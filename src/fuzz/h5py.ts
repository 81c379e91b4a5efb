/**
 * h5py as the referee for "reinterpreted" inputs: metadata changed, stemflow read other values without an
 * error. h5py (the HDF5 C library) reads the same mutated file; the same SHA-256 means both libraries read the
 * damaged file the same way (accepted); h5py failing or reading other values is reported for review.
 */
import { spawnSync } from 'node:child_process';
import type { Adjudication } from './report.ts';

const SCRIPT = `
import sys, json, hashlib, re
import numpy as np
import h5py
try:
    import hdf5plugin  # noqa: F401 (registers the bitshuffle filter)
except Exception:
    pass
req = json.loads(sys.argv[1])
f = h5py.File(req['file'], 'r')
if req['dataset']:
    arrays = [f[req['dataset']][()]]
else:
    g = f['/entry/data']
    names = sorted(n for n in g.keys() if re.match(r'^data_\\d+$', n))
    arrays = [g[n][()] for n in names]
h = hashlib.sha256()
for a in arrays:
    a = np.ascontiguousarray(a)
    h.update(a.astype(a.dtype.newbyteorder('<')).tobytes())
print(json.dumps({'sha256': h.hexdigest()}))
`;

export type Ruling = 'h5py-agrees' | 'h5py-differs' | 'h5py-fails' | 'h5py-hangs';

export function python(): string {
  return process.env.STEMFLOW_PYTHON ?? '/usr/bin/python3';
}

export function adjudicate(a: Adjudication, timeoutMs = 20_000): { ruling: Ruling; detail: string } {
  const r = spawnSync(python(), ['-c', SCRIPT, JSON.stringify({ file: a.file, dataset: a.dataset })], {
    cwd: a.dir,
    timeout: timeoutMs,
    encoding: 'utf8',
  });
  if (r.error && (r.error as NodeJS.ErrnoException).code === 'ETIMEDOUT')
    return { ruling: 'h5py-hangs', detail: 'timeout' };
  if (r.error) return { ruling: 'h5py-fails', detail: `python did not run: ${r.error.message}` };
  if (r.status !== 0) {
    const last = (r.stderr || '').trim().split('\n').pop() ?? '';
    return { ruling: 'h5py-fails', detail: r.signal ? `signal ${r.signal}` : last };
  }
  try {
    const sha = JSON.parse(r.stdout.trim().split('\n').pop()!).sha256 as string;
    return sha === a.sha256
      ? { ruling: 'h5py-agrees', detail: sha }
      : { ruling: 'h5py-differs', detail: `h5py ${sha}, stemflow ${a.sha256}` };
  } catch {
    return { ruling: 'h5py-fails', detail: r.stdout.slice(0, 200) };
  }
}
