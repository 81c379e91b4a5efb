import { useCallback, useMemo, useState } from 'react';
import type { DetectorMode } from '../state/acquisition-store';
import { formatCount } from './format';
import { ImageCanvas, type OverlayTransform, type PixelPosition } from './ImageCanvas';
import { Segmented } from './Segmented';
import { acquisitionStore, useAcquisition, useView } from './stores';

const MODES: { mode: DetectorMode; label: string; title: string }[] = [
  { mode: 'bf', label: 'BF', title: 'Bright field: the disk of the direct beam' },
  { mode: 'adf', label: 'ADF', title: 'Annular dark field: 1.5x to 3x the bright-field radius' },
];

/** The virtual image of the current detector; clicking picks the scan position shown in the detector panel. */
export function VirtualImagePanel() {
  const summary = useAcquisition((s) => s.summary);
  const mode = useAcquisition((s) => s.detectorMode);
  const image = useAcquisition((s) => s.virtualImages[s.detectorMode] ?? null);
  const geometry = useAcquisition((s) => s.data?.geometry ?? null);
  const picked = useAcquisition((s) => s.picked);
  const colormap = useView((s) => s.colormap);
  const contrast = useView((s) => s.contrast);
  const scale = useView((s) => s.virtualScale);
  const setScale = useView((s) => s.setVirtualScale);
  const [hover, setHover] = useState<PixelPosition | null>(null);
  const settings = useMemo(() => ({ colormap, contrast, scale }), [colormap, contrast, scale]);
  const [rows, cols] = summary?.scan ?? [0, 0];

  const overlay = useCallback(
    (ctx: CanvasRenderingContext2D, t: OverlayTransform) => {
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
    [picked],
  );

  const shown = hover ?? picked;
  const value = shown && image ? image[shown.row * cols + shown.col] : null;
  const pickIt = useCallback((p: PixelPosition) => void acquisitionStore.getState().pick(p), []);
  const setMode = (m: DetectorMode) => void acquisitionStore.getState().setDetectorMode(m);

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
          disabled={!geometry}
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
      <div className="panel-sub">{geometry ? describeDetector(mode, geometry) : '\u00a0'}</div>
      <ImageCanvas
        values={image}
        rows={rows}
        cols={cols}
        settings={settings}
        overlay={overlay}
        onPick={pickIt}
        onHover={setHover}
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
              {formatCount(value)}
            </span>{' '}
            counts
          </>
        ) : (
          '\u00a0'
        )}
      </div>
    </section>
  );
}

function describeDetector(
  mode: DetectorMode,
  g: NonNullable<ReturnType<typeof acquisitionStore.getState>['data']>['geometry'],
): string {
  const at = `centre (x ${g.centre.cx.toFixed(2)}, y ${g.centre.cy.toFixed(2)})`;
  return mode === 'bf'
    ? `BF disk r ≤ ${g.bf.r.toFixed(2)} px, ${at}`
    : `ADF annulus ${g.adf.inner.toFixed(2)} < r ≤ ${g.adf.outer.toFixed(2)} px, ${at}`;
}
