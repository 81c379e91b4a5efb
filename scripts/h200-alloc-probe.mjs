// Probe (H200): what creating, first using and freeing GPU memory costs under Dawn. 2026-11-29: ~20 GB of storage
// buffers as 10 x 2 GiB, 1 x 19.5 GiB and 40 x 0.5 GiB (two rounds). Thirteenth session: a set the size of the
// encoder's and the verifier's buffers (210 MB, first used by a partial clear, a whole clear or a 4-byte copy),
// and mapped memory: 64 MiB of staging with and without mappedAtCreation, a 64 MiB readback (three rounds).
// Run: bash .gpu-kit/enter.sh node scripts/h200-alloc-probe.mjs (figures in docs/performance.md).
import { create, globals } from 'webgpu';

Object.assign(globalThis, globals);
const gpu = create([]);
const adapter = await gpu.requestAdapter();
const device = await adapter.requestDevice({
  requiredLimits: {
    maxBufferSize: adapter.limits.maxBufferSize,
    maxStorageBufferBindingSize: adapter.limits.maxStorageBufferBindingSize,
  },
});
const U = GPUBufferUsage;
const usage = U.STORAGE | U.COPY_SRC | U.COPY_DST;
const GiB = 2 ** 30;
const MiB = 2 ** 20;
const small = device.createBuffer({ size: 256, usage: U.COPY_SRC | U.COPY_DST });
const ms = (t) => performance.now() - t;
/** Submits `op` on every buffer and waits for it: the time until the queue is done. */
async function use(bufs, op) {
  const t = performance.now();
  const enc = device.createCommandEncoder();
  for (const b of bufs) op(enc, b);
  device.queue.submit([enc.finish()]);
  await device.queue.onSubmittedWorkDone();
  return ms(t);
}
/** Creates buffers of `sizes`, uses them twice with `firstUse` (Dawn clears lazily on the GPU), frees them. */
async function trial(name, sizes, firstUse = (e, b) => e.clearBuffer(b, 0, 256)) {
  let t = performance.now();
  const bufs = sizes.map((size) => device.createBuffer({ size, usage }));
  const createMs = ms(t);
  const firstUseMs = await use(bufs, firstUse);
  const secondUseMs = await use(bufs, firstUse);
  t = performance.now();
  for (const b of bufs) b.destroy();
  const destroyMs = ms(t);
  // The driver frees destroyed buffers at the next wait on the queue: an empty submission after it.
  t = performance.now();
  await device.queue.onSubmittedWorkDone();
  await use([], () => {});
  const afterDestroyWaitMs = ms(t);
  const bytes = sizes.reduce((n, s) => n + s, 0);
  console.log(
    JSON.stringify({
      name,
      count: sizes.length,
      GiB: bytes / GiB,
      createMs,
      firstUseMs,
      secondUseMs,
      destroyMs,
      afterDestroyWaitMs,
    }),
  );
}
/** 64 MiB of mapped staging (with and without mappedAtCreation) and a 64 MiB readback. */
async function mapped() {
  const size = 64 * MiB;
  let t = performance.now();
  const st = device.createBuffer({ size, usage: U.MAP_WRITE | U.COPY_SRC, mappedAtCreation: true });
  const stagingCreateMs = ms(t);
  t = performance.now();
  new Uint8Array(st.getMappedRange()).fill(1);
  const fillMs = ms(t);
  st.unmap();
  t = performance.now();
  await st.mapAsync(GPUMapMode.WRITE);
  const mapAgainMs = ms(t);
  st.unmap();
  st.destroy();
  t = performance.now();
  const st2 = device.createBuffer({ size, usage: U.MAP_WRITE | U.COPY_SRC });
  const unmappedCreateMs = ms(t);
  t = performance.now();
  await st2.mapAsync(GPUMapMode.WRITE);
  const unmappedFirstMapMs = ms(t);
  st2.destroy();
  t = performance.now();
  const rb = device.createBuffer({ size, usage: U.MAP_READ | U.COPY_DST });
  const readbackCreateMs = ms(t);
  const enc = device.createCommandEncoder();
  enc.copyBufferToBuffer(small, 0, rb, 0, 4);
  device.queue.submit([enc.finish()]);
  t = performance.now();
  await rb.mapAsync(GPUMapMode.READ);
  const readbackFirstMapMs = ms(t);
  rb.destroy();
  console.log(
    JSON.stringify({
      name: '64 MiB mapped',
      stagingCreateMs,
      fillMs,
      mapAgainMs,
      unmappedCreateMs,
      unmappedFirstMapMs,
      readbackCreateMs,
      readbackFirstMapMs,
    }),
  );
}
for (let r = 0; r < 2; r++) {
  await trial('10 x 2 GiB-4', Array(10).fill(2 * GiB - 16));
  await trial('1 x 19.5 GiB', [19.5 * GiB]);
  await trial('40 x 0.5 GiB', Array(40).fill(0.5 * GiB));
}
const set = [48, 28, 1, 1, 4, 128].map((m) => m * MiB);
for (let r = 0; r < 3; r++) {
  await trial('210 MB set, clear 4 bytes', set, (e, b) => e.clearBuffer(b, 0, 4));
  await trial('210 MB set, clear whole', set, (e, b) => e.clearBuffer(b));
  await trial('210 MB set, copy 4 bytes in', set, (e, b) => e.copyBufferToBuffer(small, 0, b, 0, 4));
  await mapped();
}
process.exit(0);
