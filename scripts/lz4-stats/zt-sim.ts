// Counts, over the benchmark's blocks (src/bench/synthetic.ts, 192 x 192 uint16), how the `zt` decode's noted quads
// of bit planes (docs/performance.md, twenty-fourth session; common/bslz4-multi-copy.wgsl) compare with the quads
// that truly hold a nonzero byte, which `zp` reads from the block (plane_quads):
// - a literal or match word is noted when the bytes stored in it so far are nonzero (put_bytes' merged word);
// - a pattern match (offset 1 to 3) notes its whole byte range unless its pattern is zero.
// A noted quad that is zero would send a block below 256 to the byte-wise unshuffle instead of `ba`.
// Run (from the project root):
//   npx esbuild scripts/lz4-stats/zt-sim.ts --bundle --platform=node --format=esm --outfile=/tmp/zt-sim.mjs
//   node /tmp/zt-sim.mjs
import { generateSynthetic } from '../../src/bench/synthetic';
import { bitshuffle } from '../../src/codec/bitshuffle';
import { bslz4Parse } from '../../src/kernels/bslz4-parse';

const CAP = 256;
const FRAMES = 64;
const acq = generateSynthetic({ scan: [16, 16], detector: 192, distinct: FRAMES, seed: 20261129 });
let blocks = 0;
let differing = 0;
let baTrue = 0;
let baNoted = 0;
let trackedWords = 0;
let patternWords = 0;
const be32 = (b: Uint8Array, i: number) =>
  ((b[i] << 24) | (b[i + 1] << 16) | (b[i + 2] << 8) | b[i + 3]) >>> 0;

for (let f = 0; f < FRAMES; f++) {
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
  const blockBytes = be32(chunk, 8);
  // The frame's bit-shuffled blocks, to check the walk below (it rebuilds each block from its list).
  const shuffled = bitshuffle(new Uint8Array(acq.values[f].buffer), 2, blockBytes / 2);
  let pos = 12;
  for (let b = 0; b < parsed.blocksPerFrame; b++) {
    const start = pos + 4;
    pos = start + be32(chunk, pos);
    if (parsed.info[2 * b + 1] !== 1) continue;
    blocks++;
    const out = new Uint8Array(blockBytes);
    const quadWords = blockBytes / 4 / 4; // 4 quads of planes (uint16)
    const quadOf = (w: number) => Math.min(3, Math.floor(w / quadWords));
    let noted = 0;
    let op = 0;
    // Stores bytes [a, a + values.length) one word at a time, as put_bytes does; notes nonzero merged words.
    const store = (a: number, values: number[], note: boolean) => {
      for (let i = 0; i < values.length; i++) out[a + i] = values[i];
      if (!note) return;
      for (let w = a >> 2; w * 4 < a + values.length; w++) {
        trackedWords++;
        let v = 0;
        for (let k = 0; k < 4; k++) if (w * 4 + k < a + values.length) v |= out[w * 4 + k];
        if (v !== 0) noted |= 1 << quadOf(w);
      }
    };
    for (let k = 0; k < parsed.info[2 * b]; k++) {
      const x = parsed.seqs[(b * CAP + k) * 2];
      const y = parsed.seqs[(b * CAP + k) * 2 + 1];
      const lit = x & 0xffff;
      const count = x >>> 16;
      const offset = y & 0xffff;
      const src = start + (y >>> 16);
      store(op, Array.from(chunk.subarray(src, src + lit)), true);
      op += lit;
      if (count === 0) continue;
      const bytes: number[] = [];
      for (let i = 0; i < count; i++) bytes.push(i < offset ? out[op - offset + i] : bytes[i - offset]);
      if (offset < 4) {
        patternWords += ((op + count - 1) >> 2) - (op >> 2) + 1;
        const p = bytes.slice(0, offset).some((v) => v !== 0);
        store(op, bytes, false);
        if (p) for (let w = op >> 2; w * 4 < op + count; w++) noted |= 1 << quadOf(w);
      } else {
        store(op, bytes, true);
      }
      op += count;
    }
    const expected = shuffled.subarray(b * blockBytes, (b + 1) * blockBytes);
    if (expected.some((v, i) => v !== out[i])) throw new Error(`frame ${f} block ${b}: rebuilt wrongly`);
    let live = 0;
    for (let w = 0; w < blockBytes / 4; w++)
      if (out[4 * w] | out[4 * w + 1] | out[4 * w + 2] | out[4 * w + 3]) live |= 1 << quadOf(w);
    const truth = live & ~1;
    const mine = noted & ~1;
    if ((truth & ~mine) !== 0) throw new Error(`frame ${f} block ${b}: a live quad not noted`);
    if (truth !== mine) differing++;
    if (truth >> 2 === 0) baTrue++;
    if (mine >> 2 === 0) baNoted++;
  }
}
console.log(
  `${blocks} listed blocks of ${FRAMES} frames: noted quads differ from the live ones in ${differing}; ` +
    `below 256 (ba) by the live quads ${baTrue}, by the noted ${baNoted}; words noted one at a time ` +
    `${(trackedWords / blocks).toFixed(1)} a block, pattern words ${(patternWords / blocks).toFixed(1)} a block`,
);
