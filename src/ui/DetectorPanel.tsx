import { useCallback, useMemo, useState } from 'react';
import { type DetectorRegion, maskOutline } from '../products/detector-geometry';
import type { PatternView } from '../state/acquisition-store';
import { dragRegion, grab, type Handle, mradPerPixel, regionHandles } from '../state/mask-edit';
import { formatCount } from './format';
import {
  type DragHandler,
  ImageCanvas,
  type ImagePoint,
  type OverlayTransform,
  type PixelPosition,
} from './ImageCanvas';
import { MaskEditor } from './MaskEditor';
import { Segmented } from './Segmented';
import { acquisitionStore, useAcquisition, useView } from './stores';

const VIEWS: { view: PatternView; label: string; title: string }[] = [
  { view: 'frame', label: 'Frame', title: 'The diffraction frame at the picked scan position' },
  { view: 'sum', label: 'Sum', title: 'The sum of all frames' },
  { view: 'mean', label: 'Mean', title: 'The mean of all frames' },
];

/** How close (CSS pixels) a press must come to a handle or a circle to grab it. */
const REACH_CSS = 8;

const CURSORS: Record<Handle['field'], string> = {
  centre: 'move',
  r: 'ew-resize',
  inner: 'ew-resize',
  outer: 'ew-resize',
};

/**
 * The diffraction frame at the picked position (or the summed/mean pattern) with the virtual detector drawn
 * on it: its exact pixel coverage, the ideal circles and handles to drag (centre, radii).
 */
export function DetectorPanel() {
  const summary = useAcquisition((s) => s.summary);
  const data = useAcquisition((s) => s.data);
  const frame = useAcquisition((s) => s.frame);
  const view = useAcquisition((s) => s.patternView);
  const mode = useAcquisition((s) => s.detectorMode);
  const region = useAcquisition((s) => s.regions?.[s.detectorMode] ?? null);
  const mask = useAcquisition((s) => s.masks?.[s.detectorMode] ?? null);
  const colormap = useView((s) => s.colormap);
  const contrast = useView((s) => s.contrast);
  const percentiles = useView((s) => s.percentiles);
  const scale = useView((s) => s.detectorScale);
  const setScale = useView((s) => s.setDetectorScale);
  const [hover, setHover] = useState<PixelPosition | null>(null);
  const settings = useMemo(
    () => ({ colormap, contrast, scale, percentiles }),
    [colormap, contrast, scale, percentiles],
  );
  const [rows, cols] = summary?.detector ?? [0, 0];
  const frameCount = summary?.frameCount ?? 0;

  const mean = useMemo(
    () => (data && view === 'mean' ? data.sumDiffraction.map((v) => v / frameCount) : null),
    [data, view, frameCount],
  );
  const values: ArrayLike<number> | null =
    view === 'frame' ? (frame?.values ?? null) : view === 'sum' ? (data?.sumDiffraction ?? null) : mean;

  const outline = useMemo(() => (mask ? maskOutline(mask, rows, cols) : null), [mask, rows, cols]);
  const covered = useMemo(() => {
    if (!mask || !data) return 0;
    let n = 0;
    for (let i = 0; i < mask.length; i++) if (mask[i] && !data.pixelMask[i]) n++;
    return n;
  }, [mask, data]);
  const overlay = useCallback(
    (ctx: CanvasRenderingContext2D, t: OverlayTransform) => {
      if (!outline || !region) return;
      drawRegion(ctx, t, outline, region);
    },
    [outline, region],
  );

  const onDragStart = useCallback(
    (p: ImagePoint, pixelsPerCss: number): DragHandler | null => {
      if (!region) return null;
      const field = grab(region, p.x, p.y, REACH_CSS * pixelsPerCss);
      if (!field) return null;
      const start = region;
      const editing = mode;
      const apply = (to: ImagePoint) =>
        void acquisitionStore.getState().setRegion(editing, dragRegion(start, field, p, to, rows, cols));
      return { move: apply, end: apply };
    },
    [region, mode, rows, cols],
  );
  const cursorAt = useCallback(
    (p: ImagePoint, pixelsPerCss: number) => {
      const field = region ? grab(region, p.x, p.y, REACH_CSS * pixelsPerCss) : null;
      return field ? CURSORS[field] : null;
    },
    [region],
  );

  const picked = useAcquisition((s) => s.picked);
  const title =
    view === 'frame'
      ? frame && picked
        ? `frame ${frame.index} · scan row ${picked.row}, col ${picked.col}`
        : '\u00a0'
      : view === 'sum'
        ? `sum of ${frameCount} frames`
        : `mean of ${frameCount} frames`;

  const at = hover ? hover.row * cols + hover.col : -1;
  const flagged = at >= 0 && data ? data.pixelMask[at] === 1 : false;
  const mrad = summary ? mradPerPixel(summary.calibration) : null;
  const inside = hover && region ? hoverRadius(region, hover) : null;

  return (
    <section className="panel" aria-label="Detector">
      <header className="panel-header">
        <h2>Detector</h2>
        <Segmented
          label="Detector view"
          options={VIEWS.map((v) => ({
            value: v.view,
            label: v.label,
            title: v.title,
            testId: `view-${v.view}`,
          }))}
          value={view}
          onChange={(v) => acquisitionStore.getState().setPatternView(v)}
        />
        <Segmented
          label="Detector scale"
          options={[
            { value: 'log', label: 'log' },
            { value: 'linear', label: 'lin' },
          ]}
          value={scale}
          onChange={setScale}
        />
      </header>
      <div className="panel-sub" data-testid="detector-title">
        {title}
      </div>
      {region && summary ? (
        <MaskEditor
          mode={mode}
          region={region}
          rows={rows}
          cols={cols}
          mradPerPixel={mrad}
          covered={covered}
        />
      ) : null}
      <ImageCanvas
        values={values}
        rows={rows}
        cols={cols}
        settings={settings}
        exclude={data?.pixelMask ?? null}
        overlay={overlay}
        onHover={setHover}
        onDragStart={onDragStart}
        cursorAt={cursorAt}
        testId="detector-canvas"
        label="Detector"
        emptyText={summary ? 'Loading…' : 'No data'}
      />
      <div className="readout" data-testid="detector-readout">
        {hover && values ? (
          <>
            <span className="readout-key">cursor</span> row {hover.row}, col {hover.col}
            {' · '}
            <span className="readout-value" data-testid="detector-value">
              {view === 'mean' && data
                ? `${formatCount(data.sumDiffraction[at] / frameCount)} (sum ${formatCount(data.sumDiffraction[at])})`
                : formatCount(values[at])}
            </span>
            {flagged ? <span className="flag"> flagged pixel</span> : ' counts'}
            {inside !== null ? (
              <>
                {' · '}d {inside.toFixed(2)} px{mrad ? ` (${(inside * mrad).toFixed(2)} mrad)` : ''}
                {mask?.[at] ? ' · in detector' : ''}
              </>
            ) : null}
          </>
        ) : (
          '\u00a0'
        )}
      </div>
    </section>
  );
}

