import { useEffect, useRef } from 'react';
import { polar, TERMS } from '../../tcbf/optics';
import type { TcbfResponse } from '../../workers/acquisition-api';
import { renderRgba } from '../image-mapping';
import { TERM_NAMES } from './tcbf-terms';

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

/**
 * A finished tcBF run: the fit's summary line, the aberrations up to `maxOrder` with their uncertainties, the
 * residual shift vectors, and the tcBF and phase-flip images.
 */
export function TcbfResult({ result, maxOrder }: { result: TcbfResponse; maxOrder: number }) {
  return (
    <div className="tcbf-result" data-testid="tcbf-result">
      <p>
        {result.bf.pixels.length} bright-field pixels ({result.fit.used} used), rotation{' '}
        {((result.fit.rotation * 180) / Math.PI).toFixed(2)}°{result.fit.transpose ? ', transposed' : ''}, rms
        residual {result.fit.rms.toFixed(3)} Å, information limit{' '}
        {(1 / result.frc.informationLimit).toFixed(2)} Å ({result.backend})
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
          <Image values={result.tcbf} rows={result.imageRows} cols={result.imageCols} label="tcBF image" />
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
  );
}
