/**
 * `stemflow bench memory`: the memory ceilings of this GPU under WebGPU, so a pass's GB/s can be read against
 * what the device and driver give, not against a datasheet. Each probe moves the same bytes of a buffer
 * (1 GiB by default, far larger than any cache) in one of the access patterns our passes use:
 *
 * - `read`: coalesced u32 reads, summed (the sum is checked);
 * - `read-vec4`: the same through vec4<u32> loads;
 * - `write`: coalesced u32 writes of a hash of the index; `write-vec4`: vec4<u32> writes;
 * - `copy`: a kernel copy, u32 (read + write); `copy-buffer`: copyBufferToBuffer;
 * - `write-rows-128`, `write-rows-512`: what the detector transpose does, each warp writing one contiguous
 *   segment of 128 (or 512) bytes into rows 256 KiB apart, consecutive warps in consecutive rows;
 * - `read-rows-128`: the transpose's read side: 128-byte segments of rows 72 KiB apart (frame rows);
 * - `read-vec4-rows-N`, `write-vec4-rows-N`: the same through vec4<u32> accesses (what the transpose's 16-byte
 *   form does), N-byte segments: 128 (blocks of 64 uint16 pixels, 128 frames' low bytes), 256 and 512.
 *
 * Every probe is checked exact (a sample of the written words against the hash, the read sums against the
 * CPU), then the probes are timed in interleaved rounds with GPU timestamps (median of the kept runs: the
 * second half of each round's, the first ones bring the clocks up).
 */
import { writeFile } from 'node:fs/promises';
import { readBuffer } from '../compute/readback';
import { acquireDevice } from '../gpu/device';
import { createGpuTimer } from '../gpu/gpu-timer';
import { nodeGpu } from '../gpu/node-gpu';

export interface BenchMemoryOptions {
  /** Bytes each probe moves (MiB; default 1024). */
  mib: number;
  repeat: number;
  rounds: number;
  json?: string;
}

const WG = 256;
const GROUPS_X = 32768;

/** Where word g of a probe lands: an expression of g in WGSL and the same in TypeScript. */
interface Pattern {
  name: string;
  wgsl: string;
  at: (g: number, words: number) => number;
}

const rows = (segmentWords: number, rowWords: number): Pattern => ({
  name: `rows-${segmentWords * 4}`,
  // Segment s = g / SEG goes to row s % R at column s / R (R = words / rowWords rows).
  wgsl: `let seg = g / ${segmentWords}u; let r = arrayLength(&buf) / ${rowWords}u;
    let at = (seg % r) * ${rowWords}u + (seg / r) * ${segmentWords}u + g % ${segmentWords}u;`,
  at: (g, words) => {
    const seg = Math.floor(g / segmentWords);
    const r = Math.floor(words / rowWords);
    return (seg % r) * rowWords + Math.floor(seg / r) * segmentWords + (g % segmentWords);
  },
});

/** The same for vec4 probes: `wgsl` places vec4 g; `at` places word g (vec4 g / 4, component g % 4). */
const rowsVec4 = (segmentVec4: number, rowVec4: number): Pattern => {
  const inner = rows(segmentVec4, rowVec4);
  return {
    name: `rows-${segmentVec4 * 16}`,
    wgsl: inner.wgsl,
    at: (g, words) => 4 * inner.at(Math.floor(g / 4), words / 4) + (g % 4),
  };
};

const hash = (g: number) => Math.imul(g, 2654435761) >>> 0;

