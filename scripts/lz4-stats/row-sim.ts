// Counts, over the benchmark's blocks (src/bench/synthetic.ts, 192 x 192 uint16), what two copy schemes of the
// list decode cost a warp of 32 lanes (docs/performance.md, twenty-second session):
// - the sequence copy (common/bslz4-multi-walk.wgsl, list_epoch): every sequence's literals, then its match,
//   spread over the lanes that own their words; a warp pass per 32 words of each, at least one per part;
// - the `row` copy measured and dropped in the twenty-second session (commit ddaaf6b, reverted in 65e34c9;
//   common/bslz4-row-copy.wgsl there): a row of 32 words a pass, each lane
//   resolving its own word through the list (a literal, behind the row's barrier, or the byte its match copies,
//   one sequence further back each step); a row costs the warp its slowest lane's steps.
// Run (from the project root):
//   npx esbuild scripts/lz4-stats/row-sim.ts --bundle --platform=node --format=esm --outfile=/tmp/row-sim.mjs
//   node /tmp/row-sim.mjs
import { generateSynthetic } from '../../src/bench/synthetic';
import { bslz4Parse } from '../../src/kernels/bslz4-parse';

const CAP = 256;
const acq = generateSynthetic({ scan: [16, 16], detector: 192, distinct: 32, seed: 20261129 });
let blocks = 0;
let sequencePasses = 0;
let rowSteps = 0;
let laneSteps = 0;
const words: Record<string, number> = {};

/** Warp passes of a copy of `count` bytes from block byte `at` (its words owned by lanes w mod 32). */
const passes = (at: number, count: number) =>
  count === 0 ? 0 : Math.ceil((((at + count - 1) >> 2) - (at >> 2) + 1) / 32);

for (let f = 0; f < 32; f++) {
  const chunk = acq.chunks[f];
  const slot = new Uint8Array(Math.ceil(chunk.length / 4) * 4);
  slot.set(chunk);
  const parsed = bslz4Parse(slot, new Uint32Array([0, chunk.length]), {
    frameStart: 0,
    frameEnd: 1,
    pixels: 192 * 192,
    elemSize: 2,
    cap: CAP,
  });
  for (let b = 0; b < parsed.blocksPerFrame; b++) {
    if (parsed.info[2 * b + 1] !== 1) continue;
    const n = parsed.info[2 * b];
    blocks++;
    const lit: number[] = [];
    const count: number[] = [];
    const offset: number[] = [];
    const start: number[] = [];
    let op = 0;
    for (let k = 0; k < n; k++) {
      const x = parsed.seqs[(b * CAP + k) * 2];
      lit.push(x & 0xffff);
      count.push(x >>> 16);
      offset.push(parsed.seqs[(b * CAP + k) * 2 + 1] & 0xffff);
      start.push(op);
      sequencePasses += passes(op, lit[k]) + passes(op + lit[k], count[k]);
      op += lit[k] + count[k];
    }
    const seqAt = (q: number) => {
      let s = 0;
      while (s + 1 < n && start[s + 1] <= q) s++;
      return s;
    };
    let visible = 0;
    // Steps (list look-ups) to resolve block bytes [q, q + len), as row_span and row_byte did.
    const byteSteps = (q0: number) => {
      let q = q0;
      for (let steps = 0; ; steps++) {
        if (q < visible) return steps + 1;
        const s = seqAt(q);
        const litEnd = start[s] + lit[s];
        if (q < litEnd) return steps + 1;
        q = litEnd - offset[s] + ((q - litEnd) % offset[s]);
      }
    };
    const spanSteps = (q0: number, len: number) => {
      let q = q0;
      let steps = 0;
      for (;;) {
        if (q + len <= visible) return steps + 1;
        steps++;
        const s = seqAt(q);
        const litEnd = start[s] + lit[s];
        if (q + len <= litEnd) return steps;
        if (q < litEnd || q + len > litEnd + count[s]) break;
        const r = (q - litEnd) % offset[s];
        if (r + len > offset[s]) break;
        q = litEnd - offset[s] + r;
      }
      for (let k = 0; k < len; k++) steps += byteSteps(q + k);
      return steps;
    };
    for (let row = 0; row < 64; row++) {
      visible = row * 128;
      let slowest = 0;
      for (let lane = 0; lane < 32; lane++) {
        const a = (row * 32 + lane) * 4;
        const s = seqAt(a);
        const litEnd = start[s] + lit[s];
        let steps = 1;
        let kind = 'literal';
        if (a + 4 <= litEnd) {
          // One look-up: the word's literals.
        } else if (a >= litEnd && a + 4 <= litEnd + count[s]) {
          const o = offset[s];
          const r = (a - litEnd) % o;
          if (r + 4 <= o) {
            steps += spanSteps(litEnd - o + r, 4);
            kind = o >= 128 ? 'match, offset >= 128' : 'match, offset 4-127';
          } else if (o < 4) {
            steps += spanSteps(litEnd - o, o);
            kind = 'match, offset 1-3';
          } else {
            steps += spanSteps(litEnd - o + r, o - r) + spanSteps(litEnd - o, 4 - o + r);
            kind = 'match, across its period';
          }
        } else {
          for (let k = 0; k < 4; k++) steps += byteSteps(a + k);
          kind = 'across sequences';
        }
        words[kind] = (words[kind] ?? 0) + 1;
        laneSteps += steps;
        slowest = Math.max(slowest, steps);
      }
      rowSteps += slowest;
    }
  }
}
const share = Object.fromEntries(
  Object.entries(words).map(([k, v]) => [k, `${((100 * v) / (blocks * 2048)).toFixed(1)} %`]),
);
process.stdout.write(
  `${JSON.stringify(
    {
      blocks,
      sequenceCopyPassesPerBlock: sequencePasses / blocks,
      rowCopyWarpStepsPerBlock: rowSteps / blocks,
      rowCopyLaneStepsPerWord: laneSteps / (blocks * 2048),
      words: share,
    },
    null,
    2,
  )}\n`,
);
