/**
 * The series panel's spare image arrays: the images a newer query replaced on screen, handed back to the series
 * worker with the next query (transferred: detached here once sent), which fills them again instead of fresh
 * memory. Only images nothing reads any more may be retired: the panel retires a query's images after React
 * committed a render that shows a newer query's (the canvases, the contrast window, the e2e hook and the export
 * read the shown query; the rebase compares a copy).
 */
export class SeriesSpares {
  private kept: Uint32Array[] = [];

  /** `before`'s images that `now` does not show become spares (the newest ones, at most one query's worth). */
  retire(before: readonly ArrayBufferView[], now: readonly ArrayBufferView[]): void {
    for (const im of before)
      if (
        im instanceof Uint32Array &&
        im.length > 0 &&
        !now.some((n) => n.buffer === im.buffer) &&
        !this.kept.includes(im)
      )
        this.kept.push(im);
    this.kept = this.kept.slice(Math.max(0, this.kept.length - now.length));
  }

  /** The spares for the next query (none kept after): not detached, one array per buffer. */
  take(): Uint32Array[] {
    const buffers = new Set<ArrayBufferLike>();
    const out = this.kept.filter((im) => {
      if (im.length === 0 || buffers.has(im.buffer)) return false;
      buffers.add(im.buffer);
      return true;
    });
    this.kept = [];
    return out;
  }

  clear(): void {
    this.kept = [];
  }
}
