import { factorisations } from '../state/scan-shape';
import { PERCENTILE_CHOICES } from '../state/view-store';
import type { AcquisitionSummary } from '../workers/acquisition-api';
import { acquisitionClient } from '../workers/remote';
import { ArchiveDialog } from './archive/ArchiveDialog';
import { COLORMAPS } from './colormaps';
import { formatBytes, formatCount, formatShape } from './format';
import { OpenButtons } from './OpenButtons';
import { SeriesPanel } from './series/SeriesPanel';
import { acquisitionStore, useAcquisition, useView } from './stores';
import { TcbfPanel } from './tcbf/TcbfPanel';

/** App name, the Open files button, the acquisition summary and the display preferences. */
export function TopBar() {
  const summary = useAcquisition((s) => s.summary);
  const data = useAcquisition((s) => s.data);
  const colormap = useView((s) => s.colormap);
  const contrast = useView((s) => s.contrast);
  const setColormap = useView((s) => s.setColormap);
  const setContrast = useView((s) => s.setContrast);
  const percentiles = useView((s) => s.percentiles);
  const setPercentiles = useView((s) => s.setPercentiles);
  const contrastValue = contrast === 'minmax' ? 'minmax' : percentiles.join('-');
  function onContrast(value: string) {
    if (value === 'minmax') setContrast('minmax');
    else setPercentiles(value.split('-').map(Number) as [number, number]);
  }

  return (
    <header className="top-bar">
      <div className="brand">stemflow</div>
      <OpenButtons />
      <ArchiveDialog />
      <SeriesPanel />
      <TcbfPanel />
      {summary ? (
        <div className="summary" data-testid="summary">
          <span className="acq-name" title={summary.files.map((f) => f.name).join('\n')}>
            {summary.name}
          </span>
          <ScanChoice summary={summary} />
          {summary.datasets && summary.datasets.length > 1 ? <DatasetChoice summary={summary} /> : null}
          <Chip label="detector" value={formatShape(summary.detector)} />
          <Chip label="dtype" value={summary.dtype} />
          <Chip label="compression" value={summary.compression} />
          <Chip label="chunk index" value={summary.chunkIndex} />
          <Chip label="compressed" value={formatBytes(summary.compressedBytes)} />
          <Chip label="flagged pixels" value={String(summary.flaggedPixels)} />
          {data ? (
            <>
              <Chip label="max count" value={formatCount(data.maxCount)} />
              <Chip label="counts above 255" value={formatCount(data.countAbove255)} />
              {data.residentBytes !== null ? (
                <Chip label="resident" value={formatBytes(data.residentBytes)} />
              ) : null}
              {data.peakBytes !== null ? <Chip label="peak" value={formatBytes(data.peakBytes)} /> : null}
            </>
          ) : null}
        </div>
      ) : (
        <div className="summary muted">No acquisition open</div>
      )}
      <div className="prefs">
        <label>
          colormap{' '}
          <select
            value={colormap}
            onChange={(e) => setColormap(e.currentTarget.value as typeof colormap)}
            aria-label="Colormap"
          >
            {COLORMAPS.map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </select>
        </label>
        <label>
          contrast{' '}
          <select
            value={contrastValue}
            onChange={(e) => onContrast(e.currentTarget.value)}
            aria-label="Contrast"
          >
            {PERCENTILE_CHOICES.map(([lo, hi]) => (
              <option key={lo} value={`${lo}-${hi}`}>
                {lo}–{hi} %
              </option>
            ))}
            <option value="minmax">min–max</option>
          </select>
        </label>
        <BudgetChoice />
        <span
          className="keys"
          title={
            'Keyboard: B / A / D select the BF / ABF / ADF detector (Shift restores its preset); L toggles log on ' +
            'the virtual image (Shift+L on the detector); arrow keys move the picked position (Shift: 10); ' +
            'V / P / E: drag shapes, paint or erase detector pixels. ' +
            'Wheel zooms, middle button or Shift+drag pans, double-click fits.'
          }
        >
          keys
        </span>
      </div>
    </header>
  );
}

/**
 * The scan shape: ARINA files do not store it, so it is a guess (the most square factorisation, or the last
 * choice for this frame count) until the user confirms one of the factorisations of the frame count.
 */
function ScanChoice({
  summary,
}: {
  summary: { scan: [number, number]; frameCount: number; scanFromMetadata: boolean };
}) {
  const options = factorisations(summary.frameCount).slice(0, 40);
  const current = `${summary.scan[0]}x${summary.scan[1]}`;
  return (
    <label
      className="chip"
      data-testid="chip-scan"
      title="Rows x columns of the scan; the files give only the frame count"
    >
      <span className="chip-label">scan</span>{' '}
      <select
        aria-label="Scan shape"
        data-testid="scan-select"
        value={current}
        onChange={(e) => {
          const [rows, cols] = e.currentTarget.value.split('x').map(Number);
          acquisitionStore.getState().setScan([rows, cols]);
        }}
      >
        {options.map(([r, c]) => (
          <option key={`${r}x${c}`} value={`${r}x${c}`}>
            {r}×{c}
          </option>
        ))}
      </select>
      {summary.scanFromMetadata ? '' : ' (guessed)'}
    </label>
  );
}

const MIB = 1024 ** 2;
const BUDGETS: [string, number | null][] = [
  ['device limits', null],
  ['16 MiB', 16 * MIB],
  ['64 MiB', 64 * MIB],
  ['256 MiB', 256 * MIB],
  ['1 GiB', 1024 * MIB],
  ['4 GiB', 4096 * MIB],
  ['16 GiB', 16384 * MIB],
];

/**
 * The memory a load may use (GPU buffers, or worker memory on the CPU path): a load that does not fit is
 * refused before anything is allocated, and the message gives the numbers. Applies from the next load.
 */
function BudgetChoice() {
  const budget = useView((s) => s.memoryBudget);
  const setBudget = useView((s) => s.setMemoryBudget);
  return (
    <label title="Memory the next load may use; a load that does not fit is refused before allocation">
      memory{' '}
      <select
        aria-label="Memory budget"
        data-testid="budget-select"
        value={String(budget)}
        onChange={(e) => {
          const value = e.currentTarget.value === 'null' ? null : Number(e.currentTarget.value);
          setBudget(value);
          void acquisitionClient()
            .setMemoryBudget(value)
            .catch((error) => acquisitionStore.setState({ error: String(error) }));
        }}
      >
        {BUDGETS.map(([label, bytes]) => (
          <option key={label} value={String(bytes)}>
            {label}
          </option>
        ))}
      </select>
    </label>
  );
}

/** The dataset shown, among the 3D/4D datasets of a single file that holds several. */
function DatasetChoice({ summary }: { summary: AcquisitionSummary }) {
  return (
    <label className="chip" data-testid="chip-dataset" title="This file holds several 3D/4D datasets">
      <span className="chip-label">dataset</span>{' '}
      <select
        aria-label="Dataset"
        data-testid="dataset-select"
        value={summary.files[0]?.dataset}
        onChange={(e) => void acquisitionStore.getState().chooseDataset(e.currentTarget.value)}
      >
        {summary.datasets!.map((d) => (
          <option key={d.path} value={d.path}>
            {d.path} ({d.shape.join('×')} {d.dtype})
          </option>
        ))}
      </select>
    </label>
  );
}

function Chip({ label, value, hint = '' }: { label: string; value: string; hint?: string }) {
  return (
    <span className="chip" data-testid={`chip-${label.replace(/ /g, '-')}`}>
      <span className="chip-label">{label}</span> {value}
      {hint}
    </span>
  );
}
