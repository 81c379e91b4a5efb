/**
 * Vitest harness for GPU tests: `withGpu(name, async (ctx) => ...)` declares a test that runs on a device
 * acquired once per test file. Each body runs inside 'validation', 'out-of-memory' and 'internal' error
 * scopes; any captured or uncaptured error fails the test; buffers made through `ctx.createBuffer` are
 * destroyed afterwards. Without an adapter the test fails with the driver to install: it never skips.
 */
import { afterAll, it } from 'vitest';
import { isStemflowError } from '../errors.ts';
import { acquireDevice, type GpuContext } from './device.ts';
import { nodeGpu } from './node-gpu.ts';

export type TypedArray = Uint8Array | Uint16Array | Uint32Array | Int32Array | Float32Array | BigUint64Array;
type TypedArrayConstructor<T extends TypedArray> = {
  new (buffer: ArrayBuffer): T;
  BYTES_PER_ELEMENT: number;
};

export interface GpuTestContext extends GpuContext {
  /** A buffer destroyed after the test. */
  createBuffer(descriptor: GPUBufferDescriptor): GPUBuffer;
  /** A STORAGE | COPY_SRC | COPY_DST buffer holding `data`, its size rounded up to 4 bytes. */
  upload(data: TypedArray, usage?: GPUBufferUsageFlags): GPUBuffer;
  /** A zeroed STORAGE | COPY_SRC | COPY_DST buffer of `size` bytes (rounded up to 4). */
  storage(size: number): GPUBuffer;
  /** Copies `buffer` (or its first `byteLength` bytes) back to the CPU as a `type` array. */
  readBack<T extends TypedArray>(
    buffer: GPUBuffer,
    type: TypedArrayConstructor<T>,
    byteLength?: number,
  ): Promise<T>;
}

const NO_ADAPTER =
  'No WebGPU adapter: GPU tests need a Vulkan driver for Dawn. Run `source scripts/gpu-env.sh` (sets ' +
  'VK_ICD_FILENAMES=/usr/lib/chromium/vk_swiftshader_icd.json; needs `apt-get install chromium libvulkan1`) or ' +
  'point VK_ICD_FILENAMES at another ICD json.';

let shared: Promise<GpuContext> | undefined;
let cleanupRegistered = false;

/** The device shared by the tests of one file (acquired on first use). */
export function gpuTestContext(): Promise<GpuContext> {
  shared ??= acquireDevice(nodeGpu()).catch((e: unknown) => {
    shared = undefined;
    if (isStemflowError(e, 'device')) throw new Error(`${NO_ADAPTER}\n(${e.message})`, { cause: e });
    throw e;
  });
  return shared;
}

export function withGpu(name: string, body: (ctx: GpuTestContext) => Promise<void>, timeout?: number): void {
  if (!cleanupRegistered) {
    cleanupRegistered = true;
    afterAll(async () => {
      const ctx = await shared?.catch(() => undefined);
      shared = undefined;
      ctx?.destroy();
    });
  }
  it(name, async () => runGpuTest(await gpuTestContext(), body), timeout);
}

/** Runs `body` inside error scopes, then destroys its buffers; rejects on any GPU error. */
export async function runGpuTest(
  base: GpuContext,
  body: (ctx: GpuTestContext) => Promise<void>,
): Promise<void> {
  const { device } = base;
  base.throwIfFailed();
  const buffers: GPUBuffer[] = [];
  const createBuffer = (descriptor: GPUBufferDescriptor) => {
    const buffer = device.createBuffer(descriptor);
    buffers.push(buffer);
    return buffer;
  };
  const storageUsage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
  const ctx: GpuTestContext = {
    ...base,
    createBuffer,
    storage: (size) => createBuffer({ size: align4(Math.max(size, 4)), usage: storageUsage }),
    upload(data, usage = storageUsage) {
      const buffer = createBuffer({
        size: align4(Math.max(data.byteLength, 4)),
        usage,
        mappedAtCreation: true,
      });
      new Uint8Array(buffer.getMappedRange()).set(
        new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
      );
      buffer.unmap();
      return buffer;
    },
    async readBack(buffer, type, byteLength = buffer.size) {
      const size = align4(byteLength);
      const staging = createBuffer({ size, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
      const encoder = device.createCommandEncoder({ label: 'read back' });
      encoder.copyBufferToBuffer(buffer, 0, staging, 0, size);
      device.queue.submit([encoder.finish()]);
      await staging.mapAsync(GPUMapMode.READ);
      const copy = staging.getMappedRange().slice(0, byteLength - (byteLength % type.BYTES_PER_ELEMENT));
      staging.unmap();
      return new type(copy);
    },
  };
  const filters: GPUErrorFilter[] = ['validation', 'out-of-memory', 'internal'];
  for (const filter of filters) device.pushErrorScope(filter);
  let failure: unknown;
  try {
    await body(ctx);
    await device.queue.onSubmittedWorkDone();
  } catch (e) {
    failure = e;
  }
  const captured: GPUError[] = [];
  for (let i = filters.length - 1; i >= 0; i--) {
    const error = await device.popErrorScope();
    if (error) captured.push(error);
  }
  for (const buffer of buffers) buffer.destroy();
  if (captured.length) {
    const text = captured.map((e) => `${e.constructor.name}: ${e.message}`).join('\n');
    throw new Error(`The GPU reported ${captured.length} error(s) during the test:\n${text}`, {
      cause: failure,
    });
  }
  if (failure !== undefined) throw failure;
  base.throwIfFailed();
}

function align4(n: number): number {
  return Math.ceil(n / 4) * 4;
}

/**
 * Counts buffers created on a device from now on, and those of them not yet destroyed (tests that require a
 * failed or cancelled load to free everything it allocated). `stop` restores `createBuffer`.
 */
export function trackBuffers(device: GPUDevice) {
  const original = device.createBuffer.bind(device);
  let created = 0;
  const labels: string[] = [];
  const alive = new Set<GPUBuffer>();
  device.createBuffer = (descriptor: GPUBufferDescriptor) => {
    const buffer = original(descriptor);
    created++;
    labels.push(descriptor.label ?? '');
    alive.add(buffer);
    const destroy = buffer.destroy.bind(buffer);
    buffer.destroy = () => {
      alive.delete(buffer);
      destroy();
    };
    return buffer;
  };
  return {
    created: () => created,
    /** Labels of the buffers created, in order. */
    createdLabels: () => labels.slice(),
    alive: () => alive.size,
    stop: () => {
      device.createBuffer = original;
    },
  };
}
