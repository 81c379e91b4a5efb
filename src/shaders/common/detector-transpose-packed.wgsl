// The decoded slot of detector-transpose.wgsl and detector-transpose-histogram.wgsl: packed values, read only (the
// pass over a slot of byte planes is detector-transpose-planes.wgsl, which defines the same names), and the planes
// form's helpers that main_vec4 names, empty here.
@group(0) @binding(1) var<storage, read> decoded4: array<vec4<u32>>;
override IN_BYTES: u32 = ELEM_BYTES;
const PLANES = false;
fn tile_mark_or() {}
fn tile_mark_take(lid: u32) -> u32 {
  return 0u;
}
fn clear_decoded4(i: u32) {}
