/**
 * Electron optics of tcBF (docs/tcbf.md): the relativistic wavelength, the aberration function in Krivanek
 * notation (Cartesian coefficients) and its angular gradient, which is the parallax shift of each bright-field
 * pixel's image. Units: coefficients and shifts in Å, angles in rad, spatial frequencies in 1/Å. Vectors are
 * (row, col) pairs; the azimuth phi is measured from the row axis toward the column axis.
 */

/** Relativistic electron wavelength in Å for an accelerating voltage in volts. */
export function wavelength(volts: number): number {
  return 12.264259 / Math.sqrt(volts * (1 + 0.97846e-6 * volts));
}

/** One aberration term: radial order n (alpha^(n+1)), azimuthal order m. */
export interface AberrationTerm {
  n: number;
  m: number;
}

/**
 * Terms up to fifth order, preceded by the constant shift C01 (n = 0, m = 1): the absolute image shift is
 * arbitrary (reference choice), and without it coma leaks into other terms (docs/tcbf.md, "constant shift").
 */
export const TERMS: readonly AberrationTerm[] = [
  { n: 0, m: 1 },
  { n: 1, m: 0 },
  { n: 1, m: 2 },
  { n: 2, m: 1 },
  { n: 2, m: 3 },
  { n: 3, m: 0 },
  { n: 3, m: 2 },
  { n: 3, m: 4 },
  { n: 4, m: 1 },
  { n: 4, m: 3 },
  { n: 4, m: 5 },
  { n: 5, m: 0 },
  { n: 5, m: 2 },
  { n: 5, m: 4 },
  { n: 5, m: 6 },
];

/** A fitted parameter: the cosine part `a` (or the only part when m = 0) or the sine part `b` of a term. */
export interface Parameter {
  name: string;
  n: number;
  m: number;
  part: 'a' | 'b';
}

/** Cartesian parameters of the terms with n <= maxOrder: C01a, C01b, C10, C12a, C12b, C21a, ... */
export function parameters(maxOrder: number): Parameter[] {
  const out: Parameter[] = [];
  for (const { n, m } of TERMS) {
    if (n > maxOrder) continue;
    if (m === 0) out.push({ name: `C${n}${m}`, n, m, part: 'a' });
    else {
      out.push({ name: `C${n}${m}a`, n, m, part: 'a' });
      out.push({ name: `C${n}${m}b`, n, m, part: 'b' });
    }
  }
  return out;
}

/** Cartesian coefficients by parameter name (Å); absent names are zero. */
export type Coefficients = Readonly<Record<string, number>>;

/** Polar form of a term: magnitude C (Å) and angle phi_nm (rad, in (-pi/m, pi/m]). */
export function polar(
  coefficients: Coefficients,
  n: number,
  m: number,
): { magnitude: number; angle: number } {
  if (m === 0) return { magnitude: coefficients[`C${n}0`] ?? 0, angle: 0 };
  const a = coefficients[`C${n}${m}a`] ?? 0;
  const b = coefficients[`C${n}${m}b`] ?? 0;
  return { magnitude: Math.hypot(a, b), angle: Math.atan2(b, a) / m };
}

/** Cartesian (a, b) of a term from its polar form: a = C cos(m phi), b = C sin(m phi). */
export function cartesian(magnitude: number, angle: number, m: number): [number, number] {
  return [magnitude * Math.cos(m * angle), magnitude * Math.sin(m * angle)];
}

/**
 * The gradient of W(alpha) = sum C alpha^(n+1)/(n+1) cos(m (phi - phi_nm)) with respect to alpha for the unit
 * parameter `p` at alpha = (ar, ac) rad: the (row, col) shift in Å per Å of the parameter.
 */
export function gradientBasis(p: Parameter, ar: number, ac: number): [number, number] {
  const alpha = Math.hypot(ar, ac);
  if (p.n === 0) return p.part === 'a' ? [1, 0] : [0, 1];
  if (alpha === 0) return [0, 0];
  const phi = Math.atan2(ac, ar);
  const an = alpha ** p.n;
  const cm = Math.cos(p.m * phi);
  const sm = Math.sin(p.m * phi);
  // d/dalpha and (1/alpha) d/dphi of the term.
  const radial = p.part === 'a' ? an * cm : an * sm;
  const azimuthal = ((p.part === 'a' ? -an * sm : an * cm) * p.m) / (p.n + 1);
  const c = Math.cos(phi);
  const s = Math.sin(phi);
  return [c * radial - s * azimuthal, s * radial + c * azimuthal];
}

/**
 * All gradient basis rows at once (the same values as `gradientBasis`, one trigonometric evaluation per
 * point): row and col shifts per unit parameter into `row`, `col`.
 */
