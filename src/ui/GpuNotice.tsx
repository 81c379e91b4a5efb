import { useEffect, useState } from 'react';

export type GpuStatus =
  | { kind: 'checking' }
  | { kind: 'missing'; reason: string }
  | { kind: 'ok'; adapter: string };

/** Whether this browser offers WebGPU, and the adapter it offers. */
export async function probeWebGpu(): Promise<GpuStatus> {
  if (!navigator.gpu) return { kind: 'missing', reason: 'this browser has no WebGPU' };
  try {
    const adapter = await navigator.gpu.requestAdapter();
    if (!adapter) return { kind: 'missing', reason: 'WebGPU offers no adapter here' };
    const { vendor, architecture, description } = adapter.info;
    const name = [vendor, architecture, description].filter(Boolean).join(' ') || 'unnamed adapter';
    return { kind: 'ok', adapter: name };
  } catch (e) {
    return { kind: 'missing', reason: `WebGPU failed: ${e instanceof Error ? e.message : String(e)}` };
  }
}

/** A notice when WebGPU is missing: this version still works (it computes on the CPU in a worker). */
export function GpuNotice() {
  const [status, setStatus] = useState<GpuStatus>({ kind: 'checking' });
  const [dismissed, setDismissed] = useState(false);
  useEffect(() => {
    void probeWebGpu().then(setStatus);
  }, []);
  if (status.kind !== 'missing' || dismissed) return null;
  return (
    <div className="notice" role="status" data-testid="gpu-notice">
      <span>
        WebGPU is not available ({status.reason}). stemflow keeps working here on the CPU; GPU products need
        Chrome or Edge 113+, Safari 26+ on Apple Silicon, or Firefox 141+ on Windows.
      </span>
      <button type="button" onClick={() => setDismissed(true)} aria-label="Dismiss">
        ×
      </button>
    </div>
  );
}
