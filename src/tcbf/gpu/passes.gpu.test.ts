/**
 * Parity of every tcBF WGSL pass with its CPU twin on the same input (float32 on the GPU, float64 on the CPU:
 * tolerances stated per test), and bit-identical repeats on the GPU.
 */
import { describe, expect } from 'vitest';
import { bufferRows } from '../../gpu/resident-index.ts';
import { planResidentLayout, residentParts } from '../../gpu/resident-layout.ts';
import { rng, sparseCounts } from '../../gpu/test-data.ts';
import { type GpuTestContext, withGpu } from '../../gpu/test-harness.ts';
import { compactResident, residentFromScan } from '../../kernels/detector-transpose.ts';
import { fft2dBatch, fftLines, rowPass } from '../kernels/fft.ts';
import { edgeTaper, tcbfGather } from '../kernels/tcbf-gather.ts';
import { tcbfPeak } from '../kernels/tcbf-peak.ts';
import { phaseFlipTerms, tcbfPhaseFlip, termsW } from '../kernels/tcbf-phase-flip.ts';
import { tcbfShiftSum } from '../kernels/tcbf-shift-sum.ts';
import { tcbfSpectrumProduct } from '../kernels/tcbf-spectrum-product.ts';
import { createFftPass } from './fft-pass.ts';
import { createGatherPass } from './gather-pass.ts';
import { createPeakPass } from './peak-pass.ts';
import { createPhaseFlipPass } from './phase-flip-pass.ts';
import { createShiftSumPass } from './shift-sum-pass.ts';
import { createSpectrumProductPass } from './spectrum-product-pass.ts';

function randomComplex(n: number, seed: number): Float32Array {
  const next = rng(seed);
  return Float32Array.from({ length: 2 * n }, () => next() / 2 ** 31 - 1);
}

function maxAbs(a: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]));
  return m;
}

function maxDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).toBe(b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

async function run(ctx: GpuTestContext, record: (encoder: GPUCommandEncoder) => GPUBuffer[]): Promise<void> {
  const encoder = ctx.device.createCommandEncoder();
  const params = record(encoder);
  ctx.device.queue.submit([encoder.finish()]);
  await ctx.device.queue.onSubmittedWorkDone();
  for (const p of params) p.destroy();
}

describe('tcBF passes: GPU = CPU twin (src/tcbf/kernels/<pass>.ts)', () => {
  withGpu(
    'fft = fftLines/fft2dBatch (fft.ts): batched 2-D forward and inverse, and 1024-point lines, within 1e-5 of the largest value',
    async (ctx) => {
      const fft = createFftPass(ctx.device);
      try {
        for (const [count, rows, cols] of [
          [3, 16, 32],
          [2, 64, 8],
        ]) {
          const input = randomComplex(count * rows * cols, rows + cols);
          for (const inverse of [false, true]) {
            const expected = Float64Array.from(input);
            fft2dBatch(expected, 0, count, rows, cols, inverse);
            const outputs: Float32Array[] = [];
            for (let repeat = 0; repeat < 2; repeat++) {
              const buffer = ctx.upload(input);
              await run(ctx, (e) => fft.encode2d(e, buffer, 0, count, rows, cols, inverse));
              outputs.push(await ctx.readBack(buffer, Float32Array));
            }
            expect(outputs[1]).toEqual(outputs[0]);
            expect(maxDiff(outputs[0], expected)).toBeLessThan(1e-5 * maxAbs(expected));
          }
        }
        // Long lines at an offset: rows of a 3 x 1024 batch starting at element 5.
        const input = randomComplex(5 + 3 * 1024, 99);
        const expected = Float64Array.from(input);
        const job = { ...rowPass(5, 1, 3, 1024, false) };
        fftLines(expected, job);
        const buffer = ctx.upload(input);
        await run(ctx, (e) => fft.encode(e, buffer, job));
        const out = await ctx.readBack(buffer, Float32Array);
        expect(Array.from(out.subarray(0, 10))).toEqual(Array.from(input.subarray(0, 10)));
        expect(maxDiff(out, expected)).toBeLessThan(1e-5 * maxAbs(expected));
      } finally {
        fft.destroy();
      }
    },
  );

  for (const tileFrames of [undefined, 128]) {
    withGpu(
      `tcbf-gather = tcbfGather: images from several resident buffers into two spectra buffers, within 1e-6 relative${tileFrames ? ', rows in tiles of 128 positions' : ''}`,
      async (ctx) => {
        const scanRows = 12;
        const scanCols = 20;
        const det = 16;
        const counts = sparseCounts(scanRows * scanCols, det, det, 5);
        // uint16 byte planes in 2 segments: outliers above 255 in one segment of some pixels only.
        for (const [s, p] of [
          [3, 17],
          [130, 38],
          [239, 255],
          [0, 120],
        ])
          counts[s * det * det + p] = 300 + 1000 * p;
        const layout = planResidentLayout({
          frames: scanRows * scanCols,
          pixels: det * det,
          elemSize: 2,
          maxBindingBytes: ctx.device.limits.maxStorageBufferBindingSize,
          pixelsPerBufferLimit: 40,
          segmentFrames: 128,
          tileFrames,
        });
        expect(layout.tileWords).toBe(tileFrames ? 32 : layout.wordsPerPixel);
        const words = residentFromScan(layout, counts);
        // The full high plane as the load writes it, and the compact one (hot segments only) after compaction.
        const compact = compactResident(layout, words);
        const pixels = Uint32Array.from([3, 17, 38, 39, 40, 41, 100, 119, 120, 200, 255]);
        const invMean = Float32Array.from(pixels, (p) => 1 / (1 + (p % 7)));
        const rows = 16;
        const cols = 32;
        const taperRow = edgeTaper(scanRows, rows, 3);
        const taperCol = edgeTaper(scanCols, cols, 3);
        const expected = tcbfGather({
          layout,
          resident: words,
          pixels,
          invMean,
          scanRows,
          scanCols,
          rows,
          cols,
          taperRow,
          taperCol,
        });
        const hw = rows * cols;
        const split = 6;
        // The second buffer starts dirty: the unpaired last image must zero its partner.
        const outs = [
          ctx.storage((split / 2) * hw * 8),
          ctx.upload(new Float32Array(Math.ceil((pixels.length - split) / 2) * hw * 2).fill(7)),
        ];
        const shared = {
          pixels: ctx.upload(pixels),
          invMean: ctx.upload(invMean),
          taper: ctx.upload(Float32Array.from([...taperRow, ...taperCol])),
          scanRows,
          scanCols,
          rows,
          cols,
          total: pixels.length,
        };
        const gather = createGatherPass(ctx.device, 2);
        for (const set of [
          { layout, words },
          { layout: compact.layout, words: compact.resident },
        ]) {
          const parts = residentParts(
            set.layout,
            set.words.map((w) => ctx.upload(w)),
          );
          for (const out of outs)
            ctx.device.queue.writeBuffer(out, 0, new Float32Array(out.size / 4).fill(7));
          await run(ctx, (e) => {
            const params: GPUBuffer[] = [];
            let start = 0;
            while (start < pixels.length) {
              const rb = Math.floor(pixels[start] / layout.pixelsPerBuffer);
              const sb = start < split ? 0 : 1;
              let end = start + 1;
              while (
                end < pixels.length &&
                Math.floor(pixels[end] / layout.pixelsPerBuffer) === rb &&
                (end < split ? 0 : 1) === sb
              )
                end++;
              params.push(
                gather.encode(e, shared, {
                  resident: parts.lo[rb],
                  planes: {
                    hi: parts.hi![rb],
                    hot: parts.hot!,
                    slotTable: parts.slotTable ?? undefined,
                    hotWordsPerPixel: layout.hotWordsPerPixel,
                    segmentFrames: layout.segmentFrames,
                    slotFrames: set.layout.slotFrames,
                    segments: layout.segments,
                  },
                  rowFirstPixel: rb * layout.pixelsPerBuffer,
                  wordsPerPixel: layout.wordsPerPixel,
                  bufferRows: bufferRows(layout, rb),
                  tileWords: layout.tileWords,
                  listStart: start,
                  count: end - start,
                  out: outs[sb],
                  outFirst: sb === 0 ? 0 : split,
                }),
              );
              start = end;
            }
            return params;
          });
          const got = new Float32Array(2 * Math.ceil(pixels.length / 2) * hw);
          got.set(await ctx.readBack(outs[0], Float32Array), 0);
          got.set(await ctx.readBack(outs[1], Float32Array), split * hw);
          expect(got.length).toBe(expected.length);
          for (let i = 0; i < got.length; i++) {
            expect(Math.abs(got[i] - expected[i])).toBeLessThanOrEqual(
              1e-6 * Math.max(1, Math.abs(expected[i])),
            );
          }
          // The padding is exactly zero; real counts reached the images.
          expect(got[2 * (scanCols + 1)]).toBe(0);
          expect(maxAbs(got)).toBeGreaterThan(1);
        }
        expect(compact.layout.high).toBe('slots');
      },
    );
  }

  withGpu('tcbf-spectrum-product = tcbfSpectrumProduct: within 1e-6 relative', async (ctx) => {
    const hw = 48;
    const src = randomComplex(7 + 5 * hw, 3);
    const factor = randomComplex(hw, 4);
    const expected = tcbfSpectrumProduct(Float64Array.from(src), 7, 5, Float64Array.from(factor), hw);
    const dst = ctx.storage(5 * hw * 8);
    const pass = createSpectrumProductPass(ctx.device);
    await run(ctx, (e) => [pass.encode(e, ctx.upload(src), 7, 5, hw, ctx.upload(factor), dst)]);
    expect(maxDiff(await ctx.readBack(dst, Float32Array), expected)).toBeLessThan(1e-6 * maxAbs(expected));
  });

  withGpu(
    'tcbf-peak = tcbfPeak: identical maxima (ties, wrap-around, windows), sub-pixel within 1e-5 px',
    async (ctx) => {
      const rows = 32;
      const cols = 16;
      const hw = rows * cols;
      const count = 6;
      const next = rng(21);
      // Packed pairs: image j is the real (j even) or imaginary (j odd) part of slot j / 2.
      const corr = new Float32Array(2 * (count / 2) * hw);
      const centres = [
        [3.3, -2.6],
        [-15.2, 7.4],
        [0.1, 0.2],
        [10.6, -7.9],
      ];
      for (let j = 0; j < count; j++) {
        for (let r = 0; r < rows; r++) {
          for (let c = 0; c < cols; c++) {
            let v = 0;
            if (j < centres.length) {
              const [pr, pc] = centres[j];
              const dr = ((((r - pr) % rows) + rows + rows / 2) % rows) - rows / 2;
              const dc = ((((c - pc) % cols) + cols + cols / 2) % cols) - cols / 2;
              v = Math.exp(-(dr * dr + dc * dc) / 4) + (next() % 1000) * 1e-6;
            } else if (j === 5) v = (r * cols + c) % 3 === 0 ? 1 : 0; // ties everywhere: lowest index wins
            corr[2 * ((j >> 1) * hw + r * cols + c) + (j & 1)] = v;
          }
        }
      }
      const expected = Float32Array.from([0, 0, 0, 0, 0, 0, 10.4, -7.6, 0, 0, 0, 0]);
      const peaks = ctx.storage(16 * (count + 2));
      const pass = createPeakPass(ctx.device);
      const corrBuffer = ctx.upload(corr);
      const expectedBuffer = ctx.upload(Float32Array.from([9, 9, 9, 9, ...expected]));
      for (const radius of [100, 2]) {
        const want = tcbfPeak(Float64Array.from(corr), count, rows, cols, expected, radius);
        const outputs: Float32Array[] = [];
        for (let repeat = 0; repeat < 2; repeat++) {
          await run(ctx, (e) => [
            pass.encode(e, corrBuffer, expectedBuffer, peaks, 2, count, rows, cols, radius),
          ]);
          outputs.push((await ctx.readBack(peaks, Float32Array)).subarray(8));
        }
        expect(outputs[1]).toEqual(outputs[0]);
        for (let j = 0; j < count; j++) {
          expect(Math.round(outputs[0][4 * j])).toBe(Math.round(want[4 * j]));
          expect(Math.abs(outputs[0][4 * j] - want[4 * j])).toBeLessThan(1e-5);
          expect(Math.abs(outputs[0][4 * j + 1] - want[4 * j + 1])).toBeLessThan(1e-5);
          expect(outputs[0][4 * j + 2]).toBe(Math.fround(want[4 * j + 2]));
          expect(outputs[0][4 * j + 3]).toBe(want[4 * j + 3]);
        }
        if (radius === 100) {
          expect(Math.abs(outputs[0][0] - 3.3)).toBeLessThan(0.1);
          expect(Math.abs(outputs[0][4] + 15.2)).toBeLessThan(0.1);
          expect(Array.from(outputs[0].subarray(20, 24))).toEqual([0, -0.5, 1, 1]);
        } else {
          // Window of +-2 around (10, -8): the peak at (10.6, -7.9).
          expect(Math.abs(outputs[0][12] - 10.6)).toBeLessThan(0.1);
        }
      }
    },
  );

  withGpu(
    'tcbf-shift-sum = tcbfShiftSum: packed pairs, shifts up to 40 px, factors 1 and 2, two buffers, within 1e-5 of the term sum',
    async (ctx) => {
      const rows = 16;
      const cols = 32;
      const hw = rows * cols;
      const count = 9;
      const spectra = randomComplex(Math.ceil(count / 2) * hw, 8);
      const next = rng(9);
      const shifts = new Float32Array(4 * count);
      for (let j = 0; j < count; j++) {
        shifts.set(
          [(next() / 2 ** 32 - 0.5) * 80, (next() / 2 ** 32 - 0.5) * 80, j === 4 ? 0 : 1 + (j % 3), 0],
          4 * j,
        );
      }
      const pass = createShiftSumPass(ctx.device);
      const split = 4;
      const a = ctx.upload(spectra.subarray(0, split * hw));
      const b = ctx.upload(spectra.subarray(split * hw));
      const shiftBuffer = ctx.upload(shifts);
      let termSum = 0;
      for (let j = 0; j < count; j++) termSum += shifts[4 * j + 2] * 1.5;
      for (const factor of [1, 2]) {
        const want = new Float64Array(2 * hw * factor * factor);
        tcbfShiftSum(
          { spectra: Float64Array.from(spectra), first: 0, count, shifts, rows, cols, factor },
          want,
          true,
        );
        const outputs: Float32Array[] = [];
        for (let repeat = 0; repeat < 2; repeat++) {
          const acc = ctx.storage(want.length * 4);
          await run(ctx, (e) => [
            pass.encode(e, a, split, shiftBuffer, 0, acc, rows, cols, factor, true),
            pass.encode(e, b, count - split, shiftBuffer, split, acc, rows, cols, factor, false),
          ]);
          outputs.push(await ctx.readBack(acc, Float32Array));
        }
        expect(outputs[1]).toEqual(outputs[0]);
        expect(maxDiff(outputs[0], want)).toBeLessThan(1e-5 * termSum);
      }
    },
  );

  withGpu(
    'tcbf-phase-flip = tcbfPhaseFlip: the same sign as the CPU away from zeros of sin chi, products within 1e-6',
    async (ctx) => {
      const fineRows = 64;
      const fineCols = 128;
      const spec = {
        terms: phaseFlipTerms({
          C10: 400,
          C12a: 30,
          C12b: -20,
          C30: 2e5,
          C32a: 5e3,
          C34b: 4e3,
          C50: 3e7,
          C56a: 1e7,
        }),
        lambda: 0.019687,
        extentRows: 32 * 0.8,
        extentCols: 64 * 0.8,
      };
      const acc = randomComplex(fineRows * fineCols, 12);
      const want = tcbfPhaseFlip(Float64Array.from(acc), fineRows, fineCols, spec);
      const out = ctx.storage(acc.byteLength);
      const pass = createPhaseFlipPass(ctx.device);
      const accBuffer = ctx.upload(acc);
      const termsBuffer = ctx.upload(spec.terms);
      const outputs: Float32Array[] = [];
      for (let repeat = 0; repeat < 2; repeat++) {
        await run(ctx, (e) => [pass.encode(e, accBuffer, termsBuffer, out, fineRows, fineCols, spec)]);
        outputs.push(await ctx.readBack(out, Float32Array));
      }
      expect(outputs[1]).toEqual(outputs[0]);
      let flips = 0;
      let near = 0;
      for (let r = 0; r < fineRows; r++) {
        for (let c = 0; c < fineCols; c++) {
          const Q = r * fineCols + c;
          const qr = (r < fineRows / 2 ? r : r - fineRows) / spec.extentRows;
          const qc = (c < fineCols / 2 ? c : c - fineCols) / spec.extentCols;
          const t = termsW(spec.terms, spec.lambda * qr, spec.lambda * qc) / spec.lambda;
          const f = t - Math.floor(t);
          if (Math.min(f, Math.abs(f - 0.5), 1 - f) < 1e-4) {
            near++;
            continue;
          }
          if (want[2 * Q] !== 0 && Math.sign(want[2 * Q]) !== Math.sign(acc[2 * Q])) flips++;
          for (const k of [0, 1]) {
            expect(Math.abs(outputs[0][2 * Q + k] - want[2 * Q + k])).toBeLessThanOrEqual(
              1e-6 * Math.abs(want[2 * Q + k]),
            );
          }
        }
      }
      // The filter does flip a good part of the grid, and few points lie near a zero of sin chi.
      expect(flips).toBeGreaterThan(1000);
      expect(near).toBeLessThan(20);
    },
  );
});
