/**
 * The tcBF memory plan, computed before any allocation (as src/gpu/load-plan.ts does for the load): the spectra
 * of all bright-field images, packed two real images per complex float32 slot of rows x cols (docs/tcbf.md), in
 * as few buffers as the binding limit allows, a correlation scratch of `batch` images, the upsampled
 * accumulators, and small per-image tables.
 */
import { StemflowError } from '../../errors.ts';

export interface TcbfPlanRequest {
  count: number;
  rows: number;
  cols: number;
  /** Largest upsampling factor of a reconstruction. */
  factor: number;
  /** Filters per reconstruction (default 2: tcBF and phase flip). */
  filters?: number;
  maxBindingBytes: number;
  maxBufferBytes: number;
  /** Refuse plans above this many bytes (default: no limit beyond the device's). */
  budgetBytes?: number;
  /** Correlation scratch, bytes (default 256 MiB). */
  scratchBytes?: number;
}

export interface TcbfPlan {
  /** Bytes of one complex slot (two images). */
  imageBytes: number;
  /** Even. */
  imagesPerBuffer: number;
  /** Images in each spectra buffer. */
  spectraImages: number[];
  spectraBytes: number;
  /** Images per correlation batch (even). */
  batch: number;
  scratchBytes: number;
  /** Accumulator plus one output per filter, at the largest factor. */
  fineBytes: number;
  tableBytes: number;
  totalBytes: number;
}

export function planTcbf(req: TcbfPlanRequest): TcbfPlan {
  const { count, rows, cols, factor } = req;
  const imageBytes = rows * cols * 8;
  const limit = Math.min(req.maxBindingBytes, req.maxBufferBytes);
  const slotsPerBuffer = Math.floor(limit / imageBytes);
  const imagesPerBuffer = 2 * slotsPerBuffer;
  if (slotsPerBuffer < 1) {
    throw new StemflowError(
      'budget',
      `One ${rows} x ${cols} complex image needs ${imageBytes} bytes; this GPU binds at most ${limit} bytes.`,
    );
  }
  const fine = rows * cols * factor * factor * 8;
  if (fine > limit) {
    throw new StemflowError('budget', `An upsampled image (x${factor}) needs ${fine} bytes, above ${limit}.`);
  }
  const spectraImages: number[] = [];
  for (let first = 0; first < count; first += imagesPerBuffer)
    spectraImages.push(Math.min(imagesPerBuffer, count - first));
  const spectraBytes = spectraImages.reduce((sum, n) => sum + Math.ceil(n / 2) * imageBytes, 0);
  const batchSlots = Math.max(
    1,
    Math.min(Math.ceil(count / 2), slotsPerBuffer, Math.floor((req.scratchBytes ?? 2 ** 28) / imageBytes)),
  );
  const batch = 2 * batchSlots;
  const scratchBytes = batchSlots * imageBytes;
  const fineBytes = fine * (1 + (req.filters ?? 2)) + fine;
  const tableBytes = count * (4 + 4 + 16 + 8 + 16) + 4 * (rows + cols) + imageBytes;
  const totalBytes = spectraBytes + scratchBytes + fineBytes + tableBytes;
  if (req.budgetBytes !== undefined && totalBytes > req.budgetBytes) {
    throw new StemflowError(
      'budget',
      `tcBF needs ${(totalBytes / 2 ** 30).toFixed(2)} GiB on the GPU (spectra ${(spectraBytes / 2 ** 30).toFixed(2)} GiB for ${count} images of ${rows} x ${cols}), above the budget of ${(req.budgetBytes / 2 ** 30).toFixed(2)} GiB.`,
    );
  }
  return {
    imageBytes,
    imagesPerBuffer,
    spectraImages,
    spectraBytes,
    batch,
    scratchBytes,
    fineBytes,
    tableBytes,
    totalBytes,
  };
}