function probeShader(kind: 'read' | 'read-vec4' | 'write' | 'write-vec4' | 'copy', at: string): string {
  const head = `@group(0) @binding(0) var<storage, read_write> buf: array<${kind.endsWith('vec4') ? 'vec4<u32>' : 'u32'}>;
@group(0) @binding(1) var<storage, read_write> aux: array<atomic<u32>>;
@group(0) @binding(2) var<storage, read_write> dst: array<u32>;
@compute @workgroup_size(${WG})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let g = gid.x + gid.y * ${GROUPS_X * WG}u;
  if (g >= arrayLength(&buf)) { return; }
  ${at}
`;
  switch (kind) {
    case 'read':
      // Only word 12345 is recorded: an atomic from every invocation would time the atomics (one address), not
      // the reads (the first runs measured 158 GB/s that way).
      return `${head}  let v = buf[at]; if (v == 0xdeadbeefu) { atomicAdd(&aux[0], 1u); } if (g == 12345u) { atomicMax(&aux[1], v); } }`;
    case 'read-vec4':
      return `${head}  let v = buf[at]; if (v.x + v.y + v.z + v.w == 0xdeadbeefu) { atomicAdd(&aux[0], 1u); } }`;
    case 'write':
      return `${head}  buf[at] = g * 2654435761u; }`;
    case 'write-vec4':
      return `${head}  let b = g * 4u; buf[at] = vec4<u32>(b, b + 1u, b + 2u, b + 3u) * 2654435761u; }`;
    case 'copy':
      return `${head}  dst[at] = buf[at]; }`;
  }
}

