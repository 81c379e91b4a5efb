/**
 * What the tcBF pipeline needs from a compute backend. Two implementations run the same passes: the CPU
 * twins (`cpu-backend.ts`, float64) and WebGPU (`gpu/gpu-backend.ts`, float32). Spectra stay with the backend;
 * only small results (one reference spectrum, peaks, final images) cross to the host.
 */
import type { PhaseFlipSpec } from './kernels/tcbf-phase-flip.ts';

export interface TcbfBackend {
  /** Bright-field images. */
  readonly count: number;
  /** FFT grid (powers of two, at least the scan). */
  readonly rows: number;
  readonly cols: number;
  /** Gathers and Fourier-transforms every bright-field image. */
  prepare(): Promise<void>;
  /**
   * sum_j w_j S_j(q) exp(-2 pi i Q.s_j) on the factor-upsampled grid (shift-sum twin); `shifts` holds
   * (row, col, weight, 0) per image in scan px. Complex, interleaved, (factor rows) x (factor cols).
   */
  shiftSum(shifts: Float32Array, factor: number): Promise<Float64Array>;
  /**
   * For each image j: the peak of IFFT[S_j x spectrum] within +-radius of expected[j] (peak twin):
   * (row, col, value, found) per image.
   */
  correlate(spectrum: Float64Array, expected: Float32Array, radius: number): Promise<Float64Array>;
  /**
   * The shift-sum at `factor` inverse transformed (the tcBF image) and, phase-flipped (phase-flip twin), the
   * phase-flip image: two real images of (factor rows) x (factor cols).
   */
  reconstruct(
    shifts: Float32Array,
    factor: number,
    flip: PhaseFlipSpec,
  ): Promise<[Float64Array, Float64Array]>;
  /** Resolves when all recorded work is done (the pipeline waits once per stage, so stage times are honest). */
  flush(): Promise<void>;
  dispose(): void;
}
