/**
 * Products from the resident detector-major counts: exact virtual images of any binary mask (flagged
 * pixels removed), and the default BF / ABF / ADF detectors placed from the summed diffraction pattern.
 * Only the masked pixels' rows are read.
 */
import type { GpuContext } from '../gpu/device.ts';
import { createResidentVirtualImagePass } from '../gpu/passes/resident-virtual-image.ts';
import { groupPixelsByBuffer } from '../gpu/resident-index.ts';
import { annulus, type DetectorRegion, defaultGeometry, regionMask } from '../products/detector-geometry.ts';
import { maskPixelList } from '../products/frame-stats.ts';
import type { GpuLoad } from './gpu-load.ts';
import { createLiveImage, type LiveImage, u64PairsToFloat64 } from './live-image.ts';

export { u64PairsToFloat64 };

export interface VirtualImager {
  /** The exact virtual image (sum per scan position) of `mask` (1 = include); flagged pixels never count. */
  image(mask: Uint8Array): Promise<Float64Array>;
  /** Several images in one submission and one wait. */
  images(masks: Uint8Array[]): Promise<Float64Array[]>;
  /** GPU time of the pass for `mask` (no readback): `repeats` runs in one submission, ms per run. */
  gpuTime(mask: Uint8Array, repeats: number): Promise<number>;
  /** The live image of a mask being edited (mask-session.ts): persistent GPU buffers, exact steps. */
  readonly live: LiveImage;
  release(): void;
}

export function createVirtualImager(
  ctx: GpuContext,
  load: GpuLoad,
  flagged: Uint8Array | null,
  /** Benchmarks: slices and workgroup size of the virtual-image pass (resident-virtual-image.ts; defaults there). */
  options: { slices?: number; workgroupSize?: number } = {},
): VirtualImager {
  const { device } = ctx;
  const layout = load.plan.resident;
  const pass = createResidentVirtualImagePass(device, {
    elemSize: layout.elemSize,
    slices: options.slices,
    workgroupSize: options.workgroupSize,
  });
  const imageBytes = layout.frames * 8;
  const live = createLiveImage(device, load, pass, flagged);
  const images = async (masks: Uint8Array[]): Promise<Float64Array[]> => {
    const temporary: GPUBuffer[] = [];
    try {
      const encoder = device.createCommandEncoder({ label: 'virtual images' });
      const outputs = masks.map((mask) => {
        const pixels = maskPixelList(mask, flagged);
        const pixelList = device.createBuffer({
          label: 'mask pixels',
          size: Math.max(4, pixels.byteLength),
          usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST,
        });
        const image = device.createBuffer({
          label: 'virtual image',
          size: imageBytes,
          usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
        });
        temporary.push(pixelList, image);
        if (pixels.length > 0) device.queue.writeBuffer(pixelList, 0, pixels);
        const params = pass.encode(encoder, {
          layout,
          resident: load.resident,
          pixelList,
          groups: groupPixelsByBuffer(layout, pixels),
          image,
          clear: true,
        });
        temporary.push(...params);
        return image;
      });
      // One staging buffer and one wait for every image of the submission.
      const staging = device.createBuffer({
        label: 'virtual images readback',
        size: imageBytes * outputs.length,
        usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
      });
      temporary.push(staging);
      for (const [i, image] of outputs.entries()) {
        encoder.copyBufferToBuffer(image, 0, staging, i * imageBytes, imageBytes);
      }
      device.queue.submit([encoder.finish()]);
      await staging.mapAsync(GPUMapMode.READ);
      const words = new Uint32Array(staging.getMappedRange());
      const out = outputs.map((_, i) => u64PairsToFloat64(words, i * layout.frames * 2, layout.frames));
      staging.unmap();
      return out;
    } finally {
      for (const b of temporary) b.destroy();
    }
  };
  const gpuTime = async (mask: Uint8Array, repeats: number): Promise<number> => {
    const pixels = maskPixelList(mask, flagged);
    const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST;
    const pixelList = device.createBuffer({
      label: 'mask pixels',
      size: Math.max(4, pixels.byteLength),
      usage,
    });
    const image = device.createBuffer({
      label: 'virtual image',
      size: imageBytes,
      usage: usage | GPUBufferUsage.COPY_SRC,
    });
    const temporary = [pixelList, image];
    try {
      if (pixels.length > 0) device.queue.writeBuffer(pixelList, 0, pixels);
      await device.queue.onSubmittedWorkDone();
      const groups = groupPixelsByBuffer(layout, pixels);
      const encoder = device.createCommandEncoder({ label: 'virtual image timing' });
      for (let r = 0; r < repeats; r++)
        temporary.push(
          ...pass.encode(encoder, { layout, resident: load.resident, pixelList, groups, image, clear: true }),
        );
      const t = performance.now();
      device.queue.submit([encoder.finish()]);
      await device.queue.onSubmittedWorkDone();
      return (performance.now() - t) / repeats;
    } finally {
      for (const b of temporary) b.destroy();
    }
  };
  return {
    image: async (mask) => (await images([mask]))[0],
    images,
    gpuTime,
    live,
    release: () => live.release(),
  };
}

export interface DefaultDetectors {
  bf: DetectorRegion;
  abf: DetectorRegion;
  adf: DetectorRegion;
  masks: { bf: Uint8Array; abf: Uint8Array; adf: Uint8Array };
}

/** BF disk, ABF annulus (half to full BF radius) and ADF annulus, from the summed pattern (flagged excluded). */
export function defaultDetectors(
  dpSums: ArrayLike<number | bigint>,
  detector: [number, number],
  flagged: Uint8Array | null,
): DefaultDetectors {
  const [rows, cols] = detector;
  const sum = Float64Array.from(dpSums as ArrayLike<number>, Number);
  const g = defaultGeometry(sum, rows, cols, flagged ?? undefined);
  const abf = annulus(g.centre.cx, g.centre.cy, g.bfRadius / 2, g.bfRadius);
  return {
    bf: g.bf,
    abf,
    adf: g.adf,
    masks: {
      bf: regionMask(g.bf, rows, cols),
      abf: regionMask(abf, rows, cols),
      adf: regionMask(g.adf, rows, cols),
    },
  };
}
