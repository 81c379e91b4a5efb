// Row tiles of a resident row buffer (src/gpu/resident-layout.ts; `tiledIndex` in src/gpu/resident-index.ts):
// index of word `w` of row `row` in a buffer of `rows` rows of `row_words` words stored in tiles of `tile_words`
// (positions [0, tile) of every row, row after row, then the next tile; the last tile may be shorter). Any unit
// (u32 words, vec4) where all four are in it; tile_words == row_words is the untiled layout (row * row_words + w).
fn resident_index(row: u32, w: u32, rows: u32, row_words: u32, tile_words: u32) -> u32 {
  let t0 = w - w % tile_words;
  return t0 * rows + row * min(tile_words, row_words - t0) + (w - t0);
}
