// What creating and first using GPU memory costs under Dawn (docs/performance.md, thirteenth session): device
// buffers, their first use (lazy clear), mapped staging (with and without mappedAtCreation) and readbacks.
// On the GPU machine: bash .gpu-kit/enter.sh node scripts/probe-buffer-costs.mjs
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
const now = () => performance.now();
const MB = 2 ** 20;
const U = GPUBufferUsage;
const sizes = [48 * MB, 28 * MB, 1 * MB, 1 * MB, 4 * MB, 128 * MB];
const make = () => {
  const t = now();
  const bs = sizes.map((s) => device.createBuffer({ size: s, usage: U.STORAGE | U.COPY_DST | U.COPY_SRC }));
  return { bs, ms: now() - t };
};
const small = device.createBuffer({ size: 256, usage: U.COPY_SRC | U.COPY_DST });
async function run(name, bs, op) {
  const t = now();
  const e = device.createCommandEncoder();
  for (const b of bs) op(e, b);
  const cb = e.finish();
  const t1 = now();
  device.queue.submit([cb]);
  const t2 = now();
  await device.queue.onSubmittedWorkDone();
  const t3 = now();
  console.log(
    `${name}: encode ${(t1 - t).toFixed(2)} ms, submit ${(t2 - t1).toFixed(2)} ms, wait ${(t3 - t2).toFixed(2)} ms`,
  );
}
for (let round = 0; round < 3; round++) {
  console.log(`-- round ${round}`);
  let s = make();
  console.log(`create ${s.ms.toFixed(2)} ms`);
  await run('fresh, clear 4 bytes', s.bs, (e, b) => e.clearBuffer(b, 0, 4));
  await run('again, clear 4 bytes', s.bs, (e, b) => e.clearBuffer(b, 0, 4));
  for (const b of s.bs) b.destroy();
  s = make();
  console.log(`create ${s.ms.toFixed(2)} ms`);
  await run('fresh, clear whole', s.bs, (e, b) => e.clearBuffer(b));
  for (const b of s.bs) b.destroy();
  s = make();
  console.log(`create ${s.ms.toFixed(2)} ms`);
  await run('fresh, copy 4 bytes in', s.bs, (e, b) => e.copyBufferToBuffer(small, 0, b, 0, 4));
  for (const b of s.bs) b.destroy();
  // mapped staging
  let t = now();
  const st = device.createBuffer({ size: 64 * MB, usage: U.MAP_WRITE | U.COPY_SRC, mappedAtCreation: true });
  const c1 = now() - t;
  t = now();
  new Uint8Array(st.getMappedRange()).fill(1);
  const f1 = now() - t;
  t = now();
  st.unmap();
  const u1 = now() - t;
  t = now();
  await st.mapAsync(GPUMapMode.WRITE);
  const m1 = now() - t;
  t = now();
  new Uint8Array(st.getMappedRange()).fill(2);
  const f2 = now() - t;
  st.unmap();
  st.destroy();
  t = now();
  const st2 = device.createBuffer({
    size: 64 * MB,
    usage: U.MAP_WRITE | U.COPY_SRC,
    mappedAtCreation: false,
  });
  const c2 = now() - t;
  t = now();
  await st2.mapAsync(GPUMapMode.WRITE);
  const m2 = now() - t;
  st2.destroy();
  t = now();
  const rb = device.createBuffer({ size: 64 * MB, usage: U.MAP_READ | U.COPY_DST });
  const c3 = now() - t;
  t = now();
  {
    const e = device.createCommandEncoder();
    e.copyBufferToBuffer(small, 0, rb, 0, 4);
    device.queue.submit([e.finish()]);
  }
  const s3 = now() - t;
  t = now();
  await rb.mapAsync(GPUMapMode.READ);
  const m3 = now() - t;
  rb.destroy();
  console.log(
    `64 MiB staging mappedAtCreation: create ${c1.toFixed(2)}, fill ${f1.toFixed(2)}, unmap ${u1.toFixed(2)}, map again ${m1.toFixed(2)}, fill ${f2.toFixed(2)}; not mapped at creation: create ${c2.toFixed(2)}, first map ${m2.toFixed(2)}; 64 MiB readback: create ${c3.toFixed(2)}, partial copy submit ${s3.toFixed(2)}, first map ${m3.toFixed(2)}`,
  );
  await device.queue.onSubmittedWorkDone();
}
process.exit(0);
