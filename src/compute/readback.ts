/** Copies `bytes` of a GPU buffer (COPY_SRC) at `offset` to the host: one submit, one wait. */
export async function readBuffer(
  device: GPUDevice,
  buffer: GPUBuffer,
  offset: number,
  bytes: number,
): Promise<Uint8Array> {
  const staging = device.createBuffer({
    label: `readback ${buffer.label}`,
    size: Math.max(4, bytes),
    usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
  });
  try {
    const encoder = device.createCommandEncoder({ label: 'readback' });
    if (bytes > 0) encoder.copyBufferToBuffer(buffer, offset, staging, 0, bytes);
    device.queue.submit([encoder.finish()]);
    await staging.mapAsync(GPUMapMode.READ);
    const out = new Uint8Array(staging.getMappedRange(0, Math.max(4, bytes)).slice(0, bytes));
    staging.unmap();
    return out;
  } finally {
    staging.destroy();
  }
}
