import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { useStore } from 'zustand';
import type { SeriesQuery, SeriesSummary } from '../../workers/series-api';
import { seriesClient } from '../../workers/series-remote';
import { closeOnEscape, DialogClose } from '../DialogClose';
import { download } from '../export';
import { relativePathOf } from '../folder-input';
import { formatBytes, formatMs } from '../format';
import { contrastWindow } from '../image-mapping';
import { useAcquisition } from '../stores';
import { SeriesAcquisitions } from './SeriesAcquisitions';
import { SeriesControls } from './SeriesControls';
import { type SeriesFrames, SeriesGrid } from './SeriesGrid';
import { SeriesHeader } from './SeriesHeader';
import { SeriesMaskSource } from './SeriesMaskSource';
import { seriesExportRecord, seriesStackNpy } from './series-export';
import { useSeriesHook } from './series-hook';
import { defaultSeriesDetector, type SeriesDetector, seriesMask } from './series-mask';
import { seriesRequests } from './series-request';
import { SeriesSpares } from './series-spares';
import { ValuesCanvas } from './ValuesCanvas';

/** 'panel': the main detector panel's current mask drives every image (same detector shape only). */
export type MaskSource = 'series' | 'panel';

/**
 * The series panel (issue #6): an archive opened from a folder is loaded encoded onto the GPU; one detector
 * mask drives the virtual images of every acquisition at once (exact sums from the exact index built after
 * loading, or straight from the tANS lanes when it does not fit); images no longer shown go back to the worker to
 * be filled again;
 * shared or per-image contrast; an acquisition slider; the frames at a picked scan position across
 * acquisitions; the time each query took.
 */
