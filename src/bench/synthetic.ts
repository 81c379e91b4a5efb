import { bslz4Encode } from '../codec/bslz4';
import { mulberry32 } from '../util/prng';

/**
 * A synthetic ARINA-like acquisition for benchmarks, generated where the benchmark runs: diffraction
 * frames that look like 4D-STEM (a bright-field disk whose centre drifts and whose content varies with the
 * scan, weaker Bragg disks, a diffuse background, Poisson counts, mostly zeros far out, rare counts far
 * above 255), each encoded as an HDF5 bitshuffle/LZ4 chunk. `distinct` frames are generated and the scan
 * repeats them, so generation does not dominate at 262,144 frames.
 */
export interface SyntheticOptions {
  scan: [number, number];
  detector: number;
  /** Distinct frames to generate (the scan cycles through them). */
  distinct: number;
  seed?: number;
}

export interface SyntheticAcquisition {
  scan: [number, number];
  detector: [number, number];
  frames: number;
  /** Encoded chunks of the distinct frames, and each one's decoded values. */
  chunks: Uint8Array[];
  values: Uint16Array[];
  /** Scan frame i uses distinct frame `i % chunks.length`. */
  chunkOf(frame: number): number;
  /** A pixel mask with a few flagged pixels (nonzero = flagged), as ARINA writes. */
  pixelMask: Uint32Array;
}

/** Deterministic uniform numbers in [0, 1) (mulberry32). */
export function prng(seed: number): () => number {
  const next = mulberry32(seed);
  return () => next() / 4294967296;
}

function poisson(lambda: number, random: () => number): number {
  if (lambda <= 0) return 0;
  if (lambda > 30) {
    // Normal approximation for large means (Box-Muller), clamped at zero.
    const u = Math.max(random(), 1e-12);
    const z = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
    return Math.max(0, Math.round(lambda + Math.sqrt(lambda) * z));
  }
  const limit = Math.exp(-lambda);
  let k = 0;
  let p = random();
  while (p > limit) {
    k++;
    p *= random();
  }
  return k;
}

export function generateSynthetic({
  scan,
  detector,
  distinct,
  seed = 1,
}: SyntheticOptions): SyntheticAcquisition {
  const random = prng(seed);
  const n = detector;
  const frames = scan[0] * scan[1];
  const count = Math.min(distinct, frames);
  const chunks: Uint8Array[] = [];
  const values: Uint16Array[] = [];
  const radius = n / 6;
  const bragg: [number, number][] = [];
  for (let i = -2; i <= 2; i++)
    for (let j = -2; j <= 2; j++)
      if (i || j) bragg.push([i * 0.9 * radius * 2 + j * 0.35 * radius, j * 0.9 * radius * 2]);
  const lambdaMap = new Float32Array(n * n);
  for (let k = 0; k < count; k++) {
    // Scan position this distinct frame stands for: spread over the scan so the content varies.
    const s = Math.floor((k * frames) / count);
    const sy = Math.floor(s / scan[1]) / scan[0];
    const sx = (s % scan[1]) / scan[1];
    const cx = n / 2 + 1.5 * Math.sin(2 * Math.PI * sx) + 0.3 * random();
    const cy = n / 2 + 1.5 * Math.cos(2 * Math.PI * sy) + 0.3 * random();
    const thickness = 0.5 + 0.5 * Math.sin(9 * sx + 4 * sy) * Math.cos(7 * sy - 3 * sx);
    const inside = 3 + 9 * thickness;
    const braggLevel = 0.4 + 1.6 * (1 - thickness);
    const bgScale = -1 / (n / 5);
    for (let y = 0; y < n; y++) {
      for (let x = 0; x < n; x++) {
        const dx = x - cx;
        const dy = y - cy;
        const r2 = dx * dx + dy * dy;
        let lambda = 0.05 * Math.exp(Math.sqrt(r2) * bgScale);
        if (r2 <= radius * radius)
          lambda += inside * (1 + 0.3 * Math.sin(dx * 0.7 + thickness * 5) * Math.cos(dy * 0.6));
        lambdaMap[y * n + x] = lambda;
      }
    }
    // Bragg disks: only their bounding boxes are visited.
    const br = radius * 0.8;
    for (const [bx, by] of bragg) {
      const level = braggLevel * Math.exp(-Math.hypot(bx, by) / n);
      const x0 = Math.max(0, Math.ceil(cx + bx - br));
      const x1 = Math.min(n - 1, Math.floor(cx + bx + br));
      const y0 = Math.max(0, Math.ceil(cy + by - br));
      const y1 = Math.min(n - 1, Math.floor(cy + by + br));
      for (let y = y0; y <= y1; y++) {
        for (let x = x0; x <= x1; x++) {
          const dx = x - cx - bx;
          const dy = y - cy - by;
          if (dx * dx + dy * dy <= br * br) lambdaMap[y * n + x] += level;
        }
      }
    }
    const frame = new Uint16Array(n * n);
    for (let p = 0; p < frame.length; p++) frame[p] = poisson(lambdaMap[p], random);
    // Rare large counts (cosmic-ray-like events), as real scans have: one in ~20 frames.
    if (random() < 0.05) frame[Math.floor(random() * frame.length)] = 256 + Math.floor(random() * 1600);
    values.push(frame);
    chunks.push(bslz4Encode(new Uint8Array(frame.buffer), 2));
  }
  const pixelMask = new Uint32Array(n * n);
  for (let i = 0; i < Math.max(1, Math.floor((n * n) / 4096)); i++)
    pixelMask[Math.floor(random() * n * n)] = 1 << (i % 5);
  return {
    scan,
    detector: [n, n],
    frames,
    chunks,
    values,
    chunkOf: (frame) => frame % count,
    pixelMask,
  };
}
