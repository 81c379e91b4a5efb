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
  indexOn,
  setIndexOn,
  summary,
}: {
  onOpen: (folder: FileSystemDirectoryHandle | File[]) => void;
  opening: boolean;
  progress: string;
  budgetGiB: number;
  setBudgetGiB: (gib: number) => void;
  /** Whether the next load builds the exact index. */
  indexOn: boolean;
  setIndexOn: (on: boolean) => void;
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
      <label title="Keeps every count a second time on the GPU, bit-packed by detector pixel (exact): a mask then reads only its own pixels, a change only the pixels it changes. Built when the next load fits it in the budget.">
        <input
          type="checkbox"
          checked={indexOn}
          data-testid="series-index-toggle"
          onChange={(e) => setIndexOn(e.currentTarget.checked)}
        />{' '}
        exact index
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
          {summary.index ? (
            <span data-testid="series-index" title={summary.index.line}>
              {summary.index.built ? '; exact index built' : `; ${summary.index.line}`}
            </span>
          ) : null}
        </span>
      ) : null}
    </header>
  );
}