export function SeriesPanel() {
  const [open, setOpen] = useState(false);
  const [phase, setPhase] = useState<'idle' | 'opening' | 'ready' | 'error'>('idle');
  const [error, setError] = useState<string | null>(null);
  const [progress, setProgress] = useState('');
  const [summary, setSummary] = useState<SeriesSummary | null>(null);
  const [budgetGiB, setBudgetGiB] = useState(4);
  // The exact index: built in what the series leaves of the budget; queries then read only the mask's pixels.
  const [indexOn, setIndexOn] = useState(true);
  const [pattern, setPattern] = useState<Float64Array | null>(null);
  const [detector, setDetector] = useState<SeriesDetector | null>(null);
  const [query, setQuery] = useState<SeriesQuery | null>(null);
  const [busy, setBusy] = useState(false);
  const [shared, setShared] = useState(true);
  const [selected, setSelected] = useState(0);
  const [picked, setPicked] = useState<{ row: number; col: number } | null>(null);
  const [frames, setFrames] = useState<SeriesFrames | null>(null);
  // The acquisitions shown, in order (archive indices); those loaded are queried.
  const [chosen, setChosen] = useState<number[]>([]);
  const [source, setSource] = useState<MaskSource>('series');
  const [queried, setQueried] = useState<Uint8Array | null>(null);
  const [rebaseNote, setRebaseNote] = useState<string | null>(null);
  // The detector panel's current detector (mask and shape) of the acquisition open in the main view.
  const panelMask = useAcquisition((s) => s.masks?.[s.detectorMode] ?? null);
  const panelMode = useAcquisition((s) => s.detectorMode);
  const panelDetector = useAcquisition((s) => s.summary?.detector ?? null);
  const pending = useRef<Uint8Array | null>(null);
  const running = useRef(false);
  // Each open starts a generation; a query or frame answer of an older one is dropped, not shown.
  const generation = useRef(0);
  // Images no longer shown, handed back to the worker with the next query (it fills them again).
  const [spares] = useState(() => new SeriesSpares());
  const committed = useRef<SeriesQuery | null>(null);
  useEffect(() => {
    // After the commit of a newer query's images nothing reads the ones they replaced (the rebase reads a copy).
    const before = committed.current;
    committed.current = query;
    if (before && query && before !== query) spares.retire(before.images, query.images);
  }, [query, spares]);

  const det = summary?.acquisitions[0]?.detector;
  const scan = summary?.acquisitions[0]?.scan;

  const showProgress = (p: { stage: string; done: number; total: number }) =>
    setProgress(
      p.stage === 'check'
        ? `checking files ${formatBytes(p.done)} of ${formatBytes(p.total)}`
        : p.stage === 'index'
          ? `building the exact index: ${Math.floor((100 * p.done) / p.total)} %`
          : `loading record ${p.done} of ${p.total}`,
    );

  /**
   * One open or reload: a new generation (answers of older ones are dropped), then the loaded series shown, or
   * a refusal (the loaded series stays: 'ready' with the reason), or the error.
   */
  async function loading(work: () => Promise<SeriesSummary | { refused: string }>) {
    const mine = ++generation.current;
    pending.current = null;
    spares.clear();
    setPhase('opening');
    setError(null);
    setQuery(null);
    setFrames(null);
    try {
      const r = await work();
      if (mine !== generation.current) return;
      if ('refused' in r) {
        setError(r.refused);
        setPhase('ready');
        return;
      }
      const [sum] = await seriesClient().sumPatterns([r.acquisitions[0].index]);
      if (mine !== generation.current) return;
      setSummary(r);
      setPattern(sum);
      setChosen(r.acquisitions.map((a) => a.index));
      setSelected(0);
      setDetector(
        (d) => d ?? defaultSeriesDetector(r.acquisitions[0].detector[0], r.acquisitions[0].detector[1], 'bf'),
      );
      setPhase('ready');
    } catch (e) {
      if (mine !== generation.current) return;
      setError((e as Error).message);
      setPhase('error');
    } finally {
      if (mine === generation.current) setProgress('');
    }
  }

  /** Opens an archive folder (another archive: its detector starts from the BF preset). */
  function openFolder(folder: FileSystemDirectoryHandle | File[], paths?: string[]) {
    setDetector(null);
    const options = {
      budgetBytes: budgetGiB * 2 ** 30,
      index: indexOn,
      paths: Array.isArray(folder) ? (paths ?? folder.map(relativePathOf)) : undefined,
    };
    return loading(() => seriesClient().open(folder, options, showProgress));
  }

  /** Loads the chosen acquisitions of the open archive (a refusal keeps the loaded ones). */
  function reloadChosen(list: number[]) {
    return loading(() =>
      seriesClient().reload(
        { budgetBytes: budgetGiB * 2 ** 30, acquisitions: list, index: indexOn },
        showProgress,
      ),
    );
  }

  // An archive dropped on the page or picked with "Open folder…" opens here.
  const request = useStore(seriesRequests, (r) => r.request);
  const handled = useRef(0);
  useEffect(() => {
    if (!request || request.id === handled.current) return;
    handled.current = request.id;
    setOpen(true);
    void openFolder(request.files, request.paths);
  });

  // Queries: the latest mask wins; one in flight at a time (the worker serialises anyway).
  const run = useCallback(async () => {
    if (running.current) return;
    running.current = true;
    setBusy(true);
    try {
      while (pending.current) {
        const mask = pending.current;
        const mine = generation.current;
        pending.current = null;
        try {
          const q = await seriesClient().images(mask, shownRef.current, spares.take());
          if (mine === generation.current) {
            setQuery(q);
            setQueried(mask);
            setRebaseNote(null);
          }
        } catch (e) {
          if (mine === generation.current) setError((e as Error).message);
          else continue;
          break;
        }
      }
    } finally {
      running.current = false;
      setBusy(false);
    }
  }, [spares]);

  // The panel's mask applies when its detector has the series' shape; otherwise the series' controls do.
  const panelFits =
    !!panelMask && !!det && !!panelDetector && panelDetector[0] === det[0] && panelDetector[1] === det[1];
  const following = source === 'panel' && panelFits;
  const mask = useMemo(
    () => (following ? panelMask : detector && det ? seriesMask(detector, det[0], det[1]) : null),
    [following, panelMask, detector, det],
  );
  const loadedSet = useMemo(() => new Set(summary?.acquisitions.map((a) => a.index)), [summary]);
  const names = useMemo(() => new Map(summary?.available.map((a) => [a.index, a.name])), [summary]);
  const shown = useMemo(() => chosen.filter((a) => loadedSet.has(a)), [chosen, loadedSet]);
  const shownRef = useRef<number[]>([]);
  shownRef.current = shown;
  useEffect(() => {
    if (!mask || phase !== 'ready' || shown.length === 0) return;
    pending.current = mask;
    void run();
  }, [mask, phase, run, shown]);

  useEffect(() => {
    if (!picked || phase !== 'ready' || shown.length === 0) return;
    const mine = generation.current;
    // The frames of the acquisitions shown, in their order (again when the chooser changes them).
    const order = shown;
    void seriesClient()
      .frames(picked.row, picked.col, order)
      .then((values) => mine === generation.current && setFrames({ order, values }))
      .catch((e) => mine === generation.current && setError((e as Error).message));
  }, [picked, phase, shown]);

  // The summed pattern shown is the selected acquisition's (exact, stored in the archive).
  const selectedAcquisition = query?.order[selected];
  useEffect(() => {
    if (selectedAcquisition === undefined || phase !== 'ready') return;
    const mine = generation.current;
    void seriesClient()
      .sumPatterns([selectedAcquisition])
      .then(([p]) => mine === generation.current && setPattern(p))
      .catch(() => {});
  }, [selectedAcquisition, phase]);

  /** The explicit rebase: every image from scratch, compared value by value with the delta-updated ones. */
  async function rebase() {
    if (!query || running.current) return;
    // A copy: once a newer query's images are shown, these are handed back to the worker (detached here).
    const before = query.images.map((im) => im.slice());
    const mine = generation.current;
    try {
      const r = await seriesClient().rebase();
      if (mine !== generation.current) return;
      let differ = 0;
      r.images.forEach((im, i) => {
        const b = before[i];
        for (let k = 0; k < im.length; k++) if (!b || im[k] !== b[k]) differ++;
      });
      setRebaseNote(
        differ === 0
          ? `recomputed in ${formatMs(r.ms)}: identical to the delta updates`
          : `recomputed in ${formatMs(r.ms)}: ${differ} values DIFFER from the delta updates`,
      );
      setQuery(r);
    } catch (e) {
      if (mine === generation.current) setError((e as Error).message);
    }
  }

  function exportStack() {
    if (!query || !queried || !scan || !det || !detector) return;
    const acquisitions = query.order.map((index) => ({ index, name: names.get(index) ?? String(index) }));
    const stem = `series_${acquisitions.map((a) => a.name.replace(/[^\w.-]+/g, '_')).join('-')}`.slice(
      0,
      120,
    );
    download(seriesStackNpy(query.images, scan), `${stem}.npy`);
    download(
      seriesExportRecord({
        acquisitions,
        scan,
        detector: det,
        mask: queried,
        source: following
          ? { kind: 'detector panel', detector: panelMode.toUpperCase() }
          : { kind: 'series controls', shape: detector },
        queryMs: query.ms,
      }),
      `${stem}.json`,
    );
  }

  const window_ = useMemo((): [number, number] | undefined => {
    if (!query || !shared) return undefined;
    let lo = Number.POSITIVE_INFINITY;
    let hi = Number.NEGATIVE_INFINITY;
    for (const im of query.images) {
      const [a, b] = contrastWindow(im, 'linear', 'percentile');
      lo = Math.min(lo, a);
      hi = Math.max(hi, b);
    }
    return [lo, hi];
  }, [query, shared]);

  useSeriesHook({
    phase,
    error,
    summary,
    query,
    // Read when asked: a query may be pending after this render.
    busy: () => busy || pending.current !== null,
    queried,
    setSource,
    setChosen,
    setPreset: (preset) => {
      if (det) setDetector(defaultSeriesDetector(det[0], det[1], preset));
    },
  });

  return (
    <>
      <button
        type="button"
        aria-expanded={open}
        onClick={() => setOpen((o) => !o)}
        data-testid="series-toggle"
      >
        Series…
      </button>
      {open ? (
        <div
          className={following ? 'series-panel docked' : 'series-panel'}
          role="dialog"
          aria-label="Series"
          data-testid="series-panel"
          onKeyDown={closeOnEscape(() => setOpen(false))}
        >
          <DialogClose onClose={() => setOpen(false)} label="the series panel" />
          <SeriesHeader
            onOpen={(folder) => void openFolder(folder)}
            opening={phase === 'opening'}
            progress={progress}
            budgetGiB={budgetGiB}
            setBudgetGiB={setBudgetGiB}
            indexOn={indexOn}
            setIndexOn={setIndexOn}
            summary={summary}
          />
          {phase === 'idle' ? (
            <p className="muted">
              Open the folder of a lossless archive (written with Archive… or <code>stemflow convert</code>),
              or drop it on the page. Its acquisitions load encoded onto the GPU, as many as the budget holds,
              and one detector mask gives the exact virtual image of every one of them.
            </p>
          ) : null}
          {error ? (
            <p className="error" role="alert" data-testid="series-error">
              {error}
            </p>
          ) : null}
          {phase === 'ready' && summary && det && scan && detector && pattern ? (
            <div className="series-body">
              <div className="series-detector">
                <ValuesCanvas
                  values={pattern}
                  rows={det[0]}
                  cols={det[1]}
                  log
                  label={`Summed diffraction pattern of ${selectedAcquisition !== undefined ? (names.get(selectedAcquisition) ?? '') : ''}`}
                />
                <SeriesMaskSource
                  source={source}
                  setSource={setSource}
                  panelFits={panelFits}
                  panelMode={panelMode}
                  panelDetector={panelDetector}
                  det={det}
                />
                <SeriesControls
                  detector={detector}
                  setDetector={setDetector}
                  det={det}
                  shared={shared}
                  setShared={setShared}
                  query={query}
                  busy={busy}
                  shapeDisabled={following}
                  onRebase={() => void rebase()}
                  rebaseNote={rebaseNote}
                />
              </div>
              <SeriesAcquisitions
                available={summary.available}
                loaded={loadedSet}
                chosen={chosen}
                setChosen={setChosen}
                onLoad={(list) => void reloadChosen(list)}
              />
              <SeriesGrid
                query={query}
                frames={frames}
                picked={picked}
                names={names}
                scan={scan}
                det={det}
                window={window_}
                selected={selected}
                setSelected={setSelected}
                setPicked={setPicked}
                onExport={exportStack}
              />
            </div>
          ) : null}
        </div>
      ) : null}
    </>
  );
}
