// Probe (H200, 2026-11-29): the cost of creating and freeing ~20 GB of storage buffers, as 10 x 2 GiB, 1 x 19.5 GiB and
// 40 x 0.5 GiB. Run: bash .gpu-kit/enter.sh node scripts/h200-alloc-probe.mjs (figures in docs/performance.md).
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
const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
const GiB = 2 ** 30;
async function trial(name, count, size) {
  let t = performance.now();
  const bufs = [];
  for (let i = 0; i < count; i++) bufs.push(device.createBuffer({ size, usage }));
  const createMs = performance.now() - t;
  // first use: Dawn clears lazily on the GPU
  t = performance.now();
  const enc = device.createCommandEncoder();
  for (const b of bufs) enc.clearBuffer(b, 0, 256);
  device.queue.submit([enc.finish()]);
  await device.queue.onSubmittedWorkDone();
  const firstUseMs = performance.now() - t;
  t = performance.now();
  for (const b of bufs) b.destroy();
  const destroyMs = performance.now() - t;
  t = performance.now();
  await device.queue.onSubmittedWorkDone();
  const e2 = device.createCommandEncoder();
  device.queue.submit([e2.finish()]);
  await device.queue.onSubmittedWorkDone();
  const afterDestroyWaitMs = performance.now() - t;
  console.log(
    JSON.stringify({ name, count, sizeGiB: size / GiB, createMs, firstUseMs, destroyMs, afterDestroyWaitMs }),
  );
}
for (let r = 0; r < 2; r++) {
  await trial('10 x 2 GiB-4', 10, 2 * GiB - 16);
  await trial('1 x 19.5 GiB', 1, 19.5 * GiB);
  await trial('40 x 0.5 GiB', 40, 0.5 * GiB);
}
process.exit(0);
