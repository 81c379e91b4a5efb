// Probe (H200, 2026-11-30): how fast the host gets bytes from the page cache into mapped WebGPU staging, the path
// every load, conversion and verification uses. Reads a file with 16 threads (pread, 4 MiB a read) into plain
// memory and into MAP_WRITE staging; then the verifier's cycle (read a piece, unmap, GPU copy, mapAsync again)
// with one to three slots; then what making staging costs. Figures in docs/performance.md.
// Run: UV_THREADPOOL_SIZE=16 bash .gpu-kit/enter.sh node scripts/h200-staging-probe.mjs
import { open } from 'node:fs/promises';
import { create, globals } from 'webgpu';

Object.assign(globalThis, globals);
const gpu = create([]);
const adapter = await gpu.requestAdapter();
const device = await adapter.requestDevice({
  requiredLimits: { maxBufferSize: adapter.limits.maxBufferSize },
});
const FILE = Number(process.env.FILE ?? 2 ** 32);
const READ = 4 << 20;
const path = '/tmp/h200-staging-probe.bin';
{
  const h = await open(path, 'w');
  const block = new Uint8Array(1 << 26).fill(3);
  for (let at = 0; at < FILE; at += block.length) await h.write(block, 0, block.length, at);
  await h.close();
}
const file = await open(path, 'r');
const readRange = async (into, at) => {
  let done = 0;
  while (done < into.length) {
    const { bytesRead } = await file.read(into, done, into.length - done, at + done);
    done += bytesRead;
  }
};
/** One piece, as concurrent reads of READ bytes. */
const readPiece = (into, at) => {
  const reads = [];
  for (let o = 0; o < into.length; o += READ) reads.push(readRange(into.subarray(o, o + READ), at + o));
  return Promise.all(reads);
};
const W = GPUBufferUsage.MAP_WRITE | GPUBufferUsage.COPY_SRC;
const staging = (bytes) =>
  device.createBuffer({ size: Math.ceil(bytes / 4) * 4, usage: W, mappedAtCreation: true });
const gbps = (bytes, ms) => (bytes / ms / 1e6).toFixed(1);

// 1. Reads alone: pieces of P bytes, k pieces in flight, into plain memory or mapped staging (touched once first).
for (const [P, k, kind] of [
  [71e6, 1, 'mapped'],
  [71e6, 2, 'mapped'],
  [283e6, 1, 'mapped'],
  [71e6, 2, 'plain'],
  [283e6, 1, 'plain'],
]) {
  const targets = Array.from({ length: k }, () =>
    kind === 'mapped' ? new Uint8Array(staging(P).getMappedRange(), 0, P) : new Uint8Array(P),
  );
  for (const t of targets) t.fill(0);
  const n = Math.floor(FILE / P);
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    targets.map(async (into) => {
      while (next < n) {
        const i = next++;
        await readPiece(into, i * P);
      }
    }),
  );
  const ms = performance.now() - t0;
  console.log(
    `reads alone into ${kind}: ${(P / 1e6).toFixed(0)} MB pieces, ${k} in flight: ${gbps(n * P, ms)} GB/s`,
  );
}

// 2. The verifier's cycle: read into a slot, unmap, copy to a device buffer, mapAsync the slot again.
const sink = [0, 1].map(() =>
  device.createBuffer({ size: 300e6, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST }),
);
for (const [P, k] of [
  [71e6, 2],
  [71e6, 3],
  [142e6, 1],
  [283e6, 1],
]) {
  const slots = Array.from({ length: k }, () => ({ buffer: staging(P), ready: Promise.resolve() }));
  const n = Math.floor(FILE / P);
  let readMs = 0;
  const stage = (i) => {
    const slot = slots[i % k];
    return (async () => {
      await slot.ready;
      const into = new Uint8Array(slot.buffer.getMappedRange(), 0, P);
      const t = performance.now();
      await readPiece(into, i * P);
      readMs += performance.now() - t;
      return slot;
    })();
  };
  const t0 = performance.now();
  const staged = [];
  for (let i = 0; i < k; i++) staged.push(stage(i));
  for (let i = 0; i < n; i++) {
    const slot = await staged[i];
    slot.buffer.unmap();
    const encoder = device.createCommandEncoder();
    encoder.copyBufferToBuffer(slot.buffer, 0, sink[i % 2], 0, slot.buffer.size);
    device.queue.submit([encoder.finish()]);
    slot.ready = slot.buffer.mapAsync(GPUMapMode.WRITE);
    if (staged.length < n) staged.push(stage(staged.length));
  }
  await device.queue.onSubmittedWorkDone();
  const ms = performance.now() - t0;
  console.log(
    `read, unmap, copy, map again: ${(P / 1e6).toFixed(0)} MB pieces, ${k} slots: ${gbps(n * P, ms)} GB/s (a read ${(readMs / n).toFixed(1)} ms)`,
  );
  for (const s of slots) {
    await s.ready;
    s.buffer.destroy();
  }
}

// 3. Making staging: mapped at creation, or created and then mapped; and a MAP_READ readback.
for (const bytes of [2 ** 28, 2 ** 30]) {
  let t = performance.now();
  const a = staging(bytes);
  const mappedAtCreation = performance.now() - t;
  t = performance.now();
  const b = device.createBuffer({ size: bytes, usage: W });
  await b.mapAsync(GPUMapMode.WRITE);
  const thenMapped = performance.now() - t;
  t = performance.now();
  const c = device.createBuffer({ size: bytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  await c.mapAsync(GPUMapMode.READ);
  const readback = performance.now() - t;
  console.log(
    `${bytes >> 20} MiB: MAP_WRITE mapped at creation ${mappedAtCreation.toFixed(1)} ms, created then mapped ${thenMapped.toFixed(1)} ms; MAP_READ created then mapped ${readback.toFixed(1)} ms`,
  );
  for (const x of [a, b, c]) x.destroy();
  await device.queue.onSubmittedWorkDone();
}
process.exit(0);
