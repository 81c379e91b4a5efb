/**
 * Jenkins lookup3 `hashlittle`, the checksum of HDF5 metadata (superblock v2/v3, object headers v2, v2 B-trees,
 * fixed and extensible arrays, fractal heaps). Written from Bob Jenkins' public-domain description.
 */
export function lookup3(data: Uint8Array, initval = 0): number {
  let length = data.length;
  let a = (0xdeadbeef + length + initval) | 0;
  let b = a;
  let c = a;
  let i = 0;
  while (length > 12) {
    a = (a + word(data, i)) | 0;
    b = (b + word(data, i + 4)) | 0;
    c = (c + word(data, i + 8)) | 0;
    // mix(a, b, c)
    a = (a - c) | 0;
    a ^= rot(c, 4);
    c = (c + b) | 0;
    b = (b - a) | 0;
    b ^= rot(a, 6);
    a = (a + c) | 0;
    c = (c - b) | 0;
    c ^= rot(b, 8);
    b = (b + a) | 0;
    a = (a - c) | 0;
    a ^= rot(c, 16);
    c = (c + b) | 0;
    b = (b - a) | 0;
    b ^= rot(a, 19);
    a = (a + c) | 0;
    c = (c - b) | 0;
    c ^= rot(b, 4);
    b = (b + a) | 0;
    length -= 12;
    i += 12;
  }
  if (length === 0) return c >>> 0;
  // The last block: up to 12 bytes, added little-endian into a, b, c.
  const tail = [0, 0, 0];
  for (let k = 0; k < length; k++) tail[k >> 2] += data[i + k] * 2 ** (8 * (k & 3));
  a = (a + tail[0]) | 0;
  b = (b + tail[1]) | 0;
  c = (c + tail[2]) | 0;
  // final(a, b, c)
  c ^= b;
  c = (c - rot(b, 14)) | 0;
  a ^= c;
  a = (a - rot(c, 11)) | 0;
  b ^= a;
  b = (b - rot(a, 25)) | 0;
  c ^= b;
  c = (c - rot(b, 16)) | 0;
  a ^= c;
  a = (a - rot(c, 4)) | 0;
  b ^= a;
  b = (b - rot(a, 14)) | 0;
  c ^= b;
  c = (c - rot(b, 24)) | 0;
  return c >>> 0;
}

function word(d: Uint8Array, i: number): number {
  return d[i] | (d[i + 1] << 8) | (d[i + 2] << 16) | (d[i + 3] << 24);
}

function rot(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}
