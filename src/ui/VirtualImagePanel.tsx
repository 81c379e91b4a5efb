import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { integrateDpc } from '../products/idpc';
import { normalizeRegion, type ScanRegion } from '../products/region-sum';
import { type DetectorMode, describeRegion } from '../state/mask-edit';
import { acquisitionClient } from '../workers/remote';
import {
  detectorRecord,
  download,
  exportName,
  virtualImageNpy,
  virtualImageTiffF32,
  virtualImageTiffU32,
} from './export';
import { formatCount } from './format';
import { Histogram } from './Histogram';
import {
  type DragHandler,
  ImageCanvas,
  type ImageCanvasHandle,
  type ImagePoint,
  type OverlayTransform,
  type PixelPosition,
} from './ImageCanvas';
import { Segmented } from './Segmented';
import { drawScaleBar } from './scale-bar';
import { acquisitionStore, useAcquisition, useView } from './stores';

const MODES: { mode: DetectorMode; label: string; title: string }[] = [
  {
    mode: 'bf',
    label: 'BF',
    title: 'Bright field: the disk of the direct beam (B; Shift+B restores the preset)',
  },
  {
    mode: 'abf',
    label: 'ABF',
    title: 'Annular bright field: half to full bright-field radius (A; Shift+A restores the preset)',
  },
  {
    mode: 'adf',
    label: 'ADF',
    title: 'Annular dark field: 1.5x to 3x the bright-field radius (D; Shift+D restores the preset)',
  },
];

const EMPTY_SCAN: [number, number] = [0, 0];

type Signal = 'sum' | 'comX' | 'comY' | 'idpc';

const SIGNALS: { signal: Signal; label: string; title: string }[] = [
  { signal: 'sum', label: 'Σ', title: 'The exact sum of the counts inside the detector' },
  {
    signal: 'comX',
    label: 'CoM x',
    title: 'Centre of mass of the counts inside the detector, x offset (DPC)',
  },
  {
    signal: 'comY',
    label: 'CoM y',
    title: 'Centre of mass of the counts inside the detector, y offset (DPC)',
  },
  {
    signal: 'idpc',
    label: 'iDPC',
    title:
      'Integrated DPC: the field whose gradient is the centre-of-mass shift (Fourier integration, float)',
  },
];

/**
 * The centre-of-mass image of the current detector's mask, recomputed when its sum image changes (so it follows
 * mask edits); offsets from the detector region's centre. Positions without counts show as 0 (readout: none).
 */
function useCentreOfMass(
  signal: Signal,
  image: Float64Array | null,
  mode: DetectorMode,
  scan: [number, number],
): Float64Array | null {
  const [result, setResult] = useState<{ key: unknown; comX: Float64Array; comY: Float64Array } | null>(null);
  const idpc = useMemo(
    () => (signal === 'idpc' && result ? integrateDpc(result.comX, result.comY, scan[0], scan[1]) : null),
    [signal, result, scan],
  );
  useEffect(() => {
    if (signal === 'sum' || !image) return;
    const s = acquisitionStore.getState();
    const mask = s.imageMasks[mode];
    const region = s.regions?.[mode];
    if (!mask || !region) return;
    let live = true;
    void acquisitionClient()
      .com(mask, [region.cx, region.cy])
      .then(({ comX, comY }) => {
        if (live) setResult({ key: image, comX, comY });
      })
      .catch((e) =>
        acquisitionStore.setState({ error: `Could not compute the centre of mass: ${String(e)}` }),
      );
    return () => {
      live = false;
    };
  }, [signal, image, mode]);
  if (signal === 'sum' || !result || result.key !== image) return null;
  if (signal === 'idpc') return idpc;
  return signal === 'comX' ? result.comX : result.comY;
}

