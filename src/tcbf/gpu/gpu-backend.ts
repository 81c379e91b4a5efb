/**
 * The tcBF backend on WebGPU: spectra of all bright-field images stay on the GPU (planned by `planTcbf`);
 * each operation records its passes into one command buffer and waits once, for its small result.
 */

import { readBuffer } from '../../compute/readback.ts';
import { bufferRows } from '../../gpu/resident-index.ts';
import { type ResidentLayout, residentParts } from '../../gpu/resident-layout.ts';
import type { TcbfBackend } from '../backend.ts';
import type { TcbfGrid } from '../grid.ts';
import { createFftPass } from './fft-pass.ts';
import { createGatherPass } from './gather-pass.ts';
import { createPeakPass } from './peak-pass.ts';
import { createPhaseFlipPass } from './phase-flip-pass.ts';
import { planTcbf, type TcbfPlan } from './plan.ts';
import { createShiftSumPass } from './shift-sum-pass.ts';
import { createSpectrumProductPass } from './spectrum-product-pass.ts';

export interface GpuBackendInput {
  device: GPUDevice;
  layout: ResidentLayout;
  resident: readonly GPUBuffer[];
  pixels: Uint32Array;
  invMean: Float32Array;
  grid: TcbfGrid;
  /** Largest upsampling factor used (default 2). */
  factor?: number;
  budgetBytes?: number;
  /** Tests: caps the bytes per spectra buffer and of the correlation scratch (forces several of each). */
  bufferBytesLimit?: number;
  scratchBytes?: number;
}

export interface GpuBackend extends TcbfBackend {
  readonly plan: TcbfPlan;
}

