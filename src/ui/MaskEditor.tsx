import { useState } from 'react';
import type { DetectorRegion } from '../products/detector-geometry';
import {
  type DetectorMode,
  fieldValue,
  presetRegion,
  type RegionField,
  regionFields,
  sameRegion,
  withField,
} from '../state/mask-edit';
import { acquisitionStore, useAcquisition } from './stores';

const NAMES: Record<DetectorMode, string> = { bf: 'BF disk', abf: 'ABF annulus', adf: 'ADF annulus' };
const LABELS: Record<RegionField, string> = {
  cx: 'x',
  cy: 'y',
  r: 'r',
  inner: 'r in',
  outer: 'r out',
  w: 'w',
  h: 'h',
};
const TITLES: Record<RegionField, string> = {
  cx: 'Centre x (detector column, pixel centres at integers)',
  cy: 'Centre y (detector row)',
  r: 'Radius in pixels: pixels whose centre lies within r are covered',
  inner: 'Inner radius in pixels: pixels whose centre lies within it are not covered',
  outer: 'Outer radius in pixels: pixels whose centre lies within it are covered',
  w: 'Width in pixels: pixels whose centre lies within w/2 of the centre column are covered (edges included)',
  h: 'Height in pixels: pixels whose centre lies within h/2 of the centre row are covered (edges included)',
};

/** Trims a grid value for display (values live on a 1/256 grid: at most 8 decimals, usually 2-3). */
export function formatGeometry(v: number): string {
  return String(Number(v.toFixed(8)));
}

interface MaskEditorProps {
  mode: DetectorMode;
  /** The selected shape: the detector's primary region or a shape layer. */
  region: DetectorRegion;
  rows: number;
  cols: number;
  mradPerPixel: number | null;
  /** Covered unflagged pixels. */
  covered: number;
}

/** Numeric entry of the current detector's centre and radii, its coverage and a button back to the preset. */
export function MaskEditor({ mode, region, rows, cols, mradPerPixel, covered }: MaskEditorProps) {
  const geometry = useAcquisition((s) => s.data?.geometry ?? null);
  const busy = useAcquisition((s) => s.virtualBusy);
  const selected = useAcquisition((s) => s.selectedLayer);
  const hasLayers = useAcquisition((s) => s.layers[s.detectorMode].length > 0);
  const primary = useAcquisition((s) => s.regions?.[s.detectorMode] ?? null);
  const preset = geometry ? presetRegion(mode, geometry) : null;
  const commit = (field: RegionField, value: number) =>
    void acquisitionStore.getState().setSelectedRegion(withField(region, field, value, rows, cols));
  const isPreset = !hasLayers && !!preset && !!primary && sameRegion(preset, primary);
  return (
    <div className="mask-editor" data-testid="mask-editor">
      <span className="readout-value" data-testid="mask-selected">
        {selected < 0 ? NAMES[mode] : `layer ${selected + 1}: ${region.kind}`}
      </span>
      {regionFields(region).map((field) => (
        <span key={field} className="field" title={TITLES[field]}>
          {LABELS[field]}
          <NumberField
            value={fieldValue(region, field)}
            onCommit={(v) => commit(field, v)}
            testId={`mask-${field}`}
            label={`${NAMES[mode]} ${LABELS[field]}`}
          />
          {mradPerPixel && (field === 'r' || field === 'inner' || field === 'outer') ? (
            <span className="mrad">{(fieldValue(region, field) * mradPerPixel).toFixed(2)} mrad</span>
          ) : null}
        </span>
      ))}
      <span data-testid="mask-covered">{covered} px</span>
      <button
        type="button"
        className="small"
        disabled={!preset || isPreset}
        onClick={() => void acquisitionStore.getState().applyPreset(mode)}
        title="Back to the preset from the default geometry, layers removed (Shift + B / A / D)"
        data-testid="mask-preset"
      >
        preset
      </button>
      <span className="muted" data-testid="virtual-busy" data-busy={busy ? 'true' : 'false'}>
        {busy ? 'updating…' : ''}
      </span>
    </div>
  );
}

/** A number input that commits on Enter or blur and shows the store's value otherwise (Escape reverts). */
export function NumberField(props: {
  value: number;
  onCommit(v: number): void;
  testId: string;
  label: string;
}) {
  const [draft, setDraft] = useState<string | null>(null);
  const commit = () => {
    if (draft !== null) {
      const v = Number(draft.trim());
      if (draft.trim() !== '' && Number.isFinite(v)) props.onCommit(v);
    }
    setDraft(null);
  };
  return (
    <input
      type="text"
      inputMode="decimal"
      value={draft ?? formatGeometry(props.value)}
      onChange={(e) => setDraft(e.currentTarget.value)}
      onBlur={commit}
      onKeyDown={(e) => {
        if (e.key === 'Enter') commit();
        else if (e.key === 'Escape') setDraft(null);
        else if (e.key === 'ArrowUp' || e.key === 'ArrowDown') {
          e.preventDefault();
          const step = (e.shiftKey ? 1 : 0.125) * (e.key === 'ArrowUp' ? 1 : -1);
          props.onCommit(props.value + step);
          setDraft(null);
        }
        e.stopPropagation();
      }}
      aria-label={props.label}
      data-testid={props.testId}
      spellCheck={false}
    />
  );
}
