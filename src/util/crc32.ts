/**
 * CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320: the checksum ZIP stores for each member), table-driven
 * and sliced by 8 bytes. Used by the .npz writer (src/archive/npz.ts), in the browser as in Node.
 */
const TABLES = (() => {
  const t = new Uint32Array(8 * 256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  for (let k = 1; k < 8; k++) {
    for (let n = 0; n < 256; n++) {
      const prev = t[(k - 1) * 256 + n];
      t[k * 256 + n] = (prev >>> 8) ^ t[prev & 0xff];
    }
  }
  return t;
})();

/** The CRC-32 of `bytes`, continuing from `crc` (the CRC of the bytes before; 0 to start). */
export function crc32(bytes: Uint8Array, crc = 0): number {
  const t = TABLES;
  let c = ~crc >>> 0;
  const n = bytes.length;
  let i = 0;
  for (; i + 8 <= n; i += 8) {
    const lo = (c ^ (bytes[i] | (bytes[i + 1] << 8) | (bytes[i + 2] << 16) | (bytes[i + 3] << 24))) >>> 0;
    const hi = bytes[i + 4] | (bytes[i + 5] << 8) | (bytes[i + 6] << 16) | (bytes[i + 7] << 24);
    c =
      t[7 * 256 + (lo & 0xff)] ^
      t[6 * 256 + ((lo >>> 8) & 0xff)] ^
      t[5 * 256 + ((lo >>> 16) & 0xff)] ^
      t[4 * 256 + (lo >>> 24)] ^
      t[3 * 256 + (hi & 0xff)] ^
      t[2 * 256 + ((hi >>> 8) & 0xff)] ^
      t[256 + ((hi >>> 16) & 0xff)] ^
      t[hi >>> 24];
  }
  for (; i < n; i++) c = t[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return ~c >>> 0;
}
