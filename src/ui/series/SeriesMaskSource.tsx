import type { MaskSource } from './SeriesPanel';

/** Where the series' mask comes from: its own controls, or the detector panel's current detector. */
export function SeriesMaskSource({
  source,
  setSource,
  panelFits,
  panelMode,
  panelDetector,
  det,
}: {
  source: MaskSource;
  setSource: (s: MaskSource) => void;
  /** The detector panel has a mask for a detector of the series' shape. */
  panelFits: boolean;
  panelMode: string;
  panelDetector: [number, number] | null;
  det: [number, number];
}) {
  return (
    <fieldset className="series-source">
      <legend>Mask</legend>
      <label>
        <input
          type="radio"
          name="series-source"
          checked={source === 'series'}
          onChange={() => setSource('series')}
        />{' '}
        these controls
      </label>
      <label
        title={
          panelFits
            ? 'Drag and edit masks in the detector panel: every acquisition follows'
            : 'Open an acquisition with the same detector shape in the main view first'
        }
      >
        <input
          type="radio"
          name="series-source"
          checked={source === 'panel'}
          data-testid="series-source-panel"
          onChange={() => setSource('panel')}
        />{' '}
        the detector panel's {panelMode.toUpperCase()}
      </label>
      {source === 'panel' && !panelFits ? (
        <span className="muted" data-testid="series-source-note">
          {panelDetector
            ? `The open acquisition's detector is ${panelDetector[0]} x ${panelDetector[1]}; the series' is ${det[0]} x ${det[1]}: these controls apply.`
            : 'No acquisition is open in the main view: these controls apply.'}
        </span>
      ) : null}
    </fieldset>
  );
}
