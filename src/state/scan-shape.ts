/**
 * Scan shapes: ARINA files do not store how many rows and columns the scan had, only the frame count. The user
 * confirms a shape among the factorisations of the frame count; the last choice per frame count is remembered.
 */
export type ScanShape = [number, number];

/** Every rows x cols with rows * cols = frames, most square first, then fewer rows first. */
export function factorisations(frames: number): ScanShape[] {
  const out: ScanShape[] = [];
  for (let rows = 1; rows * rows <= frames; rows++) {
    if (frames % rows !== 0) continue;
    out.push([rows, frames / rows]);
    if (rows * rows !== frames) out.push([frames / rows, rows]);
  }
  return out.sort((a, b) => Math.abs(a[0] - a[1]) - Math.abs(b[0] - b[1]) || a[0] - b[0]);
}

/** The small key-value store preferences live in (localStorage in the browser, a Map in tests). */
export interface PreferenceStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
}

const key = (frames: number) => `stemflow.scan.${frames}`;

export function rememberScan(storage: PreferenceStorage | null, frames: number, scan: ScanShape): void {
  try {
    storage?.setItem(key(frames), `${scan[0]}x${scan[1]}`);
  } catch {
    // Private browsing or a full quota: the choice is simply not remembered.
  }
}

/** The remembered shape for this frame count, if it still fits. */
export function recentScan(storage: PreferenceStorage | null, frames: number): ScanShape | null {
  let text: string | null = null;
  try {
    text = storage?.getItem(key(frames)) ?? null;
  } catch {
    return null;
  }
  const m = text ? /^(\d+)x(\d+)$/.exec(text) : null;
  if (!m) return null;
  const scan: ScanShape = [Number(m[1]), Number(m[2])];
  return scan[0] * scan[1] === frames ? scan : null;
}
