import { useCallback, useMemo, useState } from 'react';
import { type DetectorRegion, maskOutline } from '../products/detector-geometry';
import { extendStroke, strokeLayer } from '../products/detector-layers';
import type { PatternView } from '../state/acquisition-store';
import { selectedRegion } from '../state/detector-edit';
import { dragRegion, grab, type Handle, mradPerPixel, regionHandles } from '../state/mask-edit';
import { formatCount } from './format';
import {
  type DragHandler,
  ImageCanvas,
  type ImagePoint,
  type OverlayTransform,
  type PixelPosition,
} from './ImageCanvas';
import { LayerBar, MradPresets } from './LayerBar';
import { MaskEditor } from './MaskEditor';
import { Segmented } from './Segmented';
import { drawScaleBar } from './scale-bar';
import { acquisitionStore, useAcquisition, useView } from './stores';

const VIEWS: { view: PatternView; label: string; title: string }[] = [
  { view: 'frame', label: 'Frame', title: 'The diffraction frame at the picked scan position' },
  {
    view: 'region',
    label: 'Region',
    title: 'The sum of the frames in the scan rectangle dragged on the virtual image (exact)',
  },
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
  corner: 'nwse-resize',
};

/** The shapes of the current detector that a press can grab: the primary region (-1) and shape layers. */
function grabbable(
  s: ReturnType<typeof acquisitionStore.getState>,
): { index: number; region: DetectorRegion }[] {
  const primary = s.regions?.[s.detectorMode];
  const out = primary ? [{ index: -1, region: primary }] : [];
  s.layers[s.detectorMode].forEach((layer, index) => {
    if (layer.kind === 'shape') out.push({ index, region: layer.region });
  });
  // The selected shape first: where shapes overlap, the one being edited wins.
  return out.sort((a, b) => Number(b.index === s.selectedLayer) - Number(a.index === s.selectedLayer));
}

/** What a press at p grabs: a handle or the inside of a shape (selected first), or null. */
function grabAt(p: ImagePoint, reach: number) {
  for (const shape of grabbable(acquisitionStore.getState())) {
    const field = grab(shape.region, p.x, p.y, reach);
    if (field) return { ...shape, field };
  }
  return null;
}

/**
 * The diffraction frame at the picked position (or the summed/mean pattern) with the virtual detector drawn
 * on it: its exact pixel coverage, the ideal circles and handles to drag (centre, radii).
 */