export function gradientRows(
  params: readonly Parameter[],
  ar: number,
  ac: number,
  row: Float64Array,
  col: Float64Array,
): void {
  const alpha = Math.hypot(ar, ac);
  const c = alpha === 0 ? 1 : ar / alpha;
  const s = alpha === 0 ? 0 : ac / alpha;
  // cos(m phi), sin(m phi) for m = 0..6 by angle addition; alpha^n for n = 0..5.
  const cm = [1, c, 0, 0, 0, 0, 0];
  const sm = [0, s, 0, 0, 0, 0, 0];
  for (let m = 2; m <= 6; m++) {
    cm[m] = cm[m - 1] * c - sm[m - 1] * s;
    sm[m] = sm[m - 1] * c + cm[m - 1] * s;
  }
  const an = [1, alpha, alpha ** 2, alpha ** 3, alpha ** 4, alpha ** 5];
  for (let j = 0; j < params.length; j++) {
    const p = params[j];
    if (p.n === 0) {
      row[j] = p.part === 'a' ? 1 : 0;
      col[j] = p.part === 'a' ? 0 : 1;
      continue;
    }
    const a = an[p.n];
    const radial = p.part === 'a' ? a * cm[p.m] : a * sm[p.m];
    const azimuthal = ((p.part === 'a' ? -a * sm[p.m] : a * cm[p.m]) * p.m) / (p.n + 1);
    row[j] = c * radial - s * azimuthal;
    col[j] = s * radial + c * azimuthal;
  }
}

/** W(alpha) in Å for the given coefficients (C01 included). */
export function aberrationW(coefficients: Coefficients, ar: number, ac: number, maxOrder = 5): number {
  const alpha = Math.hypot(ar, ac);
  const phi = Math.atan2(ac, ar);
  let w = 0;
  for (const p of parameters(maxOrder)) {
    const v = coefficients[p.name];
    if (!v) continue;
    const radial = alpha ** (p.n + 1) / (p.n + 1);
    w += v * radial * (p.part === 'a' ? Math.cos(p.m * phi) : Math.sin(p.m * phi));
  }
  return w;
}

/**
 * W as a fast function of alpha for many evaluations (the same sum as `aberrationW`, with cos(m phi) and
 * sin(m phi) by angle addition and no allocation per call).
 */
export function compileW(coefficients: Coefficients, maxOrder = 5): (ar: number, ac: number) => number {
  const chosen = parameters(maxOrder).filter((p) => coefficients[p.name]);
  const power = Int32Array.from(chosen, (p) => p.n + 1);
  const m = Int32Array.from(chosen, (p) => p.m);
  const sine = Uint8Array.from(chosen, (p) => (p.part === 'b' ? 1 : 0));
  const value = Float64Array.from(chosen, (p) => coefficients[p.name] / (p.n + 1));
  const cm = new Float64Array(7);
  const sm = new Float64Array(7);
  const an = new Float64Array(7);
  return (ar, ac) => {
    const alpha = Math.sqrt(ar * ar + ac * ac);
    if (alpha === 0) return 0;
    const c = ar / alpha;
    const s = ac / alpha;
    cm[0] = 1;
    sm[0] = 0;
    an[0] = 1;
    for (let k = 1; k <= 6; k++) {
      cm[k] = cm[k - 1] * c - sm[k - 1] * s;
      sm[k] = sm[k - 1] * c + cm[k - 1] * s;
      an[k] = an[k - 1] * alpha;
    }
    let w = 0;
    for (let i = 0; i < value.length; i++) w += value[i] * an[power[i]] * (sine[i] ? sm[m[i]] : cm[m[i]]);
    return w;
  };
}

/** chi(k) = 2 pi W(lambda k) / lambda, k = (kr, kc) in 1/Å. */
export function chi(
  coefficients: Coefficients,
  lambda: number,
  kr: number,
  kc: number,
  maxOrder = 5,
): number {
  return ((2 * Math.PI) / lambda) * aberrationW(coefficients, lambda * kr, lambda * kc, maxOrder);
}

/** The parallax shift (Å, row/col) at alpha: grad W. */
export function parallaxShift(
  coefficients: Coefficients,
  ar: number,
  ac: number,
  maxOrder = 5,
): [number, number] {
  let sr = 0;
  let sc = 0;
  for (const p of parameters(maxOrder)) {
    const v = coefficients[p.name];
    if (!v) continue;
    const [gr, gc] = gradientBasis(p, ar, ac);
    sr += v * gr;
    sc += v * gc;
  }
  return [sr, sc];
}

/**
 * Detector angles to the scan frame: alpha_scan = Rot(rotation) . Flip . alpha_det, where Flip swaps the row
 * and column components when `transpose` is set and Rot(t) = [[cos t, -sin t], [sin t, cos t]].
 */
export function toScanFrame(ar: number, ac: number, rotation: number, transpose: boolean): [number, number] {
  const [r, c] = transpose ? [ac, ar] : [ar, ac];
  const cs = Math.cos(rotation);
  const sn = Math.sin(rotation);
  return [cs * r - sn * c, sn * r + cs * c];
}
