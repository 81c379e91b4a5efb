import { useEffect, useState } from 'react';
import { encodeNpy } from '../../io/npy';
import { polar, TERMS } from '../../tcbf/optics';
import type { TcbfRequest, TcbfResponse, TcbfStage } from '../../workers/acquisition-api';
import { acquisitionClient } from '../../workers/remote';
import { download } from '../export';
import { acquisitionStore, useAcquisition } from '../stores';
import { TERM_NAMES } from './tcbf-terms';

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
 * The tcBF panel's state: the calibration inputs (the voltage from the acquisition's metadata when present),
 * the run (stages reported, result, error) and its export. Publishes `window.__stemflowTcbf` for the e2e tests.
 */
export function useTcbf() {
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

  return {
    kv,
    setKv,
    alphaMrad,
    setAlphaMrad,
    step,
    setStep,
    dThetaMrad,
    setDThetaMrad,
    margin,
    setMargin,
    maxOrder,
    setMaxOrder,
    factor,
    setFactor,
    rotationDeg,
    setRotationDeg,
    transpose,
    setTranspose,
    running,
    stages,
    result,
    error,
    run,
    exportResult,
  };
}
