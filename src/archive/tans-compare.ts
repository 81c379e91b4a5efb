/**
 * CPU twin of src/shaders/tans-compare.wgsl (the verify pass): decodes every lane of a record with `decodeLane`
 * (tans-decode.ts) and counts the values that differ from a reference, per block of frames, with the shader's
 * lane error codes. Parity test: gpu-verify.gpu.test.ts (through `cpuVerifier`, verify.ts).
 */
import { type LaneGeometry, sliceRange } from './lanes';
import type { RecordTables } from './record-tables';
import { decodeLane, LANE_OK } from './tans-decode';
import type { Values } from './tans-stats';

/**
 * Compare mode (the verify pass): decodes every lane and counts the values that differ from `reference`
 * (frame-major), per block of `blockFrames` frames. A failed lane counts all its values as mismatched
 * from the first one it could not produce, so a damaged archive can never verify.
 */
export function tansCompare(
  words: Uint32Array,
  offsets: Uint32Array,
  frames: number,
  g: LaneGeometry,
  t: RecordTables,
  reference: Values,
  blockFrames: number,
): { mismatches: Uint32Array; errors: Uint32Array } {
  const blocks = Math.ceil(frames / blockFrames);
  const mismatches = new Uint32Array(blocks);
  const errors = new Uint32Array(frames * g.slices);
  for (let f = 0; f < frames; f++) {
    const b = Math.floor(f / blockFrames);
    for (let s = 0; s < g.slices; s++) {
      const lane = f * g.slices + s;
      const { first, count } = sliceRange(g, s);
      const base = f * g.pixels + first;
      let produced = 0;
      const error = decodeLane(words, offsets[lane], offsets[lane + 1], count, first, t, (i, v) => {
        produced = i + 1;
        if (reference[base + i] !== v) mismatches[b]++;
      });
      errors[lane] = error;
      if (error !== LANE_OK) mismatches[b] += count - produced;
    }
  }
  return { mismatches, errors };
}
