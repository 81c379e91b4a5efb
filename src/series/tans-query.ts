/**
 * CPU twin of src/shaders/tans-query.wgsl: masked sums straight from the tANS lanes of a record, without a
 * decoded tensor. Each detector pixel carries two mask bits (bit 0: accumulator A, bit 1: accumulator B), so
 * one decode gives two images (a full mask, or the pixels a delta adds and removes). A lane stops after the
 * last pixel any mask needs and is skipped when it holds none. Sums are exact integers.
 */
import { type LaneGeometry, sliceRange } from '../archive/lanes';
import type { RecordTables } from '../archive/record-tables';
import { decodeLane, LANE_OK } from '../archive/tans-decode';

/** Per slice: how many of its pixels a lane must decode (0 = skip the lane). */
export function neededPixels(bits: Uint8Array, g: LaneGeometry): Uint32Array {
  const need = new Uint32Array(g.slices);
  for (let s = 0; s < g.slices; s++) {
    const { first, count } = sliceRange(g, s);
    for (let i = count - 1; i >= 0; i--) {
      if (bits[first + i] !== 0) {
        need[s] = i + 1;
        break;
      }
    }
  }
  return need;
}

/**
 * Adds, for every frame of the record, the sums of accumulator A and B into `a` and `b` at
 * `frameBase + frame`. Returns the number of lanes that failed to decode (their frames are then incomplete).
 */
export function tansQuery(
  data: Uint32Array,
  offsets: Uint32Array,
  frames: number,
  g: LaneGeometry,
  t: RecordTables,
  bits: Uint8Array,
  a: Float64Array,
  b: Float64Array,
  frameBase: number,
): number {
  const need = neededPixels(bits, g);
  let failed = 0;
  for (let f = 0; f < frames; f++) {
    for (let s = 0; s < g.slices; s++) {
      if (need[s] === 0) continue;
      const lane = f * g.slices + s;
      const { first, count } = sliceRange(g, s);
      // A lane that fails adds nothing (the GPU drops its partial sums too).
      let sa = 0;
      let sb = 0;
      const err = decodeLane(
        data,
        offsets[lane],
        offsets[lane + 1],
        count,
        first,
        t,
        (i, v) => {
          const m = bits[first + i];
          if (m & 1) sa += v;
          if (m & 2) sb += v;
        },
        need[s],
      );
      if (err !== LANE_OK) {
        failed++;
        continue;
      }
      a[frameBase + f] += sa;
      b[frameBase + f] += sb;
    }
  }
  return failed;
}
