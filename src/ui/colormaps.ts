/**
 * Colormaps as 256-entry RGB tables (Uint8Array of 768 bytes: r, g, b per level).
 *
 * viridis comes from the degree-6 polynomial fit of matplotlib's viridis by Matt Zucconi ("mattz",
 * shadertoy WlfXRN): within about 5/255 of matplotlib's table at every level. The table is generated
 * once at module load from that formula.
 */
export type ColormapName = 'gray' | 'viridis';

export const COLORMAPS: ColormapName[] = ['gray', 'viridis'];

const VIRIDIS_COEFFICIENTS: [number, number, number][] = [
  [0.2777273272234177, 0.005407344544966578, 0.3340998053353061],
  [0.1050930431085774, 1.404613529898575, 1.384590162594685],
  [-0.3308618287255563, 0.214847559468213, 0.09509516302823659],
  [-4.634230498983486, -5.799100973351585, -19.33244095627987],
  [6.228269936347081, 14.17993336680509, 56.69055260068105],
  [4.776384997670288, -13.74514537774601, -65.35303263337234],
  [-5.435455855934631, 4.645852612178535, 26.3124352495832],
];

function table(f: (t: number) => [number, number, number]): Uint8Array {
  const out = new Uint8Array(256 * 3);
  for (let i = 0; i < 256; i++) {
    const rgb = f(i / 255);
    for (let k = 0; k < 3; k++) out[i * 3 + k] = Math.round(Math.min(1, Math.max(0, rgb[k])) * 255);
  }
  return out;
}

function viridis(t: number): [number, number, number] {
  const channel = (k: number) => VIRIDIS_COEFFICIENTS.reduceRight((acc, c) => acc * t + c[k], 0);
  return [channel(0), channel(1), channel(2)];
}

const TABLES: Record<ColormapName, Uint8Array> = {
  gray: table((t) => [t, t, t]),
  viridis: table(viridis),
};

export function colormapTable(name: ColormapName): Uint8Array {
  return TABLES[name];
}

/** The colour drawn for pixels the detector flagged (dead, hot, gaps): they carry no signal. */
export const FLAGGED_RGB: [number, number, number] = [200, 40, 60];
