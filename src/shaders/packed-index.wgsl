// Build of the exact series index (src/series/packed-index.ts describes the layout) from one chunk of decoded
// counts (tans-values.wgsl's frame-major scratch): `tiles_main` adds each tile level's exact sums after the
// pixels of every frame (the index's virtual pixels), `blocks_main` finds each block's bit width and offset and each group's words,
// `scan` turns the groups' words into offsets (one workgroup per chunk) and writes the chunk's total, `pack`
// writes every block's values at its width. CPU twins: packedTiles, packedBlocks, packedScan, packedPack
// (src/series/packed-index.ts), which must give the same words.

struct Params {
  // Values per frame in the scratch: the detector's pixels, then the tiles of every level.
  pixels: u32,
  frames: u32,
  groups: u32,
  blocks_base: u32,
  bases_base: u32,
  // Word offset of the chunk's data in `data` (pack) and the chunk's slot in `totals` (scan).
  data_base: u32,
  chunk: u32,
  // tiles_main: frames [frame_first, frame_first + frames) of the chunk; the source grid (the detector's pixels,
  // or the next smaller level's tiles): its columns, rows and first virtual pixel; how many of its cells a tile
  // spans a side; the level's tiles per row, tiles, and first virtual pixel.
  frame_first: u32,
  src_cols: u32,
  src_rows: u32,
  src_base: u32,
  side: u32,
  tile_cols: u32,
  tiles: u32,
  level_base: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read_write> values: array<u32>;
@group(0) @binding(2) var<storage, read_write> blocks: array<u32>;
@group(0) @binding(3) var<storage, read_write> bases: array<u32>;
@group(0) @binding(4) var<storage, read_write> data: array<u32>;
@group(0) @binding(5) var<storage, read_write> totals: array<u32>;

// OR of block b's values of pixel p (frames past the chunk's end count as 0).
fn block_or(p: u32, b: u32) -> u32 {
  var or = 0u;
  let f0 = b * 64u;
  let f1 = min(params.frames, f0 + 64u);
  for (var f = f0; f < f1; f++) {
    or |= values[f * params.pixels + p];
  }
  return or;
}

// One invocation per (frame, tile) of a level: the exact sum of the tile's cells in its source grid, the pixels
// (the smallest level) or the tiles of the next smaller level (computed by the dispatch before; levels nest, so
// those cells cover exactly the tile's pixels inside the detector).
@compute @workgroup_size(64)
fn tiles_main(@builtin(global_invocation_id) id: vec3<u32>) {
  if (id.x >= params.frames * params.tiles) {
    return;
  }
  let f = params.frame_first + id.x / params.tiles;
  let i = id.x % params.tiles;
  let r0 = (i / params.tile_cols) * params.side;
  let c0 = (i % params.tile_cols) * params.side;
  let at = f * params.pixels;
  var sum = 0u;
  for (var r = r0; r < min(params.src_rows, r0 + params.side); r++) {
    for (var c = c0; c < min(params.src_cols, c0 + params.side); c++) {
      sum += values[at + params.src_base + r * params.src_cols + c];
    }
  }
  values[at + params.level_base + i] = sum;
}

// One invocation per (pixel, group); consecutive invocations take consecutive pixels (coalesced reads of the
// frame-major values).
@compute @workgroup_size(64)
fn blocks_main(@builtin(global_invocation_id) id: vec3<u32>) {
  if (id.x >= params.pixels * params.groups) {
    return;
  }
  let p = id.x % params.pixels;
  let g = id.x / params.pixels;
  // Block k: its words' offset from the group's first word (10 bits: at most 15 x 64) | its width << 10, two
  // blocks a word.
  var words = array<u32, 8>(0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u);
  var sum = 0u;
  for (var k = 0u; k < 16u; k++) {
    let w = 32u - countLeadingZeros(block_or(p, g * 16u + k));
    words[k >> 1u] |= (sum | (w << 10u)) << ((k & 1u) * 16u);
    sum += 2u * w;
  }
  let e = p * params.groups + g;
  for (var j = 0u; j < 8u; j++) {
    blocks[params.blocks_base + e * 8u + j] = words[j];
  }
  bases[params.bases_base + e] = sum;
}

const SCAN_THREADS: u32 = 256u;
var<workgroup> partial: array<u32, SCAN_THREADS>;

// One workgroup: exclusive prefix of the chunk's group words in (pixel, group) order; the total to totals[chunk].
@compute @workgroup_size(SCAN_THREADS)
fn scan_main(@builtin(local_invocation_index) t: u32) {
  let n = params.pixels * params.groups;
  let per = (n + SCAN_THREADS - 1u) / SCAN_THREADS;
  let e0 = min(n, t * per);
  let e1 = min(n, e0 + per);
  var sum = 0u;
  for (var e = e0; e < e1; e++) {
    sum += bases[params.bases_base + e];
  }
  partial[t] = sum;
  workgroupBarrier();
  // Inclusive scan of the per-thread sums (Hillis-Steele).
  for (var d = 1u; d < SCAN_THREADS; d <<= 1u) {
    var add = 0u;
    if (t >= d) {
      add = partial[t - d];
    }
    workgroupBarrier();
    partial[t] += add;
    workgroupBarrier();
  }
  var at = partial[t] - sum;
  for (var e = e0; e < e1; e++) {
    let words = bases[params.bases_base + e];
    bases[params.bases_base + e] = at;
    at += words;
  }
  if (t == SCAN_THREADS - 1u) {
    totals[params.chunk] = partial[t];
  }
}

// One invocation per (pixel, group), as blocks_main: the group's blocks at their widths, 64 values of w bits in
// 2 w words each, LSB first.
@compute @workgroup_size(64)
fn pack_main(@builtin(global_invocation_id) id: vec3<u32>) {
  if (id.x >= params.pixels * params.groups) {
    return;
  }
  let p = id.x % params.pixels;
  let g = id.x / params.pixels;
  let e = p * params.groups + g;
  var out = params.data_base + bases[params.bases_base + e];
  for (var k = 0u; k < 16u; k++) {
    let w = (blocks[params.blocks_base + e * 8u + (k >> 1u)] >> ((k & 1u) * 16u + 10u)) & 0x3fu;
    if (w == 0u) {
      continue;
    }
    let f0 = (g * 16u + k) * 64u;
    // Bits not yet written, LSB first: acc holds `bits` of them (< 32 between values).
    var acc = 0u;
    var bits = 0u;
    for (var j = 0u; j < 64u; j++) {
      let f = f0 + j;
      var v = 0u;
      if (f < params.frames) {
        v = values[f * params.pixels + p];
      }
      if (bits + w >= 32u) {
        // The word completes: its top 32 - bits bits are v's low bits.
        data[out] = acc | select(0u, v << bits, bits < 32u);
        out++;
        let used = 32u - bits;
        acc = select(0u, v >> used, used < 32u);
        bits = bits + w - 32u;
      } else {
        acc |= v << bits;
        bits += w;
      }
    }
  }
}
