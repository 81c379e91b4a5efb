/**
 * CPU twin of src/shaders/tcbf-spectrum-product.wgsl: dst[j] = src[srcOffset + j] x factor[j mod hw]
 * (complex, interleaved) for `count` images of hw elements: the cross-correlation spectrum S_k conj(R) w, or a
 * filter (phase flip) applied to a reconstruction.
 */
export function tcbfSpectrumProduct(
  src: Float64Array,
  srcOffset: number,
  count: number,
  factor: Float64Array,
  hw: number,
): Float64Array {
  const dst = new Float64Array(2 * count * hw);
  for (let j = 0; j < count * hw; j++) {
    const s = 2 * (srcOffset + j);
    const f = 2 * (j % hw);
    dst[2 * j] = src[s] * factor[f] - src[s + 1] * factor[f + 1];
    dst[2 * j + 1] = src[s] * factor[f + 1] + src[s + 1] * factor[f];
  }
  return dst;
}
