import { mulberry32 } from '../util/prng';

/** Deterministic detector-like uint16 frames for archive tests and benchmarks: a bright disk, a sparse background and rare large counts. */
export function detectorFrames(
  frames: number,
  rows: number,
  cols: number,
  seed: number,
  max = 65535,
): Uint16Array {
  const next = mulberry32(seed);
  const rand = () => next() / 2 ** 32;
  const out = new Uint16Array(frames * rows * cols);
  for (let f = 0; f < frames; f++) {
    for (let r = 0; r < rows; r++) {
      for (let c = 0; c < cols; c++) {
        const d = Math.hypot(r - rows / 2, c - cols / 2);
        const lambda = d < rows / 5 ? 6 : 0.05;
        let v = 0;
        let p = Math.exp(-lambda);
        let s = p;
        const u = rand();
        while (u > s && v < 60) {
          v++;
          p *= lambda / v;
          s += p;
        }
        if (rand() < 0.001) v = Math.floor(rand() * max);
        out[(f * rows + r) * cols + c] = v;
      }
    }
  }
  return out;
}