export function createGpuBackend(input: GpuBackendInput): GpuBackend {
  const { device, layout, grid, pixels } = input;
  const { rows, cols } = grid;
  const hw = rows * cols;
  const count = pixels.length;
  const parts = residentParts(layout, input.resident);
  const plan = planTcbf({
    count,
    rows,
    cols,
    factor: input.factor ?? 2,
    maxBindingBytes: Math.min(
      device.limits.maxStorageBufferBindingSize,
      input.bufferBytesLimit ?? Number.POSITIVE_INFINITY,
    ),
    maxBufferBytes: device.limits.maxBufferSize,
    budgetBytes: input.budgetBytes,
    scratchBytes: input.scratchBytes,
  });
  const STORAGE = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC;
  const owned: GPUBuffer[] = [];
  const buffer = (label: string, size: number) => {
    const b = device.createBuffer({ label, size: Math.max(16, Math.ceil(size / 4) * 4), usage: STORAGE });
    owned.push(b);
    return b;
  };
  const upload = (label: string, data: ArrayBufferView<ArrayBuffer>) => {
    const b = buffer(label, data.byteLength);
    device.queue.writeBuffer(b, 0, data);
    return b;
  };
  const fft = createFftPass(device);
  const gather = createGatherPass(device, layout.elemSize);
  const product = createSpectrumProductPass(device);
  const peak = createPeakPass(device);
  const shiftSumPass = createShiftSumPass(device);
  const phaseFlipPass = createPhaseFlipPass(device);
  let spectra: GPUBuffer[] = [];
  const firstOf = (sb: number) => sb * plan.imagesPerBuffer;
  const shiftsBuffer = buffer('tcbf shifts', 16 * count);
  const expectedBuffer = buffer('tcbf expected', 8 * count);
  const peaksBuffer = buffer('tcbf peaks', 16 * count);
  const factorBuffer = buffer('tcbf correlation factor', plan.imageBytes);
  const scratch = buffer('tcbf correlation scratch', plan.scratchBytes);

  const submit = (record: (encoder: GPUCommandEncoder) => GPUBuffer[]) => {
    const encoder = device.createCommandEncoder({ label: 'tcbf' });
    const params = record(encoder);
    device.queue.submit([encoder.finish()]);
    for (const p of params) p.destroy();
  };
  const complex32 = (values: Float64Array) => Float32Array.from(values);
  const encodeShiftSum = (
    encoder: GPUCommandEncoder,
    shifts: Float32Array,
    factor: number,
    acc: GPUBuffer,
  ) => {
    device.queue.writeBuffer(shiftsBuffer, 0, shifts);
    return spectra.map((s, sb) =>
      shiftSumPass.encode(
        encoder,
        s,
        plan.spectraImages[sb],
        shiftsBuffer,
        firstOf(sb),
        acc,
        rows,
        cols,
        factor,
        sb === 0,
      ),
    );
  };

  return {
    count,
    rows,
    cols,
    plan,
    async prepare() {
      // Allocated once; a repeated prepare rebuilds the spectra in place.
      if (!spectra.length)
        spectra = plan.spectraImages.map((n, sb) =>
          buffer(`tcbf spectra ${sb}`, Math.ceil(n / 2) * plan.imageBytes),
        );
      const shared = {
        pixels: upload('tcbf pixels', Uint32Array.from(pixels)),
        invMean: upload('tcbf inverse means', Float32Array.from(input.invMean)),
        taper: upload('tcbf taper', Float32Array.from([...grid.taperRow, ...grid.taperCol])),
        scanRows: grid.scanRows,
        scanCols: grid.scanCols,
        rows,
        cols,
        total: count,
      };
      submit((encoder) => {
        const params: GPUBuffer[] = [];
        let start = 0;
        while (start < count) {
          const rb = Math.floor(pixels[start] / layout.pixelsPerBuffer);
          const sb = Math.floor(start / plan.imagesPerBuffer);
          let end = start + 1;
          while (
            end < count &&
            Math.floor(pixels[end] / layout.pixelsPerBuffer) === rb &&
            Math.floor(end / plan.imagesPerBuffer) === sb
          ) {
            end++;
          }
          params.push(
            gather.encode(encoder, shared, {
              resident: parts.lo[rb],
              planes:
                parts.hi && parts.hot
                  ? {
                      hi: parts.hi[rb],
                      hot: parts.hot,
                      slotTable: parts.slotTable ?? undefined,
                      hotWordsPerPixel: layout.hotWordsPerPixel,
                      segmentFrames: layout.segmentFrames,
                      slotFrames: layout.slotFrames,
                      segments: layout.segments,
                    }
                  : undefined,
              rowFirstPixel: rb * layout.pixelsPerBuffer,
              wordsPerPixel: layout.wordsPerPixel,
              bufferRows: bufferRows(layout, rb),
              tileWords: layout.tileWords,
              listStart: start,
              count: end - start,
              out: spectra[sb],
              outFirst: firstOf(sb),
            }),
          );
          start = end;
        }
        spectra.forEach((s, sb) => {
          params.push(
            ...fft.encode2d(encoder, s, 0, Math.ceil(plan.spectraImages[sb] / 2), rows, cols, false),
          );
        });
        return params;
      });
      for (const b of [shared.pixels, shared.invMean, shared.taper]) release(b);
    },
    async shiftSum(shifts, factor) {
      const acc = buffer('tcbf shift-sum', hw * factor * factor * 8);
      try {
        submit((encoder) => encodeShiftSum(encoder, shifts, factor, acc));
        const bytes = await readBuffer(device, acc, 0, acc.size);
        return Float64Array.from(new Float32Array(bytes.buffer, 0, 2 * hw * factor * factor));
      } finally {
        release(acc);
      }
    },
    async correlate(spectrum, expected, radius) {
      device.queue.writeBuffer(factorBuffer, 0, complex32(spectrum));
      device.queue.writeBuffer(expectedBuffer, 0, expected);
      submit((encoder) => {
        const params: GPUBuffer[] = [];
        spectra.forEach((s, sb) => {
          const images = plan.spectraImages[sb];
          for (let local = 0; local < images; local += plan.batch) {
            // Packed pairs: IFFT(Z F) = c_2p + i c_2p+1, so the product and the FFT run on slots.
            const n = Math.min(plan.batch, images - local);
            const slots = Math.ceil(n / 2);
            params.push(product.encode(encoder, s, (local / 2) * hw, slots, hw, factorBuffer, scratch));
            params.push(...fft.encode2d(encoder, scratch, 0, slots, rows, cols, true));
            params.push(
              peak.encode(
                encoder,
                scratch,
                expectedBuffer,
                peaksBuffer,
                firstOf(sb) + local,
                n,
                rows,
                cols,
                radius,
              ),
            );
          }
        });
        return params;
      });
      const bytes = await readBuffer(device, peaksBuffer, 0, 16 * count);
      return Float64Array.from(new Float32Array(bytes.buffer, 0, 4 * count));
    },
    async reconstruct(shifts, factor, flip) {
      const fr = rows * factor;
      const fc = cols * factor;
      const fine = fr * fc * 8;
      const acc = buffer('tcbf reconstruction', fine);
      const flipped = buffer('tcbf phase flip', fine);
      const terms = upload(
        'tcbf phase-flip terms',
        flip.terms.length ? Float32Array.from(flip.terms) : new Float32Array(4),
      );
      try {
        submit((encoder) => {
          const params = encodeShiftSum(encoder, shifts, factor, acc);
          params.push(phaseFlipPass.encode(encoder, acc, terms, flipped, fr, fc, flip));
          for (const image of [acc, flipped])
            params.push(...fft.encode2d(encoder, image, 0, 1, fr, fc, true));
          return params;
        });
        const images: Float64Array[] = [];
        for (const image of [acc, flipped]) {
          const values = new Float32Array((await readBuffer(device, image, 0, fine)).buffer, 0, 2 * fr * fc);
          const real = new Float64Array(fr * fc);
          for (let i = 0; i < real.length; i++) real[i] = values[2 * i];
          images.push(real);
        }
        return images as [Float64Array, Float64Array];
      } finally {
        for (const b of [acc, flipped, terms]) release(b);
      }
    },
    flush() {
      return device.queue.onSubmittedWorkDone();
    },
    dispose() {
      for (const b of owned) b.destroy();
      owned.length = 0;
      spectra = [];
      fft.destroy();
    },
  };

  function release(b: GPUBuffer) {
    b.destroy();
    const i = owned.indexOf(b);
    if (i >= 0) owned.splice(i, 1);
  }
}
