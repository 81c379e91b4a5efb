// The decode's output, `decoded` (binding 4), as two byte planes a frame (the load's uint16 form, `planes`; only
// for values of 2 bytes): frame f from word f * words_per_frame holds
// - words [0, pw): the low plane, byte e the low byte of element e (pw = plane_words(), a multiple of 4; the
//   bytes after the values zero);
// - words [pw, 2 pw): the high plane, byte e the high byte of element e. Only nonzero 8-byte pieces are stored:
//   the slot's high plane is all zero before the decode (zeroed buffer) and after the transpose, which reads the
//   pieces back and zeroes them (detector-transpose-planes.wgsl);
// - word 2 pw (of a vec4 of 4 words): the frame's span mark, bit s set when elements [s S, (s + 1) S) hold a
//   nonzero high byte (S = span_elems()), 0 for a failed frame; the other 3 words zero.
// So words_per_frame = 2 pw + 4, and the transpose reads the low plane of every frame, half the bytes of the
// packed form, and a high plane only for the spans that are marked. Every 8-byte piece (8 elements, a multiple
// of 8 from the frame's start) is written whole, by one invocation (a write of a vector's component may access the
// whole vector). CPU twin of the form: src/kernels/decoded-planes.ts.
@group(0) @binding(4) var<storage, read_write> decoded: array<vec2<u32>>;

const OUT_VEC4 = false;
const OUT_PLANES = true;

// The word forms' stores: not reached in this form (every store is put_pair); kept so that their branches compile.
fn put_word(w: u32, v: u32) {
  decoded[w >> 1u][w & 1u] = v;
}
fn put_words4(w: u32, v: vec4<u32>) {
  decoded[w >> 1u] = v.xy;
  decoded[(w >> 1u) + 1u] = v.zw;
}

// Output words w, w + 1 (w even), one store.
fn put_pair(w: u32, v: vec2<u32>) {
  decoded[w >> 1u] = v;
}
