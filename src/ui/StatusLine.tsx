import { useEffect, useState } from 'react';
import { formatBytes, formatCount, formatMs } from './format';

const STAGES: Record<string, string> = {
  plan: 'planning memory',
  decode: 'reading, decoding and transposing',
  finish: 'checking the audit',
};

import { acquisitionStore, useAcquisition } from './stores';

/** Load progress, timings and errors, in words. */
export function StatusLine() {
  const phase = useAcquisition((s) => s.phase);
  const activity = useAcquisition((s) => s.activity);
  const progress = useAcquisition((s) => s.progress);
  const startedAt = useAcquisition((s) => s.startedAt);
  const elapsedMs = useAcquisition((s) => s.elapsedMs);
  const data = useAcquisition((s) => s.data);
  const error = useAcquisition((s) => s.error);
  const busy = phase === 'fetching' || phase === 'opening' || phase === 'loading';
  const now = useNow(busy);

  let text: string;
  switch (phase) {
    case 'idle':
      text =
        'No data. Open or drop an ARINA/EIGER acquisition (master file + data shards) anywhere on the page.';
      break;
    case 'fetching':
      text = `Downloading ${activity}…`;
      break;
    case 'opening':
      text = `Opening ${activity}…`;
      break;
    case 'loading':
      text = `Loading ${activity}`;
      break;
    case 'ready':
      text = 'Loaded';
      break;
    default:
      text = data ? 'Loaded' : 'Nothing loaded';
  }
  const live = busy && startedAt !== null ? now - startedAt : null;

  return (
    <div className="status">
      <div className="status-line" data-testid="status" data-phase={phase} aria-live="polite">
        <span>{text}</span>
        {progress && (phase === 'loading' || phase === 'ready') ? (
          <>
            <progress max={progress.frameCount} value={progress.framesDone} />
            <span data-testid="progress">
              {progress.framesDone} / {progress.frameCount} frames
            </span>
            {phase === 'loading' && progress.stage ? (
              <span className="muted" data-testid="stage">
                {STAGES[progress.stage] ?? progress.stage}
                {progress.bytesTotal
                  ? `, ${formatBytes(progress.bytesDone ?? 0)} of ${formatBytes(progress.bytesTotal)} read`
                  : ''}
              </span>
            ) : null}
            {phase === 'loading' ? (
              <button
                type="button"
                data-testid="cancel"
                onClick={() => void acquisitionStore.getState().cancelLoad()}
              >
                Cancel
              </button>
            ) : null}
          </>
        ) : null}
        {live !== null ? <span className="muted">{formatMs(live)}</span> : null}
        {phase === 'ready' && elapsedMs !== null ? (
          <span className="muted" data-testid="elapsed">
            {formatMs(elapsedMs)} total
            {data ? `, decode ${formatMs(data.loadMs)}, max count ${formatCount(data.maxCount)}` : ''}
          </span>
        ) : null}
        {phase === 'ready' && data ? (
          <span
            className="muted"
            data-testid="backend"
            title={[...data.memory, data.fallbackReason ?? ''].filter(Boolean).join('\n')}
          >
            {data.backend === 'webgpu' ? `WebGPU${data.adapter ? ` (${data.adapter})` : ''}` : 'CPU'}
            {data.memory[0] ? ` · ${data.memory[0]}` : ''}
            {data.fallbackReason ? ` · ${data.fallbackReason}` : ''}
          </span>
        ) : null}
      </div>
      {error ? (
        <div className="error" role="alert" data-testid="error">
          <span>{error}</span>
          <button type="button" onClick={() => acquisitionStore.getState().clearError()} aria-label="Dismiss">
            ×
          </button>
        </div>
      ) : null}
    </div>
  );
}

function useNow(ticking: boolean): number {
  const [now, setNow] = useState(() => performance.now());
  useEffect(() => {
    if (!ticking) return;
    const id = setInterval(() => setNow(performance.now()), 100);
    return () => clearInterval(id);
  }, [ticking]);
  return now;
}
