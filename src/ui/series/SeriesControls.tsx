import type { Dispatch, SetStateAction } from 'react';
import type { SeriesQuery } from '../../workers/series-api';
import { formatMs } from '../format';
import { defaultSeriesDetector, type SeriesDetector } from './series-mask';

/** The series panel's detector controls: presets, radii, centre, shared contrast and the last query's time. */
export function SeriesControls({
  detector,
  setDetector,
  det,
  shared,
  setShared,
  query,
  busy,
  shapeDisabled = false,
  onRebase,
  rebaseNote,
}: {
  detector: SeriesDetector;
  setDetector: Dispatch<SetStateAction<SeriesDetector | null>>;
  det: [number, number];
  shared: boolean;
  setShared: (shared: boolean) => void;
  query: SeriesQuery | null;
  busy: boolean;
  /** The shape comes from elsewhere (the detector panel): presets, radii and centre are disabled. */
  shapeDisabled?: boolean;
  /** Recomputes the images from scratch and compares them with the delta-updated ones. */
  onRebase: () => void;
  rebaseNote: string | null;
}) {
  const set = (patch: Partial<SeriesDetector>) => setDetector((d) => (d ? { ...d, ...patch } : d));
  const maxR = Math.ceil(Math.hypot(det[0], det[1]) / 2);
  return (
    <div className="series-controls">
      <fieldset className="series-shape" disabled={shapeDisabled}>
        {(['bf', 'abf', 'adf', 'all'] as const).map((p) => (
          <button
            key={p}
            type="button"
            aria-pressed={detector.preset === p}
            onClick={() => setDetector(defaultSeriesDetector(det[0], det[1], p))}
          >
            {p === 'all' ? 'whole' : p.toUpperCase()}
          </button>
        ))}
        <label>
          inner r{' '}
          <input
            type="range"
            min={0}
            max={maxR}
            step={0.5}
            value={detector.inner}
            aria-label="Inner radius"
            onChange={(e) => set({ inner: Number(e.currentTarget.value) })}
          />
        </label>
        <label>
          outer r{' '}
          <input
            type="range"
            min={0.5}
            max={maxR}
            step={0.5}
            value={detector.outer}
            aria-label="Outer radius"
            onChange={(e) => set({ outer: Number(e.currentTarget.value) })}
          />
        </label>
        <label>
          centre x{' '}
          <input
            type="number"
            step={0.5}
            value={detector.cx}
            aria-label="Centre x"
            onChange={(e) => set({ cx: Number(e.currentTarget.value) })}
          />
        </label>
        <label>
          centre y{' '}
          <input
            type="number"
            step={0.5}
            value={detector.cy}
            aria-label="Centre y"
            onChange={(e) => set({ cy: Number(e.currentTarget.value) })}
          />
        </label>
      </fieldset>
      <label>
        <input type="checkbox" checked={shared} onChange={(e) => setShared(e.currentTarget.checked)} /> shared
        contrast
      </label>
      <span data-testid="series-time">
        {query ? `query ${formatMs(query.ms)} (${[...new Set(query.modes)].join('/')})` : ''}
        {busy ? ' …' : ''}
      </span>
      <button
        type="button"
        className="small"
        disabled={busy || !query}
        data-testid="series-rebase"
        title="Recompute every image from scratch (no delta) and compare it, value by value, with the images the delta updates gave"
        onClick={onRebase}
      >
        Recompute from scratch
      </button>
      {rebaseNote ? <span data-testid="series-rebase-note">{rebaseNote}</span> : null}
    </div>
  );
}
