import { useRef } from 'react';
import { formatBytes, formatShape } from './format';
import { acquisitionStore, useAcquisition, useView } from './stores';

/** App name, the Open files button, the acquisition summary and the display preferences. */
export function TopBar() {
  const input = useRef<HTMLInputElement>(null);
  const summary = useAcquisition((s) => s.summary);
  const colormap = useView((s) => s.colormap);
  const contrast = useView((s) => s.contrast);
  const setColormap = useView((s) => s.setColormap);
  const setContrast = useView((s) => s.setContrast);

  function onFiles(event: React.ChangeEvent<HTMLInputElement>) {
    const files = Array.from(event.currentTarget.files ?? []);
    event.currentTarget.value = ''; // the same files can be chosen again
    if (files.length > 0) void acquisitionStore.getState().openFiles(files);
  }

  return (
    <header className="top-bar">
      <div className="brand">stemflow</div>
      <button type="button" className="primary" onClick={() => input.current?.click()}>
        Open files…
      </button>
      <input
        ref={input}
        type="file"
        multiple
        accept=".h5,.hdf5,.hdf,.nxs"
        hidden
        data-testid="file-input"
        onChange={onFiles}
      />
      {summary ? (
        <div className="summary" data-testid="summary">
          <span className="acq-name" title={summary.files.map((f) => f.name).join('\n')}>
            {summary.name}
          </span>
          <Chip
            label="scan"
            value={formatShape(summary.scan)}
            hint={summary.scanFromMetadata ? '' : ' (guessed)'}
          />
          <Chip label="detector" value={formatShape(summary.detector)} />
          <Chip label="dtype" value={summary.dtype} />
          <Chip label="compression" value={summary.compression} />
          <Chip label="chunk index" value={summary.chunkIndex} />
          <Chip label="compressed" value={formatBytes(summary.compressedBytes)} />
          <Chip label="flagged pixels" value={String(summary.flaggedPixels)} />
        </div>
      ) : (
        <div className="summary muted">No acquisition open</div>
      )}
      <div className="prefs">
        <label>
          colormap{' '}
          <select
            value={colormap}
            onChange={(e) => setColormap(e.currentTarget.value as typeof colormap)}
            aria-label="Colormap"
          >
            <option value="viridis">viridis</option>
            <option value="gray">gray</option>
          </select>
        </label>
        <label>
          contrast{' '}
          <select
            value={contrast}
            onChange={(e) => setContrast(e.currentTarget.value as typeof contrast)}
            aria-label="Contrast"
          >
            <option value="percentile">0.5–99.5 %</option>
            <option value="minmax">min–max</option>
          </select>
        </label>
      </div>
    </header>
  );
}

function Chip({ label, value, hint = '' }: { label: string; value: string; hint?: string }) {
  return (
    <span className="chip" data-testid={`chip-${label.replace(/ /g, '-')}`}>
      <span className="chip-label">{label}</span> {value}
      {hint}
    </span>
  );
}
