/**
 * The series panel's acquisition chooser: every acquisition of the archive, the chosen ones first in the order
 * their images are shown (moved with the arrows). Loaded ones show and hide at once; choosing ones that are not
 * loaded offers to load the chosen set (refused with the numbers when it does not fit, the loaded set kept).
 */
export function SeriesAcquisitions({
  available,
  loaded,
  chosen,
  setChosen,
  onLoad,
}: {
  available: { index: number; name: string }[];
  loaded: ReadonlySet<number>;
  chosen: number[];
  setChosen: (chosen: number[]) => void;
  onLoad: (chosen: number[]) => void;
}) {
  const rows = [
    ...chosen.map((i) => available.find((a) => a.index === i)).filter((a) => a !== undefined),
    ...available.filter((a) => !chosen.includes(a.index)),
  ];
  const move = (at: number, by: number) => {
    const next = chosen.slice();
    [next[at], next[at + by]] = [next[at + by], next[at]];
    setChosen(next);
  };
  const unloaded = chosen.filter((i) => !loaded.has(i)).length;
  return (
    <fieldset className="series-acquisitions" data-testid="series-acquisitions">
      <legend>Acquisitions (shown in this order)</legend>
      <ol>
        {rows.map((a) => {
          const at = chosen.indexOf(a.index);
          return (
            <li key={a.index}>
              <label>
                <input
                  type="checkbox"
                  checked={at >= 0}
                  aria-label={`Show ${a.name}`}
                  onChange={(e) =>
                    setChosen(
                      e.currentTarget.checked ? [...chosen, a.index] : chosen.filter((i) => i !== a.index),
                    )
                  }
                />{' '}
                {a.name}
              </label>{' '}
              <span className="muted">{loaded.has(a.index) ? 'loaded' : 'not loaded'}</span>
              {at >= 0 ? (
                <>
                  {' '}
                  <button
                    type="button"
                    className="small"
                    aria-label={`Move ${a.name} up`}
                    disabled={at === 0}
                    onClick={() => move(at, -1)}
                  >
                    ↑
                  </button>
                  <button
                    type="button"
                    className="small"
                    aria-label={`Move ${a.name} down`}
                    disabled={at === chosen.length - 1}
                    onClick={() => move(at, 1)}
                  >
                    ↓
                  </button>
                </>
              ) : null}
            </li>
          );
        })}
      </ol>
      {unloaded > 0 ? (
        <button
          type="button"
          className="primary"
          data-testid="series-load-chosen"
          onClick={() => onLoad(chosen)}
        >
          Load the {chosen.length} chosen ({unloaded} not loaded yet)
        </button>
      ) : null}
    </fieldset>
  );
}
