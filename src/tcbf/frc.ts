/**
 * Half-set Fourier ring correlation (docs/tcbf.md, "Quality"): the bright-field pixels are split in a detector
 * checkerboard, each half is shift-corrected and summed, and the two spectra are correlated ring by ring. The
 * information limit is the first ring whose correlation falls below the half-bit threshold
 * T(n) = (0.2071 + 1.9102/sqrt(n)) / (1.2071 + 0.9102/sqrt(n)), n = Fourier pixels in the ring.
 */
export interface RingCorrelation {
  /** Ring centre frequencies, 1/Å. */
  frequency: Float64Array;
  value: Float64Array;
  threshold: Float64Array;
  /** First frequency below threshold (1/Å), or the last ring's if none falls below. */
  informationLimit: number;
}

export function halfSetFrc(
  a: Float64Array,
  b: Float64Array,
  rows: number,
  cols: number,
  step: number,
): RingCorrelation {
  const rings = Math.floor(Math.min(rows, cols) / 2);
  const dq = 1 / (Math.min(rows, cols) * step);
  const ab = new Float64Array(rings);
  const aa = new Float64Array(rings);
  const bb = new Float64Array(rings);
  const n = new Float64Array(rings);
  for (let r = 0; r < rows; r++) {
    const qr = (r < rows / 2 ? r : r - rows) / (rows * step);
    for (let c = 0; c < cols; c++) {
      const qc = (c < cols / 2 ? c : c - cols) / (cols * step);
      const ring = Math.round(Math.hypot(qr, qc) / dq);
      if (ring === 0 || ring >= rings) continue;
      const i = 2 * (r * cols + c);
      ab[ring] += a[i] * b[i] + a[i + 1] * b[i + 1];
      aa[ring] += a[i] * a[i] + a[i + 1] * a[i + 1];
      bb[ring] += b[i] * b[i] + b[i + 1] * b[i + 1];
      n[ring]++;
    }
  }
  const frequency = Float64Array.from({ length: rings }, (_, i) => i * dq);
  const value = Float64Array.from({ length: rings }, (_, i) =>
    i === 0 ? 1 : ab[i] / Math.sqrt(aa[i] * bb[i] || 1),
  );
  const threshold = Float64Array.from({ length: rings }, (_, i) => {
    const s = Math.sqrt(Math.max(1, n[i]));
    return (0.2071 + 1.9102 / s) / (1.2071 + 0.9102 / s);
  });
  let informationLimit = frequency[rings - 1];
  for (let i = 1; i < rings; i++) {
    if (value[i] < threshold[i]) {
      informationLimit = frequency[i];
      break;
    }
  }
  return { frequency, value, threshold, informationLimit };
}
