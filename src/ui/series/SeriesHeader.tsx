import { useRef } from 'react';
import type { SeriesSummary } from '../../workers/series-api';
import { formatBytes, formatMs } from '../format';

type Picker = (options?: { mode?: 'read' | 'readwrite'; id?: string }) => Promise<FileSystemDirectoryHandle>;

/** The series panel's head: open an archive folder (picker or folder input), the GPU budget, what is loaded. */
export function SeriesHeader({
  onOpen,
  opening,
  progress,
  budgetGiB,
  setBudgetGiB,
  summary,
}: {
  onOpen: (folder: FileSystemDirectoryHandle | File[]) => void;
  opening: boolean;
  progress: string;
  budgetGiB: number;
  setBudgetGiB: (gib: number) => void;
  summary: SeriesSummary | null;
}) {
  const input = useRef<HTMLInputElement>(null);
  const picker = (window as unknown as { showDirectoryPicker?: Picker }).showDirectoryPicker;
  return (
    <header className="series-head">
      <h2>Series</h2>
      {picker ? (
        <button
          type="button"
          className="primary"
          disabled={opening}
          onClick={() => void picker({ mode: 'read', id: 'stemflow-series' }).then(onOpen, () => {})}
        >
          Open archive folder…
        </button>
      ) : null}
      <button type="button" disabled={opening} onClick={() => input.current?.click()}>
        {picker ? 'Choose folder files…' : 'Open archive folder…'}
      </button>
      <input
        ref={input}
        type="file"
        hidden
        multiple
        data-testid="series-folder-input"
        {...{ webkitdirectory: '' }}
        onChange={(e) => {
          const files = Array.from(e.currentTarget.files ?? []);
          e.currentTarget.value = '';
          if (files.length > 0) onOpen(files);
        }}
      />
      <label>
        GPU budget{' '}
        <input
          type="number"
          min={0.25}
          step={0.25}
          value={budgetGiB}
          aria-label="GPU budget in GiB"
          onChange={(e) => setBudgetGiB(Number(e.currentTarget.value))}
        />{' '}
        GiB
      </label>
      {opening ? <span data-testid="series-progress">{progress || 'opening…'}</span> : null}
      {summary ? (
        <span className="muted" title={summary.plan.join('\n')} data-testid="series-summary">
          {summary.acquisitions.length < summary.asked
            ? `${summary.acquisitions.length} of ${summary.asked} acquisitions (the budget holds ${summary.acquisitions.length})`
            : `${summary.acquisitions.length} acquisitions`}
          , {formatBytes(summary.gpuBytes)} on the GPU (checked in {formatMs(summary.openMs)}
          {summary.hashThreads > 0
            ? ` by ${summary.hashThreads} thread${summary.hashThreads > 1 ? 's' : ''}`
            : ''}
          , loaded in {formatMs(summary.loadMs)})
        </span>
      ) : null}
    </header>
  );
}
