// Writes 64 distinct synthetic frames of the benchmarks (src/bench/synthetic.ts, 192 x 192 uint16) raw and as
// our bitshuffle/LZ4 chunks, for scripts/lz4-stats/stats.py, which compresses the same raw frames with the
// bitshuffle library (liblz4) and compares the LZ4 sequences of both. Run (from the project root):
//   npx esbuild scripts/lz4-stats/gen.ts --bundle --platform=node --format=esm --outfile=/tmp/lz4-gen.mjs
//   node /tmp/lz4-gen.mjs /tmp/lz4-stats && /usr/bin/python3 scripts/lz4-stats/stats.py /tmp/lz4-stats
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateSynthetic } from '../../src/bench/synthetic';

const out = process.argv[2] ?? '/tmp/lz4-stats';
mkdirSync(out, { recursive: true });
const acq = generateSynthetic({ scan: [64, 64], detector: 192, distinct: 64, seed: 20261129 });
const cat = (parts: Uint8Array[]) => {
  const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    all.set(p, at);
    at += p.length;
  }
  return all;
};
const raw = acq.values.map((v) => new Uint8Array(v.buffer, v.byteOffset, 192 * 192 * 2));
writeFileSync(join(out, 'raw.bin'), cat(raw));
writeFileSync(join(out, 'ours.bin'), cat(acq.chunks));
writeFileSync(join(out, 'ours.json'), JSON.stringify(acq.chunks.map((c) => c.length)));
process.stdout.write(`${raw.length} frames written to ${out}\n`);
