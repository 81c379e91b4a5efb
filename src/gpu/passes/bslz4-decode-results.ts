/**
 * The bslz4-decode pass's audit buffer and the readback of its results (errors, frame totals, audit) for
 * tests, benchmarks and the verifier (src/gpu/passes/bslz4-decode.ts; re-exported there).
 */
import { AUDIT_LAYOUT, auditFromWords, type DecodeAudit } from '../../kernels/bslz4-decode.ts';

/** A zeroed audit buffer (STORAGE | COPY_SRC | COPY_DST) of AUDIT_LAYOUT.words u32 words. */
export function createAuditBuffer(device: GPUDevice, label = 'bslz4-decode audit'): GPUBuffer {
  return device.createBuffer({
    label,
    size: AUDIT_LAYOUT.words * 4,
    usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
  });
}

export interface DecodeResults {
  /** Error code per frame (0 = exact). */
  errors: Uint32Array;
  /** Sum of unflagged values per frame. */
  totals: BigUint64Array;
  audit: DecodeAudit;
}

/**
 * Reads back frames [firstFrame, firstFrame + frameCount) of `errors` and `totals` and the whole audit (one
 * submit, one wait). The buffers need COPY_SRC usage.
 */
export async function readDecodeResults(
  device: GPUDevice,
  buffers: { errors: GPUBuffer; totals: GPUBuffer; audit: GPUBuffer },
  { firstFrame = 0, frameCount }: { firstFrame?: number; frameCount: number },
): Promise<DecodeResults> {
  const errBytes = frameCount * 4;
  const totBytes = frameCount * 8;
  const auditBytes = AUDIT_LAYOUT.words * 4;
  const totAt = Math.ceil(errBytes / 8) * 8;
  const auditAt = totAt + totBytes;
  const staging = device.createBuffer({
    label: 'bslz4-decode readback',
    size: auditAt + auditBytes,
    usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
  });
  try {
    const encoder = device.createCommandEncoder({ label: 'bslz4-decode readback' });
    if (frameCount > 0) {
      encoder.copyBufferToBuffer(buffers.errors, firstFrame * 4, staging, 0, errBytes);
      encoder.copyBufferToBuffer(buffers.totals, firstFrame * 8, staging, totAt, totBytes);
    }
    encoder.copyBufferToBuffer(buffers.audit, 0, staging, auditAt, auditBytes);
    device.queue.submit([encoder.finish()]);
    await staging.mapAsync(GPUMapMode.READ);
    const bytes = staging.getMappedRange().slice(0);
    staging.unmap();
    return {
      errors: new Uint32Array(bytes, 0, frameCount),
      totals: new BigUint64Array(bytes, totAt, frameCount),
      audit: auditFromWords(new Uint32Array(bytes, auditAt, AUDIT_LAYOUT.words)),
    };
  } finally {
    staging.destroy();
  }
}
