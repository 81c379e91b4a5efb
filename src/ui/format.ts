/** Number and size formatting for the panels. Counts are shown in full: every digit is exact. */
export function formatCount(v: number): string {
  return Number.isInteger(v) ? String(v) : v.toPrecision(8);
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v.toFixed(v < 10 ? 2 : 1)} ${units[u]}`;
}

export function formatMs(ms: number): string {
  return `${Math.round(ms)} ms`;
}

export function formatShape([a, b]: [number, number]): string {
  return `${a}×${b}`;
}