export async function benchMemory(o: BenchMemoryOptions): Promise<number> {
  const log = (s: string) => process.stdout.write(`${s}\n`);
  const ctx = await acquireDevice(nodeGpu(['disable-dawn-features=timestamp_quantization']));
  const { device } = ctx;
  const timer = createGpuTimer(ctx, 4096);
  if (!timer) throw new Error('bench memory needs timestamp-query');
  const bytes = o.mib * 2 ** 20;
  const words = bytes / 4;
  log(`adapter: ${ctx.adapter.vendor} ${ctx.adapter.architecture}; ${o.mib} MiB per probe`);
  const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
  const a = device.createBuffer({ size: bytes, usage });
  const b = device.createBuffer({ size: bytes, usage });
  const aux = device.createBuffer({ size: 16, usage });
  const linear: Pattern = { name: 'linear', wgsl: 'let at = g;', at: (g) => g };
  const probes: {
    name: string;
    kind: Parameters<typeof probeShader>[0] | 'copy-buffer';
    pattern: Pattern;
  }[] = [
    { name: 'read', kind: 'read', pattern: linear },
    { name: 'read-vec4', kind: 'read-vec4', pattern: linear },
    { name: 'read-rows-128', kind: 'read', pattern: rows(32, 18432) },
    { name: 'write', kind: 'write', pattern: linear },
    { name: 'write-vec4', kind: 'write-vec4', pattern: linear },
    { name: 'write-rows-128', kind: 'write', pattern: rows(32, 65536) },
    { name: 'write-rows-512', kind: 'write', pattern: rows(128, 65536) },
    { name: 'read-vec4-rows-128', kind: 'read-vec4', pattern: rowsVec4(8, 4608) },
    { name: 'read-vec4-rows-256', kind: 'read-vec4', pattern: rowsVec4(16, 4608) },
    { name: 'read-vec4-rows-512', kind: 'read-vec4', pattern: rowsVec4(32, 4608) },
    { name: 'write-vec4-rows-128', kind: 'write-vec4', pattern: rowsVec4(8, 16384) },
    { name: 'write-vec4-rows-256', kind: 'write-vec4', pattern: rowsVec4(16, 16384) },
    { name: 'copy', kind: 'copy', pattern: linear },
    { name: 'copy-buffer', kind: 'copy-buffer', pattern: linear },
  ];
  // One explicit layout (an 'auto' layout would drop the bindings a probe does not use).
  const entry = (binding: number): GPUBindGroupLayoutEntry => ({
    binding,
    visibility: GPUShaderStage.COMPUTE,
    buffer: { type: 'storage' },
  });
  const bindLayout = device.createBindGroupLayout({ entries: [0, 1, 2].map(entry) });
  const layout = device.createPipelineLayout({ bindGroupLayouts: [bindLayout] });
  const bind = device.createBindGroup({
    layout: bindLayout,
    entries: [a, aux, b].map((buffer, binding) => ({ binding, resource: { buffer } })),
  });
  const encoders = probes.map((p) => {
    if (p.kind === 'copy-buffer') return (e: GPUCommandEncoder) => e.copyBufferToBuffer(a, 0, b, 0, bytes);
    const module = device.createShaderModule({ code: probeShader(p.kind, p.pattern.wgsl) });
    const pipeline = device.createComputePipeline({ layout, compute: { module, entryPoint: 'main' } });
    const threads = p.kind.endsWith('vec4') ? words / 4 : words;
    const groups = Math.ceil(threads / WG);
    return (e: GPUCommandEncoder) => {
      const pass = e.beginComputePass();
      pass.setPipeline(pipeline);
      pass.setBindGroup(0, bind);
      pass.dispatchWorkgroups(Math.min(groups, GROUPS_X), Math.ceil(groups / GROUPS_X));
      pass.end();
    };
  });
  const run = (i: number) => {
    const e = device.createCommandEncoder();
    encoders[i](e);
    device.queue.submit([e.finish()]);
  };

  // Exactness: each write leaves the hash of the index at its place; the reads see it; the copies copy it.
  const sample = [0, 1, 31, 32, 12345, words >> 1, words - 1];
  const checks: Record<string, boolean> = {};
  const wordAt = async (buffer: GPUBuffer, w: number) =>
    new Uint32Array((await readBuffer(device, buffer, w * 4, 4)).buffer)[0];
  for (const [i, p] of probes.entries()) {
    if (!p.kind.startsWith('write')) continue;
    device.queue.writeBuffer(a, 0, new Uint32Array(4096));
    run(i);
    let ok = true;
    for (const g of sample) ok &&= (await wordAt(a, p.pattern.at(g, words))) === hash(g);
    checks[p.name] = ok;
  }
  // The linear write again: the copies and the read then see the hash of each index at that index.
  run(probes.findIndex((p) => p.name === 'write'));
  for (const [i, p] of probes.entries()) {
    if (p.kind !== 'copy' && p.kind !== 'copy-buffer') continue;
    device.queue.writeBuffer(b, 0, new Uint32Array(4096));
    run(i);
    let ok = true;
    for (const g of sample) ok &&= (await wordAt(b, g)) === hash(g);
    checks[p.name] = ok;
  }
  // The read probe's second counter holds word 12345's value.
  device.queue.writeBuffer(aux, 0, new Uint32Array(4));
  run(probes.findIndex((p) => p.name === 'read'));
  checks.read = new Uint32Array((await readBuffer(device, aux, 0, 8)).buffer)[1] === hash(12345);

  const runs: number[][] = probes.map(() => []);
  for (let round = 0; round < o.rounds; round++) {
    for (const [i] of probes.entries()) {
      const e = device.createCommandEncoder();
      for (let r = 0; r < o.repeat; r++) {
        timer.mark(e, 'run');
        encoders[i](e);
      }
      timer.mark(e, 'end');
      device.queue.submit([e.finish()]);
      const marks = await timer.read();
      timer.reset();
      const times = marks.slice(1).map((m, k) => m.ms - marks[k].ms);
      runs[i].push(...times.slice(Math.floor(times.length / 2)));
    }
  }
  const report = probes.map((p, i) => {
    const sorted = [...runs[i]].sort((x, y) => x - y);
    const ms = sorted[Math.floor(sorted.length / 2)];
    const moved = p.kind === 'copy' || p.kind === 'copy-buffer' ? 2 * bytes : bytes;
    return { name: p.name, ms, minMs: sorted[0], GBps: moved / (ms * 1e6), exact: checks[p.name] ?? null };
  });
  for (const r of report) {
    log(
      `${r.name.padEnd(16)} ${r.ms.toFixed(3)} ms (best ${r.minMs.toFixed(3)})  ${r.GBps.toFixed(0)} GB/s${r.exact === null ? '' : r.exact ? '  exact' : '  NOT EXACT'}`,
    );
  }
  if (o.json)
    await writeFile(o.json, JSON.stringify({ bytes, repeat: o.repeat, rounds: o.rounds, report }, null, 2));
  timer.destroy();
  for (const x of [a, b, aux]) x.destroy();
  device.destroy();
  return Object.values(checks).every(Boolean) ? 0 : 1;
}