/** The virtual image of the current detector; clicking picks the scan position shown in the detector panel. */
export function VirtualImagePanel() {
  const summary = useAcquisition((s) => s.summary);
  const mode = useAcquisition((s) => s.detectorMode);
  const image = useAcquisition((s) => s.virtualImages[s.detectorMode] ?? null);
  const region = useAcquisition((s) => s.regions?.[s.detectorMode] ?? null);
  const layerCount = useAcquisition((s) => s.layers[s.detectorMode].length);
  const picked = useAcquisition((s) => s.picked);
  const scanRegion = useAcquisition((s) => s.scanRegion);
  const [selecting, setSelecting] = useState<ScanRegion | null>(null);
  const colormap = useView((s) => s.colormap);
  const contrast = useView((s) => s.contrast);
  const percentiles = useView((s) => s.percentiles);
  const scale = useView((s) => s.virtualScale);
  const scanStep = useView((s) => s.scanStepNm);
  const setScale = useView((s) => s.setVirtualScale);
  const [hover, setHover] = useState<PixelPosition | null>(null);
  const [window, setWindow] = useState<[number, number] | null>(null);
  const [note, setNote] = useState<string | null>(null);
  const canvas = useRef<ImageCanvasHandle>(null);
  const settings = useMemo(
    () => ({ colormap, contrast, scale, percentiles }),
    [colormap, contrast, scale, percentiles],
  );
  const [rows, cols] = summary?.scan ?? [0, 0];
  // What the panel shows: the detector's exact sum, or the centre of mass (DPC) of the counts inside it.
  const [signal, setSignal] = useState<Signal>('sum');
  const com = useCentreOfMass(signal, image, mode, summary?.scan ?? EMPTY_SCAN);
  const shownImage = signal === 'sum' ? image : com;

  const overlay = useCallback(
    (ctx: CanvasRenderingContext2D, t: OverlayTransform) => {
      if (scanStep) drawScaleBar(ctx, t, scanStep, 'nm');
      const box = selecting ?? scanRegion;
      if (box) {
        // Pixel edges lie half a pixel from the centres of the first and last rows and columns.
        ctx.strokeStyle = '#ffd24f';
        ctx.lineWidth = 1.5 * t.dpr;
        ctx.setLineDash(selecting ? [4 * t.dpr, 3 * t.dpr] : []);
        ctx.strokeRect(
          t.x(box.col0 - 0.5),
          t.y(box.row0 - 0.5),
          (box.col1 - box.col0 + 1) * t.scale,
          (box.row1 - box.row0 + 1) * t.scale,
        );
        ctx.setLineDash([]);
      }
      if (!picked) return;
      const x = t.x(picked.col);
      const y = t.y(picked.row);
      const gap = Math.max(2 * t.dpr, t.scale * 0.75);
      ctx.strokeStyle = '#ff5c8a';
      ctx.lineWidth = 1.5 * t.dpr;
      ctx.beginPath();
      ctx.moveTo(0, y);
      ctx.lineTo(x - gap, y);
      ctx.moveTo(x + gap, y);
      ctx.lineTo(ctx.canvas.width, y);
      ctx.moveTo(x, 0);
      ctx.lineTo(x, y - gap);
      ctx.moveTo(x, y + gap);
      ctx.lineTo(x, ctx.canvas.height);
      ctx.stroke();
      ctx.strokeRect(x - gap, y - gap, 2 * gap, 2 * gap);
    },
    [picked, scanRegion, selecting, scanStep],
  );

  // A press picks a scan position; a drag picks the rectangle of positions it spans (summed pattern).
  const onDragStart = useCallback((p: ImagePoint): DragHandler | null => {
    const scan = acquisitionStore.getState().summary?.scan;
    if (!scan) return null;
    const at = (q: ImagePoint) => ({ row: Math.floor(q.y + 0.5), col: Math.floor(q.x + 0.5) });
    const start = at(p);
    return {
      move: (q) => setSelecting(normalizeRegion(start, at(q), scan)),
      end: (q) => {
        setSelecting(null);
        const end = at(q);
        const store = acquisitionStore.getState();
        if (end.row === start.row && end.col === start.col) {
          if (start.row >= 0 && start.row < scan[0] && start.col >= 0 && start.col < scan[1])
            void store.pick(start);
          return;
        }
        const region = normalizeRegion(start, end, scan);
        if (region) void store.pickRegion(region);
      },
    };
  }, []);

  const shown = hover ?? picked;
  const value = shown && shownImage ? shownImage[shown.row * cols + shown.col] : null;
  const pickIt = useCallback((p: PixelPosition) => void acquisitionStore.getState().pick(p), []);
  const setMode = (m: DetectorMode) => void acquisitionStore.getState().setDetectorMode(m);

  async function exportAs(kind: 'png' | 'npy' | 'tiff-f32' | 'tiff-u32' | 'json') {
    // The exported values, mask and region must belong together: let a running update finish first.
    await acquisitionStore.getState().virtualSettled();
    const s = acquisitionStore.getState();
    const image = s.virtualImages[s.detectorMode];
    const mask = s.imageMasks[s.detectorMode];
    const region = s.regions?.[s.detectorMode];
    if (!s.summary || !s.data || !image || !mask || !region || s.masks?.[s.detectorMode] !== mask) return;
    const scan = s.summary.scan;
    const record = () =>
      detectorRecord({
        summary: s.summary!,
        mode: s.detectorMode,
        region,
        layers: s.layers[s.detectorMode],
        mask,
        pixelMask: s.data!.pixelMask,
        geometry: s.data!.geometry,
        image,
        display: { ...settings },
        backend: s.data!.backend,
      });
    const description = () => `stemflow ${JSON.stringify(record().detector.region)}`;
    const name = (ext: string) => exportName(s.summary!, s.detectorMode, ext);
    setNote(null);
    if (kind === 'png') {
      const blob = await canvas.current?.toPng();
      if (blob) download(blob, name('png'));
    } else if (kind === 'npy') {
      download(virtualImageNpy(image, scan), name('npy'));
    } else if (kind === 'tiff-u32') {
      const out = virtualImageTiffU32(image, scan, description());
      if ('error' in out) setNote(out.error);
      else download(out.bytes, name('tif'), 'image/tiff');
    } else if (kind === 'tiff-f32') {
      const out = virtualImageTiffF32(image, scan, description());
      if (!out.exact) setNote('float32 rounded values above 2^24: use uint32 TIFF or NPY for exact values.');
      download(out.bytes, name('f32.tif'), 'image/tiff');
    } else {
      download(JSON.stringify(record(), null, 2), name('json'), 'application/json');
    }
  }

  return (
    <section className="panel" aria-label="Virtual image">
      <header className="panel-header">
        <h2>Virtual image</h2>
        <Segmented
          label="Virtual detector"
          options={MODES.map((m) => ({
            value: m.mode,
            label: m.label,
            title: m.title,
            testId: `mode-${m.mode}`,
          }))}
          value={mode}
          onChange={setMode}
          disabled={!region}
        />
        <Segmented
          label="Signal"
          options={SIGNALS.map((x) => ({
            value: x.signal,
            label: x.label,
            title: x.title,
            testId: `signal-${x.signal}`,
          }))}
          value={signal}
          onChange={setSignal}
          disabled={!region}
        />
        <Segmented
          label="Virtual image scale"
          options={[
            { value: 'linear', label: 'lin' },
            { value: 'log', label: 'log' },
          ]}
          value={scale}
          onChange={setScale}
        />
      </header>
      <div className="panel-sub" data-testid="virtual-detector">
        {region
          ? `${mode.toUpperCase()} ${describeRegion(region)}${layerCount ? ` + ${layerCount} layer${layerCount > 1 ? 's' : ''}` : ''}`
          : '\u00a0'}
      </div>
      <ImageCanvas
        ref={canvas}
        values={shownImage}
        rows={rows}
        cols={cols}
        settings={settings}
        overlay={overlay}
        onPick={pickIt}
        onDragStart={onDragStart}
        onHover={setHover}
        onRendered={setWindow}
        testId="virtual-canvas"
        label="Virtual image"
        emptyText={summary ? 'Computing the virtual image…' : 'No data'}
      />
      <div className="readout" data-testid="virtual-readout">
        {shown && value !== null ? (
          <>
            <span className="readout-key">{hover ? 'cursor' : 'picked'}</span> row {shown.row}, col{' '}
            {shown.col}
            {' · '}
            <span className="readout-value" data-testid="virtual-value">
              {signal === 'sum' ? formatCount(value) : Number.isNaN(value) ? 'no counts' : value.toFixed(4)}
            </span>{' '}
            {signal === 'sum'
              ? 'counts'
              : signal === 'idpc'
                ? '(iDPC, px x scan px)'
                : 'px from the detector centre'}
          </>
        ) : (
          '\u00a0'
        )}
      </div>
      <div className="tools">
        <Histogram values={shownImage} scale={scale} window={window} testId="virtual-histogram" />
        <ScanStepField />
        <span>export</span>
        {(
          [
            ['png', 'PNG', 'The image as shown (colormap and contrast), one pixel per scan position'],
            ['npy', 'NPY', 'The exact values as float64 (exact below 2^53), shape (rows, cols)'],
            ['tiff-u32', 'TIFF u32', 'The exact values as a uint32 TIFF'],
            ['tiff-f32', 'TIFF f32', 'The values as a float32 TIFF (exact below 2^24)'],
            ['json', 'JSON', 'The detector, the acquisition and its calibration, to reproduce the image'],
          ] as const
        ).map(([kind, label, title]) => (
          <button
            key={kind}
            type="button"
            className="small"
            title={title}
            disabled={!image}
            data-testid={`export-${kind}`}
            onClick={() => void exportAs(kind)}
          >
            {label}
          </button>
        ))}
        {note ? (
          <span className="flag" data-testid="export-note">
            {note}
          </span>
        ) : null}
      </div>
    </section>
  );
}

/** The scan step (nm between scan positions) for the scale bar; the files do not record it. */
function ScanStepField() {
  const step = useView((s) => s.scanStepNm);
  const setStep = useView((s) => s.setScanStep);
  const [draft, setDraft] = useState<string | null>(null);
  const commit = () => {
    if (draft !== null) setStep(draft.trim() === '' ? null : Number(draft));
    setDraft(null);
  };
  return (
    <label className="field" title="Distance between scan positions in nm, for the scale bar (empty: no bar)">
      step{' '}
      <input
        type="text"
        inputMode="decimal"
        className="step-input"
        value={draft ?? (step === null ? '' : String(step))}
        placeholder="nm"
        onChange={(e) => setDraft(e.currentTarget.value)}
        onBlur={commit}
        onKeyDown={(e) => {
          if (e.key === 'Enter') commit();
          else if (e.key === 'Escape') setDraft(null);
          e.stopPropagation();
        }}
        aria-label="Scan step in nm"
        data-testid="scan-step"
      />{' '}
      nm
    </label>
  );
}
