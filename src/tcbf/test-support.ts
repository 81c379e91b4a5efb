/** Shared by the tcBF tests: a simulated scan made resident (detector-major), its BF selection, a CPU backend. */
import { planResidentLayout, type ResidentLayout } from '../gpu/resident-layout.ts';
import { residentFromScan } from '../kernels/detector-transpose.ts';
import { type BrightFieldPixels, selectBrightField } from './bright-field.ts';
import { type Simulation, type SimulationSpec, simulate4dstem } from './simulate.ts';

export interface ResidentScan {
  spec: SimulationSpec;
  sim: Simulation;
  layout: ResidentLayout;
  resident: Uint32Array[];
  sums: Float64Array;
}

export function residentScan(spec: SimulationSpec, pixelsPerBufferLimit?: number): ResidentScan {
  const sim = simulate4dstem(spec);
  const frames = spec.scanRows * spec.scanCols;
  const pixels = sim.detRows * sim.detCols;
  const layout = planResidentLayout({
    frames,
    pixels,
    elemSize: 2,
    maxBindingBytes: 2 ** 30,
    pixelsPerBufferLimit,
  });
  const sums = new Float64Array(pixels);
  for (let f = 0; f < frames; f++) for (let p = 0; p < pixels; p++) sums[p] += sim.frames[f * pixels + p];
  return { spec, sim, layout, resident: residentFromScan(layout, sim.frames), sums };
}

export function brightField(scan: ResidentScan, margin: number): BrightFieldPixels {
  return selectBrightField(
    scan.sums,
    scan.sim.detRows,
    scan.sim.detCols,
    scan.spec.scanRows * scan.spec.scanCols,
    {
      alpha0: scan.spec.alpha0,
      dTheta: scan.sim.dTheta,
      margin,
    },
  );
}

/** The checked configuration of docs/tcbf.md: 300 kV, 64 px window at 0.25 Å, 15 mrad, 32 x 32 at 0.5 Å. */
export function baseSpec(overrides: Partial<SimulationSpec> = {}): SimulationSpec {
  return {
    volts: 300e3,
    alpha0: 0.015,
    window: 64,
    dx: 0.25,
    scanRows: 32,
    scanCols: 32,
    step: 0.5,
    aberrations: {
      C10: 200,
      C12a: 30 * Math.cos((2 * (25 * Math.PI)) / 180),
      C12b: 30 * Math.sin((2 * (25 * Math.PI)) / 180),
    },
    rmsPhase: 0.1,
    qc: 0.8,
    countsPerFrame: 1e7,
    seed: 7,
    ...overrides,
  };
}