export function DetectorPanel() {
  const summary = useAcquisition((s) => s.summary);
  const data = useAcquisition((s) => s.data);
  const frame = useAcquisition((s) => s.frame);
  const scanRegion = useAcquisition((s) => s.scanRegion);
  const regionPattern = useAcquisition((s) =>
    s.regionPattern && s.regionPattern.region === s.scanRegion ? s.regionPattern.values : null,
  );
  const view = useAcquisition((s) => s.patternView);
  const mode = useAcquisition((s) => s.detectorMode);
  const region = useAcquisition(selectedRegion);
  const layers = useAcquisition((s) => s.layers[s.detectorMode]);
  const primary = useAcquisition((s) => s.regions?.[s.detectorMode] ?? null);
  const tool = useView((s) => s.detectorTool);
  const brush = useView((s) => s.brushRadius);
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
  const mrad = summary ? mradPerPixel(summary.calibration) : null;
  const frameCount = summary?.frameCount ?? 0;

  const mean = useMemo(
    () => (data && view === 'mean' ? data.sumDiffraction.map((v) => v / frameCount) : null),
    [data, view, frameCount],
  );
  const values: ArrayLike<number> | null =
    view === 'frame'
      ? (frame?.values ?? null)
      : view === 'region'
        ? regionPattern
        : view === 'sum'
          ? (data?.sumDiffraction ?? null)
          : mean;

  const outline = useMemo(() => (mask ? maskOutline(mask, rows, cols) : null), [mask, rows, cols]);
  const covered = useMemo(() => {
    if (!mask || !data) return 0;
    let n = 0;
    for (let i = 0; i < mask.length; i++) if (mask[i] && !data.pixelMask[i]) n++;
    return n;
  }, [mask, data]);
  const shapes = useMemo(() => {
    const out: DetectorRegion[] = primary ? [primary] : [];
    for (const layer of layers) if (layer.kind === 'shape') out.push(layer.region);
    return out;
  }, [primary, layers]);
  const overlay = useCallback(
    (ctx: CanvasRenderingContext2D, t: OverlayTransform) => {
      if (mrad) drawScaleBar(ctx, t, mrad, 'mrad');
      if (!outline || !region) return;
      drawRegion(ctx, t, outline, shapes, tool === 'edit' ? region : null);
    },
    [outline, region, shapes, tool, mrad],
  );

  const onDragStart = useCallback(
    (p: ImagePoint, pixelsPerCss: number): DragHandler | null => {
      const store = acquisitionStore.getState();
      if (!store.regions) return null;
      if (tool !== 'edit') {
        // A brush stroke: a new layer that grows with the pointer (points filled in along the path).
        let stroke = strokeLayer(tool === 'paint' ? 'add' : 'subtract', brush, [[p.x, p.y]]);
        const index = store.addLayer(stroke);
        const apply = (to: ImagePoint) => {
          stroke = extendStroke(stroke, to.x, to.y);
          void acquisitionStore.getState().setLayer(index, stroke);
        };
        return { move: apply, end: apply };
      }
      const grabbed = grabAt(p, REACH_CSS * pixelsPerCss);
      if (!grabbed) return null;
      store.selectLayer(grabbed.index);
      const { index, field, region: start } = grabbed;
      const editing = mode;
      const apply = (to: ImagePoint) => {
        const next = dragRegion(start, field, p, to, rows, cols);
        const s = acquisitionStore.getState();
        const layer = s.layers[editing][index];
        if (index < 0) void s.setRegion(editing, next);
        else if (layer?.kind === 'shape') void s.setLayer(index, { ...layer, region: next });
      };
      return { move: apply, end: apply };
    },
    [mode, rows, cols, tool, brush],
  );
  const cursorAt = useCallback(
    (p: ImagePoint, pixelsPerCss: number) => {
      if (tool !== 'edit') return 'cell';
      const grabbed = grabAt(p, REACH_CSS * pixelsPerCss);
      return grabbed ? CURSORS[grabbed.field] : null;
    },
    [tool],
  );

  const picked = useAcquisition((s) => s.picked);
  const title =
    view === 'frame'
      ? frame && picked
        ? `frame ${frame.index} · scan row ${picked.row}, col ${picked.col}`
        : '\u00a0'
      : view === 'region'
        ? scanRegion
          ? `sum of ${(scanRegion.row1 - scanRegion.row0 + 1) * (scanRegion.col1 - scanRegion.col0 + 1)} frames · scan rows ${scanRegion.row0}–${scanRegion.row1}, cols ${scanRegion.col0}–${scanRegion.col1}`
          : 'drag a rectangle on the virtual image'
        : view === 'sum'
          ? `sum of ${frameCount} frames`
          : `mean of ${frameCount} frames`;

  const at = hover ? hover.row * cols + hover.col : -1;
  const flagged = at >= 0 && data ? data.pixelMask[at] === 1 : false;
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
      <LayerBar />
      <MradPresets mradPerPixel={mrad} />
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
        emptyText={
          !summary ? 'No data' : view === 'region' && !scanRegion ? 'No scan region picked' : 'Loading…'
        }
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
  shapes: DetectorRegion[],
  selected: DetectorRegion | null,
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
  // The ideal shapes, dashed (the selected one brighter).
  ctx.setLineDash([4 * t.dpr, 4 * t.dpr]);
  ctx.lineWidth = t.dpr;
  for (const shape of shapes) {
    ctx.strokeStyle = shape === selected ? 'rgba(255, 255, 255, 0.8)' : 'rgba(255, 255, 255, 0.4)';
    ctx.beginPath();
    if (shape.kind === 'rect') {
      ctx.rect(
        t.x(shape.cx - shape.w / 2),
        t.y(shape.cy - shape.h / 2),
        shape.w * t.scale,
        shape.h * t.scale,
      );
    } else {
      for (const r of shape.kind === 'disk' ? [shape.r] : [shape.inner, shape.outer]) {
        ctx.moveTo(t.x(shape.cx) + r * t.scale, t.y(shape.cy));
        ctx.arc(t.x(shape.cx), t.y(shape.cy), r * t.scale, 0, 2 * Math.PI);
      }
    }
    ctx.stroke();
  }
  ctx.setLineDash([]);
  if (!selected) return;
  const region = selected;
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
