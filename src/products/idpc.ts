/**
 * Integrated DPC (iDPC): the scalar field whose gradient best matches the centre-of-mass vector field, by
 * Fourier integration: Phi(k) = (kx Gx(k) + ky Gy(k)) / (i 2 pi |k|^2), Phi(0) = 0. For a weak phase object the
 * centre-of-mass shift is proportional to the gradient of the projected potential, so iDPC images it directly.
 * Floating point (stated tolerance, not exact). The field is extended by mirroring to twice its size (the x
 * component antisymmetric in x, the y component antisymmetric in y), which makes it periodic without the
 * wrap-around jumps that would bend the result at the edges; positions without counts (NaN) count as 0.
 * Power-of-two lengths use a radix-2 FFT, other lengths a direct DFT.
 */

/** In-place radix-2 complex FFT of length n (a power of two); `inverse` includes the 1/n scaling. */
export function fft(re: Float64Array, im: Float64Array, inverse = false): void {
  const n = re.length;
  if (n & (n - 1)) throw new Error(`FFT length ${n} is not a power of two`);
  for (let i = 1, j = 0; i < n; i++) {
    let bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) {
      [re[i], re[j]] = [re[j], re[i]];
      [im[i], im[j]] = [im[j], im[i]];
    }
  }
  for (let len = 2; len <= n; len <<= 1) {
    const angle = ((inverse ? 2 : -2) * Math.PI) / len;
    for (let i = 0; i < n; i += len) {
      for (let k = 0; k < len / 2; k++) {
        const wr = Math.cos(angle * k);
        const wi = Math.sin(angle * k);
        const a = i + k;
        const b = a + len / 2;
        const xr = re[b] * wr - im[b] * wi;
        const xi = re[b] * wi + im[b] * wr;
        re[b] = re[a] - xr;
        im[b] = im[a] - xi;
        re[a] += xr;
        im[a] += xi;
      }
    }
  }
  if (inverse) {
    for (let i = 0; i < n; i++) {
      re[i] /= n;
      im[i] /= n;
    }
  }
}

/** In-place DFT of any length (direct, O(n^2)); `inverse` includes the 1/n scaling. */
export function dft(re: Float64Array, im: Float64Array, inverse = false): void {
  const n = re.length;
  if ((n & (n - 1)) === 0) {
    fft(re, im, inverse);
    return;
  }
  const sign = inverse ? 1 : -1;
  const cos = Float64Array.from({ length: n }, (_, k) => Math.cos((2 * Math.PI * k) / n));
  const sin = Float64Array.from({ length: n }, (_, k) => sign * Math.sin((2 * Math.PI * k) / n));
  const or = new Float64Array(n);
  const oi = new Float64Array(n);
  for (let k = 0; k < n; k++) {
    let sr = 0;
    let si = 0;
    for (let t = 0, idx = 0; t < n; t++, idx = (idx + k) % n) {
      sr += re[t] * cos[idx] - im[t] * sin[idx];
      si += re[t] * sin[idx] + im[t] * cos[idx];
    }
    or[k] = inverse ? sr / n : sr;
    oi[k] = inverse ? si / n : si;
  }
  re.set(or);
  im.set(oi);
}

/** 2D transform of a rows x cols complex array, row-major, in place (FFT or DFT per length). */
export function fft2(re: Float64Array, im: Float64Array, rows: number, cols: number, inverse = false): void {
  const rr = new Float64Array(cols);
  const ri = new Float64Array(cols);
  for (let r = 0; r < rows; r++) {
    rr.set(re.subarray(r * cols, (r + 1) * cols));
    ri.set(im.subarray(r * cols, (r + 1) * cols));
    dft(rr, ri, inverse);
    re.set(rr, r * cols);
    im.set(ri, r * cols);
  }
  const cr = new Float64Array(rows);
  const ci = new Float64Array(rows);
  for (let c = 0; c < cols; c++) {
    for (let r = 0; r < rows; r++) {
      cr[r] = re[r * cols + c];
      ci[r] = im[r * cols + c];
    }
    dft(cr, ci, inverse);
    for (let r = 0; r < rows; r++) {
      re[r * cols + c] = cr[r];
      im[r * cols + c] = ci[r];
    }
  }
}

/** iDPC of the CoM images (rows x cols, scan order), in units of CoM offset x scan pixels; mean zero. */
export function integrateDpc(
  comX: Float64Array,
  comY: Float64Array,
  rows: number,
  cols: number,
  mirror = true,
): Float64Array {
  const R = mirror ? 2 * rows : rows;
  const C = mirror ? 2 * cols : cols;
  const gxr = new Float64Array(R * C);
  const gyr = new Float64Array(R * C);
  const gxi = new Float64Array(R * C);
  const gyi = new Float64Array(R * C);
  const at = (v: number) => (Number.isFinite(v) ? v : 0);
  for (let r = 0; r < R; r++) {
    const flipY = r >= rows;
    const sr = flipY ? R - 1 - r : r;
    for (let c = 0; c < C; c++) {
      const flipX = c >= cols;
      const sc = flipX ? C - 1 - c : c;
      gxr[r * C + c] = (flipX ? -1 : 1) * at(comX[sr * cols + sc]);
      gyr[r * C + c] = (flipY ? -1 : 1) * at(comY[sr * cols + sc]);
    }
  }
  fft2(gxr, gxi, R, C);
  fft2(gyr, gyi, R, C);
  const pr = new Float64Array(R * C);
  const pi = new Float64Array(R * C);
  for (let r = 0; r < R; r++) {
    const ky = (r <= R / 2 ? r : r - R) / R;
    for (let c = 0; c < C; c++) {
      const kx = (c <= C / 2 ? c : c - C) / C;
      const k2 = kx * kx + ky * ky;
      if (k2 === 0) continue;
      const i = r * C + c;
      // (kx Gx + ky Gy) / (i 2 pi k2) = -i (kx Gx + ky Gy) / (2 pi k2)
      const nr = kx * gxr[i] + ky * gyr[i];
      const ni = kx * gxi[i] + ky * gyi[i];
      const s = 1 / (2 * Math.PI * k2);
      pr[i] = ni * s;
      pi[i] = -nr * s;
    }
  }
  fft2(pr, pi, R, C, true);
  const out = new Float64Array(rows * cols);
  let mean = 0;
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) mean += out[r * cols + c] = pr[r * C + c];
  mean /= rows * cols;
  for (let i = 0; i < out.length; i++) out[i] -= mean;
  return out;
}
