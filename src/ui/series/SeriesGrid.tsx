import type { SeriesQuery } from '../../workers/series-api';
import { ValuesCanvas } from './ValuesCanvas';

export interface SeriesFrames {
  /** Archive indices of the acquisitions, in the order of `values`. */
  order: number[];
  values: (Uint8Array | Uint16Array | Uint32Array)[];
}

/**
 * The series panel's images: an acquisition slider, the virtual image of each shown acquisition (in the query's
 * order; a click picks a scan position), and the frames at the picked position across them.
 */
export function SeriesGrid({
  query,
  frames,
  picked,
  names,
  scan,
  det,
  window,
  selected,
  setSelected,
  setPicked,
  onExport,
}: {
  query: SeriesQuery | null;
  frames: SeriesFrames | null;
  picked: { row: number; col: number } | null;
  names: ReadonlyMap<number, string>;
  scan: [number, number];
  det: [number, number];
  window?: [number, number];
  selected: number;
  setSelected: (i: number) => void;
  setPicked: (p: { row: number; col: number }) => void;
  /** Downloads the shown images as one NPY stack and a JSON record. */
  onExport: () => void;
}) {
  const order = query?.order ?? [];
  const name = (a: number) => names.get(a) ?? `acquisition ${a}`;
  return (
    <>
      <label className="series-slider">
        acquisition {Math.min(selected + 1, order.length)} of {order.length}:{' '}
        {order[selected] !== undefined ? name(order[selected]) : ''}{' '}
        <input
          type="range"
          min={0}
          max={Math.max(0, order.length - 1)}
          value={selected}
          aria-label="Acquisition"
          onChange={(e) => setSelected(Number(e.currentTarget.value))}
        />
      </label>{' '}
      <button
        type="button"
        className="small"
        data-testid="series-export"
        disabled={!query || order.length === 0}
        title="The exact images of the shown acquisitions as one float64 NPY (acquisitions, rows, cols), and a JSON record of the mask and order"
        onClick={onExport}
      >
        Export stack (NPY + JSON)
      </button>
      <div className="series-grid" data-testid="series-grid">
        {query?.images.map((im, i) => (
          <figure key={order[i]} className={i === selected ? 'selected' : ''}>
            <ValuesCanvas
              values={im}
              rows={scan[0]}
              cols={scan[1]}
              window={window}
              label={`Virtual image of ${name(order[i])}`}
              testId={`series-image-${i}`}
              onPick={(row, col) => {
                setSelected(i);
                setPicked({ row, col });
              }}
            />
            <figcaption>{name(order[i])}</figcaption>
          </figure>
        ))}
      </div>
      {picked && frames ? (
        <div className="series-frames" data-testid="series-frames">
          <p>
            Frames at row {picked.row}, column {picked.col}
          </p>
          <div className="series-grid">
            {frames.values.map((f, i) => (
              <figure key={frames.order[i]}>
                <ValuesCanvas
                  values={f}
                  rows={det[0]}
                  cols={det[1]}
                  log
                  label={`Frame of ${name(frames.order[i])}`}
                />
                <figcaption>{name(frames.order[i])}</figcaption>
              </figure>
            ))}
          </div>
        </div>
      ) : null}
    </>
  );
}
