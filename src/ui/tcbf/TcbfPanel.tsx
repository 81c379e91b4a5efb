import { useEffect, useRef, useState } from 'react';
import { encodeNpy } from '../../io/npy';
import { polar, TERMS } from '../../tcbf/optics';
import type { TcbfRequest, TcbfResponse, TcbfStage } from '../../workers/acquisition-api';
import { acquisitionClient } from '../../workers/remote';
import { closeOnEscape, DialogClose } from '../DialogClose';
import { download } from '../export';
import { formatMs } from '../format';
import { renderRgba } from '../image-mapping';
import { acquisitionStore, useAcquisition } from '../stores';

const STAGES: TcbfStage[] = ['preparation', 'initial fit', 'fit to fifth order', 'reconstruction'];
const TERM_NAMES: Record<string, string> = {
  '0,1': 'image shift',
  '1,0': 'defocus',
  '1,2': 'two-fold astigmatism',
  '2,1': 'axial coma',
  '2,3': 'three-fold astigmatism',
  '3,0': 'spherical aberration',
  '3,2': 'star aberration',
  '3,4': 'four-fold astigmatism',
  '4,1': 'fourth-order axial coma',
  '4,3': 'three-lobe aberration',
  '4,5': 'five-fold astigmatism',
  '5,0': 'fifth-order spherical',
  '5,2': 'fifth-order star',
  '5,4': 'rosette',
  '5,6': 'six-fold astigmatism',
};

function Image({
  values,
  rows,
  cols,
  label,
}: {
  values: Float64Array;
  rows: number;
  cols: number;
  label: string;
}) {
  const ref = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    const c = ref.current;
    if (!c) return;
    c.width = cols;
    c.height = rows;
    const { rgba } = renderRgba(values, { colormap: 'gray', scale: 'linear', contrast: 'percentile' });
    c.getContext('2d')?.putImageData(new ImageData(rgba as Uint8ClampedArray<ArrayBuffer>, cols, rows), 0, 0);
  }, [values, rows, cols]);
  return <canvas ref={ref} className="tcbf-image" aria-label={label} />;
}

/** Residual shift vectors at each bright-field pixel's angle, drawn as arrows (scaled to the largest). */
function Residuals({ result }: { result: TcbfResponse }) {
  const { bf, fit } = result;
  const n = bf.pixels.length;
  let rmax = 0;
  let amax = 0;
  for (let i = 0; i < n; i++) {
    const r = Math.hypot(fit.residualRow[i], fit.residualCol[i]);
    if (Number.isFinite(r)) rmax = Math.max(rmax, r);
    amax = Math.max(amax, Math.hypot(bf.alphaRow[i], bf.alphaCol[i]));
  }
  const size = 240;
  const half = size / 2;
  const scale = (half - 10) / (amax || 1);
  const arrow = rmax > 0 ? 12 / rmax : 0;
  const step = Math.max(1, Math.floor(n / 600));
  const lines = [];
  for (let i = 0; i < n; i += step) {
    const dr = fit.residualRow[i];
    const dc = fit.residualCol[i];
    if (!Number.isFinite(dr) || !Number.isFinite(dc)) continue;
    const y = half + bf.alphaRow[i] * scale;
    const x = half + bf.alphaCol[i] * scale;
    lines.push(
      <line key={i} x1={x} y1={y} x2={x + dc * arrow} y2={y + dr * arrow} stroke="#e8b04a" strokeWidth={1} />,
    );
  }
  return (
    <svg width={size} height={size} role="img" aria-label="Residual shift vectors" className="tcbf-residuals">
      <circle cx={half} cy={half} r={half - 10} fill="none" stroke="#555" />
      {lines}
      <text x={4} y={size - 4} fill="#aaa" fontSize={10}>
        longest arrow {rmax.toFixed(2)} Å
      </text>
    </svg>
  );
}

declare global {
  interface Window {
    __stemflowTcbf?: {
      state(): {
        phase: string;
        error: string | null;
        stages: string[];
        rotationDeg: number | null;
        c10: number | null;
      };
    };
  }
}

