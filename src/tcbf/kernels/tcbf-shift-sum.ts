/**
 * CPU twin of src/shaders/tcbf-shift-sum.wgsl: the sum of shifted bright-field spectra on an upsampled grid.
 * For every output frequency Q of the (factor rows) x (factor cols) grid (signed Qs), with q = Q mod (rows, cols):
 *   out(Q) = sum_j w_j S_j(q) exp(-2 pi i phi_j),  phi_j = frac(Qs_r s_r / rows) + frac(Qs_c s_c / cols),
 * where (s_r, s_c) is image j's shift in scan pixels: multiplying by exp(-2 pi i Q.s) moves the value recorded
 * at R to R - s, undoing B_j(R) = f(R + s_j). Zero-insertion upsampling = tiling the spectrum. Each cycle term is
 * reduced modulo 1 before the multiplication by 2 pi (float32 on the GPU). `clear` false adds into `acc`.
 * Spectra are packed pairs (docs/tcbf.md): slot p holds Z = S_2p + i S_2p+1, so with Zm = Z(-q),
 * S_2p(q) = (Z + conj Zm) / 2 and S_2p+1(q) = (Z - conj Zm) / 2i.
 */
export interface ShiftSumJob {
  /** Packed complex spectra, interleaved; images [first, first + count) are summed (`first` even). */
  spectra: Float64Array;
  first: number;
  count: number;
  /** Per image (of the whole spectra array): shift row, shift col (scan px), weight, unused. */
  shifts: Float32Array;
  rows: number;
  cols: number;
  factor: number;
}

export function tcbfShiftSum(job: ShiftSumJob, acc: Float64Array, clear: boolean): void {
  const { rows, cols, factor } = job;
  const fr = rows * factor;
  const fc = cols * factor;
  const hw = rows * cols;
  const frac = (x: number) => x - Math.floor(x);
  for (let Q = 0; Q < fr * fc; Q++) {
    const qr = Math.floor(Q / fc);
    const qc = Q % fc;
    const sr = qr < fr / 2 ? qr : qr - fr;
    const sc = qc < fc / 2 ? qc : qc - fc;
    const src = (qr % rows) * cols + (qc % cols);
    const mirror = ((rows - (qr % rows)) % rows) * cols + ((cols - (qc % cols)) % cols);
    let re = clear ? 0 : acc[2 * Q];
    let im = clear ? 0 : acc[2 * Q + 1];
    for (let j = job.first; j < job.first + job.count; j++) {
      const w = job.shifts[4 * j + 2];
      if (w === 0) continue;
      const slot = (j >> 1) * hw;
      const zr = job.spectra[2 * (slot + src)];
      const zi = job.spectra[2 * (slot + src) + 1];
      const mr = job.spectra[2 * (slot + mirror)];
      const mi = job.spectra[2 * (slot + mirror) + 1];
      const ar = j & 1 ? 0.5 * (zi + mi) : 0.5 * (zr + mr);
      const ai = j & 1 ? -0.5 * (zr - mr) : 0.5 * (zi - mi);
      const phi = frac(frac((sr * job.shifts[4 * j]) / rows) + frac((sc * job.shifts[4 * j + 1]) / cols));
      const c = Math.cos(2 * Math.PI * phi);
      const s = -Math.sin(2 * Math.PI * phi);
      re += w * (ar * c - ai * s);
      im += w * (ar * s + ai * c);
    }
    acc[2 * Q] = re;
    acc[2 * Q + 1] = im;
  }
}
