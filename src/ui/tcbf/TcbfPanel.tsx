import { useState } from 'react';
import { acquisitionClient } from '../../workers/remote';
import { closeOnEscape, DialogClose } from '../DialogClose';
import { formatMs } from '../format';
import { useAcquisition } from '../stores';
import { TcbfResult } from './TcbfResult';
import { STAGES } from './tcbf-terms';
import { useTcbf } from './use-tcbf';

/**
 * Tilt-corrected bright field (issue #7): calibration inputs (from metadata when present, editable), run and
 * cancel, progress per stage, fitted aberrations with uncertainties, residual shift vectors, the tcBF and
 * phase-flip images, export. Runs on the loaded acquisition in the worker (GPU resident data, or the CPU).
 * State and effects live in `useTcbf`, the result's table and figures in `TcbfResult`.
 */
export function TcbfPanel() {
  const [open, setOpen] = useState(false);
  const phase = useAcquisition((s) => s.phase);
  const t = useTcbf();
  const { running, stages, result, error } = t;

  const ready = phase === 'ready';
  const num = (v: number, set: (n: number) => void, label: string, stepBy = 1) => (
    <label>
      {label}{' '}
      <input
        type="number"
        value={v}
        step={stepBy}
        aria-label={label}
        onChange={(e) => set(Number(e.currentTarget.value))}
      />
    </label>
  );

  return (
    <>
      <button type="button" aria-expanded={open} onClick={() => setOpen((o) => !o)} data-testid="tcbf-toggle">
        tcBF…
      </button>
      {open ? (
        <div
          className="tcbf-panel"
          role="dialog"
          aria-label="Tilt-corrected bright field"
          data-testid="tcbf-panel"
          onKeyDown={closeOnEscape(() => setOpen(false))}
        >
          <DialogClose onClose={() => setOpen(false)} label="the tcBF panel" />
          <h2>Tilt-corrected bright field and aberrations</h2>
          {!ready ? <p className="muted">Load an acquisition first.</p> : null}
          <div className="tcbf-inputs">
            {num(t.kv, t.setKv, 'voltage (kV)', 10)}
            {num(t.alphaMrad, t.setAlphaMrad, 'convergence semi-angle (mrad)', 0.5)}
            {num(t.step, t.setStep, 'scan step (Å)', 0.1)}
            <label>
              detector sampling (mrad/px){' '}
              <input
                value={t.dThetaMrad}
                placeholder="from the disk"
                aria-label="detector sampling (mrad/px)"
                onChange={(e) => t.setDThetaMrad(e.currentTarget.value)}
              />
            </label>
            {num(t.margin, t.setMargin, 'disk edge margin (px)')}
            <label>
              fit to order{' '}
              <select
                value={t.maxOrder}
                aria-label="fit to order"
                onChange={(e) => t.setMaxOrder(Number(e.currentTarget.value))}
              >
                {[1, 2, 3, 4, 5].map((o) => (
                  <option key={o} value={o}>
                    {o}
                  </option>
                ))}
              </select>
            </label>
            {num(t.factor, t.setFactor, 'upsampling')}
            <label>
              rotation (deg){' '}
              <input
                value={t.rotationDeg}
                placeholder="fitted"
                aria-label="rotation (deg)"
                onChange={(e) => t.setRotationDeg(e.currentTarget.value)}
              />
            </label>
            <label>
              <input
                type="checkbox"
                checked={t.transpose}
                onChange={(e) => t.setTranspose(e.currentTarget.checked)}
              />{' '}
              transposed
            </label>
          </div>
          <div className="tcbf-actions">
            <button
              type="button"
              className="primary"
              disabled={!ready || running}
              onClick={() => void t.run()}
              data-testid="tcbf-run"
            >
              Run
            </button>
            <button type="button" disabled={!running} onClick={() => void acquisitionClient().cancelTcbf?.()}>
              Cancel
            </button>
            <button type="button" disabled={!result} onClick={t.exportResult}>
              Export (JSON + NPY)
            </button>
          </div>
          <ol className="tcbf-stages" data-testid="tcbf-stages">
            {STAGES.map((s) => (
              <li key={s}>
                {s}: {result ? formatMs(result.timings[s]) : stages.includes(s) ? 'done' : running ? '…' : ''}
              </li>
            ))}
          </ol>
          {error ? (
            <p className="error" role="alert" data-testid="tcbf-error">
              {error}
            </p>
          ) : null}
          {result ? <TcbfResult result={result} maxOrder={t.maxOrder} /> : null}
        </div>
      ) : null}
    </>
  );
}
