/**
 * A plain reference LZ4 block decoder, written from the format description only, for differential checks of
 * src/codec/lz4.ts: a sequence is token, literal-length bytes, literals, then (unless the block ends right
 * after the literals) a 2-byte little-endian offset in 1..output-so-far and match-length bytes. The output may
 * not exceed `capacity`.
 */
export type Lz4Result = { ok: true; out: Uint8Array } | { ok: false; why: string };

export function lz4Reference(src: Uint8Array, capacity: number): Lz4Result {
  const out = new Uint8Array(capacity);
  let n = 0;
  let i = 0;
  const fail = (why: string): Lz4Result => ({ ok: false, why });
  for (;;) {
    if (i >= src.length) return fail('no token');
    const token = src[i++];
    let lit = token >> 4;
    if (lit === 15) {
      let b: number;
      do {
        if (i >= src.length) return fail('literal length runs off the end');
        b = src[i++];
        lit += b;
      } while (b === 255);
    }
    if (i + lit > src.length) return fail('literals run off the input');
    if (n + lit > capacity) return fail('literals run off the output');
    for (let k = 0; k < lit; k++) out[n++] = src[i++];
    if (i === src.length) return { ok: true, out: out.subarray(0, n) };
    if (i + 2 > src.length) return fail('offset runs off the end');
    const offset = src[i] + 256 * src[i + 1];
    i += 2;
    if (offset === 0 || offset > n) return fail('offset outside the window');
    let match = token & 15;
    if (match === 15) {
      let b: number;
      do {
        if (i >= src.length) return fail('match length runs off the end');
        b = src[i++];
        match += b;
      } while (b === 255);
    }
    match += 4;
    if (n + match > capacity) return fail('match runs off the output');
    for (let k = 0; k < match; k++, n++) out[n] = out[n - offset];
  }
}
