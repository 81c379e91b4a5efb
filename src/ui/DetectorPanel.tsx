import { useCallback, useMemo, useState } from 'react';
import { maskOutline } from '../products/detector-geometry';
import type { PatternView } from '../state/acquisition-store';
import { formatCount } from './format';
import { ImageCanvas, type OverlayTransform, type PixelPosition } from './ImageCanvas';
import { Segmented } from './Segmented';
import { acquisitionStore, useAcquisition, useView } from './stores';

const VIEWS: { view: PatternView; label: string; title: string }[] = [
  { view: 'frame', label: 'Frame', title: 'The diffraction frame at the picked scan position' },
  { view: 'sum', label: 'Sum', title: 'The sum of all frames' },
  { view: 'mean', label: 'Mean', title: 'The mean of all frames' },
];

/** The diffraction frame at the picked position (or the summed/mean pattern) with the detector outline. */
export function DetectorPanel() {
  const summary = useAcquisition((s) => s.summary);
  const data = useAcquisition((s) => s.data);
  const frame = useAcquisition((s) => s.frame);
  const view = useAcquisition((s) => s.patternView);
  const mode = useAcquisition((s) => s.detectorMode);
  const colormap = useView((s) => s.colormap);
  const contrast = useView((s) => s.contrast);
  const scale = useView((s) => s.detectorScale);
  const setScale = useView((s) => s.setDetectorScale);
  const [hover, setHover] = useState<PixelPosition | null>(null);
  const settings = useMemo(() => ({ colormap, contrast, scale }), [colormap, contrast, scale]);
  const [rows, cols] = summary?.detector ?? [0, 0];
  const frameCount = summary?.frameCount ?? 0;

  const mean = useMemo(
    () => (data && view === 'mean' ? data.sumDiffraction.map((v) => v / frameCount) : null),
    [data, view, frameCount],
  );
  const values: ArrayLike<number> | null =
    view === 'frame' ? (frame?.values ?? null) : view === 'sum' ? (data?.sumDiffraction ?? null) : mean;

  const mask = data?.masks[mode] ?? null;
  const outline = useMemo(() => (mask ? maskOutline(mask, rows, cols) : null), [mask, rows, cols]);
  const region = data ? data.geometry[mode] : null;
  const overlay = useCallback(
    (ctx: CanvasRenderingContext2D, t: OverlayTransform) => {
      if (!outline || !region) return;
      // The exact pixel coverage (edges of covered pixels), then the ideal circles, dashed.
      ctx.strokeStyle = '#4fd1ff';
      ctx.lineWidth = Math.max(1, 1.25 * t.dpr);
      ctx.beginPath();
      for (let i = 0; i < outline.length; i += 4) {
        ctx.moveTo(t.x(outline[i]), t.y(outline[i + 1]));
        ctx.lineTo(t.x(outline[i + 2]), t.y(outline[i + 3]));
      }
      ctx.stroke();
      const radii = region.kind === 'disk' ? [region.r] : [region.inner, region.outer];
      ctx.setLineDash([4 * t.dpr, 4 * t.dpr]);
      ctx.strokeStyle = 'rgba(255, 255, 255, 0.55)';
      ctx.lineWidth = t.dpr;
      for (const r of radii) {
        ctx.beginPath();
        ctx.arc(t.x(region.cx), t.y(region.cy), r * t.scale, 0, 2 * Math.PI);
        ctx.stroke();
      }
      ctx.setLineDash([]);
    },
    [outline, region],
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
      <ImageCanvas
        values={values}
        rows={rows}
        cols={cols}
        settings={settings}
        exclude={data?.pixelMask ?? null}
        overlay={overlay}
        onHover={setHover}
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
          </>
        ) : (
          '\u00a0'
        )}
      </div>
    </section>
  );
}