/**
 * Tilt-corrected bright field (issue #7): calibration inputs (from metadata when present, editable), run and
 * cancel, progress per stage, fitted aberrations with uncertainties, residual shift vectors, the tcBF and
 * phase-flip images, export. Runs on the loaded acquisition in the worker (GPU resident data, or the CPU).
 */
export function TcbfPanel() {
  const [open, setOpen] = useState(false);
  const phase = useAcquisition((s) => s.phase);
  const summary = useAcquisition((s) => s.summary);
  const [kv, setKv] = useState(300);
  const [alphaMrad, setAlphaMrad] = useState(20);
  const [step, setStep] = useState(1);
  const [dThetaMrad, setDThetaMrad] = useState('');
  const [margin, setMargin] = useState(1);
  const [maxOrder, setMaxOrder] = useState(5);
  const [factor, setFactor] = useState(2);
  const [rotationDeg, setRotationDeg] = useState('');
  const [transpose, setTranspose] = useState(false);
  const [running, setRunning] = useState(false);
  const [stages, setStages] = useState<TcbfStage[]>([]);
  const [result, setResult] = useState<TcbfResponse | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    const v = summary?.calibration?.voltage;
    if (v) setKv(Math.round(v / 100) / 10);
    // Results describe the acquisition they were computed on: another one clears them.
    setResult(null);
    setStages([]);
    setError(null);
  }, [summary]);

  useEffect(() => {
    window.__stemflowTcbf = {
      state: () => ({
        phase: running ? 'running' : error ? 'error' : result ? 'done' : 'idle',
        error,
        stages,
        rotationDeg: result ? (result.fit.rotation * 180) / Math.PI : null,
        c10: result ? (result.fit.coefficients.C10 ?? 0) : null,
      }),
    };
  });

  async function run() {
    const client = acquisitionClient();
    if (!client.tcbf) return;
    setRunning(true);
    setError(null);
    setResult(null);
    setStages([]);
    const request: TcbfRequest = {
      voltage: kv * 1000,
      alpha0: alphaMrad / 1000,
      step,
      margin,
      maxOrder,
      factor,
      ...(dThetaMrad.trim() ? { dTheta: Number(dThetaMrad) / 1000 } : {}),
      ...(rotationDeg.trim() ? { rotation: (Number(rotationDeg) * Math.PI) / 180, transpose } : {}),
    };
    // An answer for an acquisition that is no longer open (another was opened meanwhile) is dropped.
    const mine = acquisitionStore.getState().summary;
    const current = () => acquisitionStore.getState().summary === mine;
    try {
      const r = await client.tcbf(request, (s) => {
        if (current()) setStages((all) => (all.includes(s) ? all : [...all, s]));
      });
      if (current()) setResult(r);
    } catch (e) {
      if (current()) setError((e as Error).message);
    } finally {
      setRunning(false);
    }
  }

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

  function exportResult() {
    if (!result) return;
    const coefficients = TERMS.filter(({ n }) => n <= maxOrder).map(({ n, m }) => {
      const p = polar(result.fit.coefficients, n, m);
      const s = polar(result.fit.sigma, n, m);
      return {
        term: `C${n}${m}`,
        name: TERM_NAMES[`${n},${m}`],
        magnitudeAngstrom: p.magnitude,
        angleRad: p.angle,
        sigmaAngstrom: s.magnitude,
      };
    });
    const record = {
      acquisition: summary?.name,
      inputs: {
        voltageV: kv * 1000,
        alpha0Rad: alphaMrad / 1000,
        stepAngstrom: step,
        margin,
        maxOrder,
        factor,
      },
      rotationRad: result.fit.rotation,
      transpose: result.fit.transpose,
      rmsResidualAngstrom: result.fit.rms,
      pixelsUsed: result.fit.used,
      informationLimitPerAngstrom: result.frc.informationLimit,
      coefficients,
      cartesian: result.fit.coefficients,
      sigma: result.fit.sigma,
      timingsMs: result.timings,
      backend: result.backend,
    };
    download(
      JSON.stringify(record, null, 2),
      `${summary?.name ?? 'tcbf'}_aberrations.json`,
      'application/json',
    );
    download(
      encodeNpy(result.tcbf, [result.imageRows, result.imageCols]),
      `${summary?.name ?? 'tcbf'}_tcbf.npy`,
    );
    download(
      encodeNpy(result.phaseFlip, [result.imageRows, result.imageCols]),
      `${summary?.name ?? 'tcbf'}_phase_flip.npy`,
    );
  }

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
            {num(kv, setKv, 'voltage (kV)', 10)}
            {num(alphaMrad, setAlphaMrad, 'convergence semi-angle (mrad)', 0.5)}
            {num(step, setStep, 'scan step (Å)', 0.1)}
            <label>
              detector sampling (mrad/px){' '}
              <input
                value={dThetaMrad}
                placeholder="from the disk"
                aria-label="detector sampling (mrad/px)"
                onChange={(e) => setDThetaMrad(e.currentTarget.value)}
              />
            </label>
            {num(margin, setMargin, 'disk edge margin (px)')}
            <label>
              fit to order{' '}
              <select
                value={maxOrder}
                aria-label="fit to order"
                onChange={(e) => setMaxOrder(Number(e.currentTarget.value))}
              >
                {[1, 2, 3, 4, 5].map((o) => (
                  <option key={o} value={o}>
                    {o}
                  </option>
                ))}
              </select>
            </label>
            {num(factor, setFactor, 'upsampling')}
            <label>
              rotation (deg){' '}
              <input
                value={rotationDeg}
                placeholder="fitted"
                aria-label="rotation (deg)"
                onChange={(e) => setRotationDeg(e.currentTarget.value)}
              />
            </label>
            <label>
              <input
                type="checkbox"
                checked={transpose}
                onChange={(e) => setTranspose(e.currentTarget.checked)}
              />{' '}
              transposed
            </label>
          </div>
          <div className="tcbf-actions">
            <button
              type="button"
              className="primary"
              disabled={!ready || running}
              onClick={() => void run()}
              data-testid="tcbf-run"
            >
              Run
            </button>
            <button type="button" disabled={!running} onClick={() => void acquisitionClient().cancelTcbf?.()}>
              Cancel
            </button>
            <button type="button" disabled={!result} onClick={exportResult}>
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
          {result ? (
            <div className="tcbf-result" data-testid="tcbf-result">
              <p>
                {result.bf.pixels.length} bright-field pixels ({result.fit.used} used), rotation{' '}
                {((result.fit.rotation * 180) / Math.PI).toFixed(2)}°
                {result.fit.transpose ? ', transposed' : ''}, rms residual {result.fit.rms.toFixed(3)} Å,
                information limit {(1 / result.frc.informationLimit).toFixed(2)} Å ({result.backend})
              </p>
              <table className="tcbf-table">
                <thead>
                  <tr>
                    <th>term</th>
                    <th>aberration</th>
                    <th>C (Å)</th>
                    <th>± σ (Å)</th>
                    <th>φ (°)</th>
                  </tr>
                </thead>
                <tbody>
                  {TERMS.filter(({ n }) => n <= maxOrder).map(({ n, m }) => {
                    const p = polar(result.fit.coefficients, n, m);
                    const s = polar(result.fit.sigma, n, m);
                    return (
                      <tr key={`${n}${m}`}>
                        <td>
                          C{n}
                          {m}
                        </td>
                        <td>{TERM_NAMES[`${n},${m}`]}</td>
                        <td>{p.magnitude.toPrecision(4)}</td>
                        <td>{s.magnitude.toPrecision(2)}</td>
                        <td>{m === 0 ? '' : ((p.angle * 180) / Math.PI).toFixed(1)}</td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
              <div className="tcbf-figures">
                <Residuals result={result} />
                <figure>
                  <Image
                    values={result.tcbf}
                    rows={result.imageRows}
                    cols={result.imageCols}
                    label="tcBF image"
                  />
                  <figcaption>tcBF</figcaption>
                </figure>
                <figure>
                  <Image
                    values={result.phaseFlip}
                    rows={result.imageRows}
                    cols={result.imageCols}
                    label="Phase-flip image"
                  />
                  <figcaption>parallax phase (phase flip)</figcaption>
                </figure>
              </div>
            </div>
          ) : null}
        </div>
      ) : null}
    </>
  );
}
