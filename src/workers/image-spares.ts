/**
 * The series worker's spare image arrays: images the main thread no longer shows, transferred back so that a
 * query fills them (`Series.virtualImages(mask, { into })`) instead of fresh memory.
 */

/** An array a query may fill and transfer: a Uint32Array over the whole of its own (not detached) buffer. */
function usable(im: unknown): im is Uint32Array {
  return (
    im instanceof Uint32Array &&
    im.length > 0 &&
    im.byteOffset === 0 &&
    im.byteLength === im.buffer.byteLength
  );
}

/**
 * Matches spares to a query whose acquisitions' images have `lengths` values: `into` holds one distinct array
 * of each length, in order, when the spares have one for every acquisition (else undefined, and the query fills
 * fresh arrays); `kept` holds the spares left that a query of these lengths can use, at most as many of a
 * length as the query needs (the rest are left to the garbage collector). Arrays sharing a buffer count once.
 */
export function matchSpares(
  spares: readonly Uint32Array[],
  lengths: readonly number[],
): { into: Uint32Array[] | undefined; kept: Uint32Array[] } {
  const need = new Map<number, number>();
  for (const n of lengths) need.set(n, (need.get(n) ?? 0) + 1);
  const byLength = new Map<number, Uint32Array[]>();
  const buffers = new Set<ArrayBufferLike>();
  for (const im of spares) {
    if (!usable(im) || buffers.has(im.buffer)) continue;
    const list = byLength.get(im.length) ?? [];
    if (list.length >= (need.get(im.length) ?? 0)) continue;
    buffers.add(im.buffer);
    list.push(im);
    byLength.set(im.length, list);
  }
  const complete = [...need].every(([n, count]) => (byLength.get(n)?.length ?? 0) === count);
  const into = complete ? lengths.map((n) => byLength.get(n)?.pop() as Uint32Array) : undefined;
  return { into, kept: [...byLength.values()].flat() };
}

/** The distinct buffers of `arrays`, for a transfer list (a buffer listed twice fails the transfer). */
export function uniqueBuffers(arrays: readonly ArrayBufferView[]): ArrayBuffer[] {
  return [...new Set(arrays.map((a) => a.buffer as ArrayBuffer))];
}