function hoverRadius(region: DetectorRegion, p: PixelPosition): number {
  return Math.hypot(p.col - region.cx, p.row - region.cy);
}

function drawRegion(
  ctx: CanvasRenderingContext2D,
  t: OverlayTransform,
  outline: Float32Array,
  region: DetectorRegion,
) {
  // The exact pixel coverage (edges of covered pixels; pixel centres at integers, edges at +-0.5).
  ctx.strokeStyle = '#4fd1ff';
  ctx.lineWidth = Math.max(1, 1.25 * t.dpr);
  ctx.beginPath();
  for (let i = 0; i < outline.length; i += 4) {
    ctx.moveTo(t.x(outline[i]), t.y(outline[i + 1]));
    ctx.lineTo(t.x(outline[i + 2]), t.y(outline[i + 3]));
  }
  ctx.stroke();
  // The ideal circles, dashed.
  const radii = region.kind === 'disk' ? [region.r] : [region.inner, region.outer];
  ctx.setLineDash([4 * t.dpr, 4 * t.dpr]);
  ctx.strokeStyle = 'rgba(255, 255, 255, 0.6)';
  ctx.lineWidth = t.dpr;
  for (const r of radii) {
    ctx.beginPath();
    ctx.arc(t.x(region.cx), t.y(region.cy), r * t.scale, 0, 2 * Math.PI);
    ctx.stroke();
  }
  ctx.setLineDash([]);
  // Handles: squares on the circles, a cross at the centre.
  const size = 4.5 * t.dpr;
  ctx.lineWidth = 1.5 * t.dpr;
  for (const h of regionHandles(region)) {
    const x = t.x(h.x);
    const y = t.y(h.y);
    if (h.field === 'centre') {
      ctx.strokeStyle = '#ffd24f';
      ctx.beginPath();
      ctx.moveTo(x - 2 * size, y);
      ctx.lineTo(x + 2 * size, y);
      ctx.moveTo(x, y - 2 * size);
      ctx.lineTo(x, y + 2 * size);
      ctx.stroke();
    } else {
      ctx.fillStyle = h.field === 'inner' ? '#ff9f4f' : '#ffd24f';
      ctx.strokeStyle = '#0b0d10';
      ctx.fillRect(x - size, y - size, 2 * size, 2 * size);
      ctx.strokeRect(x - size, y - size, 2 * size, 2 * size);
    }
  }
}
