import { useState } from 'react';
import { annulus, type DefaultGeometry, disk, rect } from '../products/detector-geometry';
import { describeLayer, type MaskLayer, shapeLayer } from '../products/detector-layers';
import { calibratedPresets } from '../state/mask-edit';
import type { DetectorTool } from '../state/view-store';
import { NumberField } from './MaskEditor';
import { Segmented } from './Segmented';
import { acquisitionStore, useAcquisition, useView } from './stores';

const NO_LAYERS: MaskLayer[] = [];

const TOOLS: { value: DetectorTool; label: string; title: string; testId: string }[] = [
  { value: 'edit', label: 'shapes', title: 'Drag shapes and their handles (V)', testId: 'tool-edit' },
  { value: 'paint', label: 'paint', title: 'Paint pixels into the detector (P)', testId: 'tool-paint' },
  { value: 'erase', label: 'erase', title: 'Erase pixels from the detector (E)', testId: 'tool-erase' },
];

/** A new shape, centred on the detector's primary region, sized from the bright-field radius. */
function newShape(kind: 'disk' | 'annulus' | 'rect', at: { cx: number; cy: number }, g: DefaultGeometry) {
  const r = Math.max(1, g.bfRadius);
  if (kind === 'disk') return disk(at.cx, at.cy, r / 2);
  if (kind === 'annulus') return annulus(at.cx, at.cy, r, 1.5 * r);
  return rect(at.cx, at.cy, r, r);
}

/**
 * The current detector's layers (after its primary region: shapes added or subtracted, brush strokes), the
 * buttons that add shapes, the drag tool (shapes, paint, erase) with the brush radius.
 */
export function LayerBar() {
  const layers = useAcquisition((s) => s.layers[s.detectorMode] ?? NO_LAYERS);
  const selected = useAcquisition((s) => s.selectedLayer);
  const primary = useAcquisition((s) => s.regions?.[s.detectorMode] ?? null);
  const geometry = useAcquisition((s) => s.data?.geometry ?? null);
  const tool = useView((s) => s.detectorTool);
  const setTool = useView((s) => s.setDetectorTool);
  const brush = useView((s) => s.brushRadius);
  const setBrush = useView((s) => s.setBrushRadius);
  if (!primary || !geometry) return null;
  const store = () => acquisitionStore.getState();
  const add = (kind: 'disk' | 'annulus' | 'rect') =>
    store().addLayer(shapeLayer(newShape(kind, primary, geometry)));
  return (
    <div className="mask-editor" data-testid="layer-bar">
      <button
        type="button"
        className="small"
        aria-pressed={selected < 0}
        onClick={() => store().selectLayer(-1)}
        data-testid="layer-primary"
        title="The detector's own region (edit it with the handles or the numbers)"
      >
        {primary.kind}
      </button>
      {layers.map((layer, i) => (
        <span
          // biome-ignore lint/suspicious/noArrayIndexKey: layers are identified by their position
          key={i}
          className="layer"
          data-testid={`layer-${i}`}
        >
          <button
            type="button"
            className="small"
            aria-pressed={selected === i}
            disabled={layer.kind !== 'shape'}
            onClick={() => store().selectLayer(i)}
            title="Select this shape to edit it"
          >
            {describeLayer(layer)}
          </button>
          <button
            type="button"
            className="small"
            onClick={() =>
              void store().setLayer(i, { ...layer, op: layer.op === 'add' ? 'subtract' : 'add' })
            }
            title="Add these pixels to the detector, or take them away"
            data-testid={`layer-${i}-op`}
          >
            {layer.op === 'add' ? '→ −' : '→ +'}
          </button>
          <button
            type="button"
            className="small"
            onClick={() => void store().removeLayer(i)}
            title="Remove this layer"
            data-testid={`layer-${i}-remove`}
          >
            ×
          </button>
        </span>
      ))}
      <span className="muted">add</span>
      {(['disk', 'annulus', 'rect'] as const).map((kind) => (
        <button
          key={kind}
          type="button"
          className="small"
          onClick={() => add(kind)}
          data-testid={`add-${kind}`}
          title={`Add a ${kind === 'rect' ? 'rectangle' : kind} to the detector (its "→ −" button subtracts it)`}
        >
          + {kind}
        </button>
      ))}
      <Segmented label="Detector tool" options={TOOLS} value={tool} onChange={setTool} />
      {tool !== 'edit' ? (
        <span
          className="field"
          title="Brush radius in pixels: pixels whose centre lies within it are painted"
        >
          brush r
          <NumberField value={brush} onCommit={setBrush} testId="brush-radius" label="Brush radius" />
        </span>
      ) : null}
    </div>
  );
}

/**
 * Presets in semi-angles: with an angular calibration (pixel size and camera length), BF/ABF/ADF from the
 * convergence semi-angle alpha (BF 0..alpha, ABF alpha/2..alpha, ADF 1.5..3 alpha); otherwise a note.
 */
export function MradPresets({ mradPerPixel }: { mradPerPixel: number | null }) {
  const geometry = useAcquisition((s) => s.data?.geometry ?? null);
  const [alpha, setAlpha] = useState<number | null>(null);
  if (!geometry) return null;
  if (!mradPerPixel) {
    return (
      <div className="mask-editor muted" data-testid="mrad-presets-missing">
        Presets in mrad need the detector pixel size and camera length, which this file does not give.
      </div>
    );
  }
  // Until the user types one, alpha is the measured bright-field disk's semi-angle.
  const value = alpha ?? Math.round(geometry.bfRadius * mradPerPixel * 100) / 100;
  const apply = () => {
    const regions = calibratedPresets(value, mradPerPixel, geometry.centre);
    if (regions) void acquisitionStore.getState().setRegions(regions);
  };
  return (
    <div className="mask-editor" data-testid="mrad-presets">
      <span className="field" title="Convergence semi-angle of the probe, in mrad">
        α
        <NumberField value={value} onCommit={setAlpha} testId="mrad-alpha" label="Convergence semi-angle" />
        mrad
      </span>
      <button
        type="button"
        className="small"
        onClick={apply}
        data-testid="mrad-apply"
        title="BF 0–α, ABF α/2–α, ADF 1.5α–3α, centred on the measured beam centre"
      >
        BF/ABF/ADF from α
      </button>
      <span className="muted">{mradPerPixel.toPrecision(4)} mrad/px</span>
    </div>
  );
}
