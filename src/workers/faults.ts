/**
 * Fault injection for the acquisition worker (issue 8), driven by tests through `AcquisitionApi.injectFault`,
 * and the GPU buffer accounting that checks a failure released what it held. Nothing here runs unless a
 * test asks for it, apart from the accounting (a counter per buffer).
 */
export type Fault = 'gpu-out-of-memory' | 'gpu-device-lost' | 'read-failure' | 'none';

/** Live GPU buffers and their bytes on a device (created, not yet destroyed). */
export interface BufferAccount {
  buffers: number;
  bytes: number;
}

const accounts = new WeakMap<GPUDevice, () => BufferAccount>();

/** Starts counting a device's buffers (once per device); returns the live count. */
export function trackDeviceBuffers(device: GPUDevice): () => BufferAccount {
  const known = accounts.get(device);
  if (known) return known;
  const alive = new Map<GPUBuffer, number>();
  const create = device.createBuffer.bind(device);
  device.createBuffer = (descriptor: GPUBufferDescriptor) => {
    const buffer = create(descriptor);
    alive.set(buffer, descriptor.size);
    const destroy = buffer.destroy.bind(buffer);
    buffer.destroy = () => {
      alive.delete(buffer);
      destroy();
    };
    return buffer;
  };
  const account = () => {
    let bytes = 0;
    for (const size of alive.values()) bytes += size;
    return { buffers: alive.size, bytes };
  };
  accounts.set(device, account);
  return account;
}

/**
 * Makes the next 'out-of-memory' error scope popped on `device` report an out-of-memory error, as a device
 * that could not back the buffers created inside it would: the code under test takes its real OOM path
 * (release what it created, refuse the load). One-shot; the device is restored afterwards.
 */
export function injectOutOfMemory(device: GPUDevice): void {
  const push = device.pushErrorScope.bind(device);
  const pop = device.popErrorScope.bind(device);
  const filters: GPUErrorFilter[] = [];
  device.pushErrorScope = (filter: GPUErrorFilter) => {
    filters.push(filter);
    push(filter);
  };
  device.popErrorScope = async () => {
    const filter = filters.pop();
    const error = await pop();
    if (filter !== 'out-of-memory') return error;
    device.pushErrorScope = push;
    device.popErrorScope = pop;
    return error ?? ({ message: 'out of memory (injected fault)' } as GPUError);
  };
}

/**
 * Destroys `device` right after its `afterSubmits`-th queue submission from now: the device goes away in the
 * middle of a load (buffers allocated, chunks uploaded and decoding), as when the driver resets the GPU or the
 * browser's GPU process dies. `device.lost` then resolves with reason 'destroyed' (a real loss says 'unknown');
 * nothing else tells the code under test that it was injected. One-shot.
 */
export function injectDeviceLoss(device: GPUDevice, afterSubmits = 2): void {
  const queue = device.queue;
  const submit = queue.submit.bind(queue);
  let submits = 0;
  queue.submit = (buffers: Iterable<GPUCommandBuffer>) => {
    submit(buffers);
    if (++submits < afterSubmits) return;
    queue.submit = submit;
    device.destroy();
  };
}

/** Applies a GPU fault armed by a test to the device of the load about to start; returns the fault left armed. */
export function armGpuFault(fault: Fault, device: GPUDevice): Fault {
  if (fault === 'gpu-out-of-memory') injectOutOfMemory(device);
  else if (fault === 'gpu-device-lost') injectDeviceLoss(device);
  else return fault;
  return 'none';
}

/**
 * A Blob that reads like `blob` for its first `okReads` slices, then fails as a File does whose disk file
 * went away (NotReadableError), so the reader's own error mapping is what the test sees.
 */
export function failingBlob(blob: Blob, okReads: number): Blob {
  let reads = 0;
  const fake = {
    size: blob.size,
    type: blob.type,
    name: (blob as File).name,
    slice(start?: number, end?: number) {
      const part = blob.slice(start, end);
      if (++reads <= okReads) return part;
      return {
        size: part.size,
        arrayBuffer: () =>
          Promise.reject(new DOMException('The file could not be read (injected fault)', 'NotReadableError')),
      } as Blob;
    },
  };
  return fake as unknown as Blob;
}
