/** The tcBF backend built from the CPU twins of the WGSL passes (float64); used by tests and small data. */
import type { ResidentLayout } from '../gpu/resident-layout.ts';
import type { TcbfBackend } from './backend.ts';
import type { TcbfGrid } from './grid.ts';
import { fft2dBatch } from './kernels/fft.ts';
import { tcbfGather } from './kernels/tcbf-gather.ts';
import { tcbfPeak } from './kernels/tcbf-peak.ts';
import { tcbfPhaseFlip } from './kernels/tcbf-phase-flip.ts';
import { tcbfShiftSum } from './kernels/tcbf-shift-sum.ts';
import { tcbfSpectrumProduct } from './kernels/tcbf-spectrum-product.ts';

export interface CpuBackendInput {
  layout: ResidentLayout;
  resident: readonly Uint32Array[];
  pixels: Uint32Array;
  invMean: Float32Array;
  grid: TcbfGrid;
}

export function createCpuBackend(input: CpuBackendInput): TcbfBackend {
  const { grid } = input;
  const { rows, cols } = grid;
  const hw = rows * cols;
  const count = input.pixels.length;
  let spectra: Float64Array = new Float64Array(0);
  return {
    count,
    rows,
    cols,
    async prepare() {
      spectra = tcbfGather({
        layout: input.layout,
        resident: input.resident,
        pixels: input.pixels,
        invMean: input.invMean,
        scanRows: grid.scanRows,
        scanCols: grid.scanCols,
        rows,
        cols,
        taperRow: grid.taperRow,
        taperCol: grid.taperCol,
      });
      fft2dBatch(spectra, 0, Math.ceil(count / 2), rows, cols, false);
    },
    async shiftSum(shifts, factor) {
      const acc = new Float64Array(2 * hw * factor * factor);
      tcbfShiftSum({ spectra, first: 0, count, shifts, rows, cols, factor }, acc, true);
      return acc;
    },
    async correlate(spectrum, expected, radius) {
      const out = new Float64Array(4 * count);
      // Packed pairs: IFFT(Z F) = c_2p + i c_2p+1 (docs/tcbf.md).
      const batch = 64;
      for (let first = 0; first < count; first += batch) {
        const n = Math.min(batch, count - first);
        const slots = Math.ceil(n / 2);
        const corr = tcbfSpectrumProduct(spectra, (first / 2) * hw, slots, spectrum, hw);
        fft2dBatch(corr, 0, slots, rows, cols, true);
        out.set(
          tcbfPeak(corr, n, rows, cols, expected.subarray(2 * first, 2 * (first + n)), radius),
          4 * first,
        );
      }
      return out;
    },
    async reconstruct(shifts, factor, flip) {
      const acc = await this.shiftSum(shifts, factor);
      const fr = rows * factor;
      const fc = cols * factor;
      const flipped = tcbfPhaseFlip(acc, fr, fc, flip);
      return [acc, flipped].map((image) => {
        fft2dBatch(image, 0, 1, fr, fc, true);
        return Float64Array.from({ length: fr * fc }, (_, i) => image[2 * i]);
      }) as [Float64Array, Float64Array];
    },
    async flush() {},
    dispose() {
      spectra = new Float64Array(0);
    },
  };
}
