/**
 * The FFT grid of the bright-field images: the scan padded to powers of two, with a sin^2 edge taper so that
 * the padded images have no jump at the border (none when the scan is periodic, as in the simulator).
 */
import { StemflowError } from '../errors.ts';
import { edgeTaper } from './kernels/tcbf-gather.ts';

export interface TcbfGrid {
  scanRows: number;
  scanCols: number;
  rows: number;
  cols: number;
  taperRow: Float32Array;
  taperCol: Float32Array;
}

/** Largest FFT length of the WGSL pass (one line in workgroup memory). */
export const MAX_FFT_LENGTH = 1024;

export function tcbfGrid(scanRows: number, scanCols: number, taper: number): TcbfGrid {
  const pow2 = (n: number) => 2 ** Math.ceil(Math.log2(Math.max(2, n)));
  const rows = pow2(scanRows);
  const cols = pow2(scanCols);
  if (rows > MAX_FFT_LENGTH || cols > MAX_FFT_LENGTH) {
    throw new StemflowError(
      'unsupported',
      `tcBF handles scans up to ${MAX_FFT_LENGTH} x ${MAX_FFT_LENGTH} positions, not ${scanRows} x ${scanCols}.`,
    );
  }
  return {
    scanRows,
    scanCols,
    rows,
    cols,
    taperRow: edgeTaper(scanRows, rows, taper),
    taperCol: edgeTaper(scanCols, cols, taper),
  };
}
