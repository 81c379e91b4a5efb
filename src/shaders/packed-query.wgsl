// Masked sums from the exact series index (src/series/packed-index.ts describes the layout): one invocation per
// frame reads, for every listed pixel, its value from the pixel's block (64 frames of one width), so a warp reads
// one block's few words together, and adds it to accumulator A or B as the list entry says (full mask: A; delta:
// added pixels A, removed B). Nothing is decoded that the mask does not cover. Each invocation owns its frame's
// sums: plain stores of (lo, hi) u32 pairs, exact. One dispatch covers the chunks of one data buffer (a chunk
// table maps invocations to chunks). CPU twin: packedQuery (src/series/packed-index.ts).

override WORKGROUP_SIZE: u32 = 64u;

struct Params {
  thread_first: u32,
  thread_count: u32,
  chunk_first: u32,
  chunk_count: u32,
}

// One chunk of the dispatch (src/series/packed-index-gpu.ts CHUNK_WORDS).
struct Chunk {
  // First invocation of the dispatch group that belongs to this chunk.
  thread_start: u32,
  frames: u32,
  groups: u32,
  // Word offsets of the chunk's data in `data`, its widths and group offsets in `widths` and `bases`.
  data_base: u32,
  widths_base: u32,
  bases_base: u32,
  // The acquisition's list entries [list_base, list_base + list_count).
  list_base: u32,
  list_count: u32,
  // Word of accumulator A of the chunk's first frame in `sums` (lo, hi per frame); B at b_base + that.
  sums_base: u32,
  b_base: u32,
  pad0: u32,
  pad1: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> data: array<u32>;
@group(0) @binding(2) var<storage, read> widths: array<u32>;
@group(0) @binding(3) var<storage, read> bases: array<u32>;
// Pixel in the low 30 bits, accumulator bits (1 = A, 2 = B) above.
@group(0) @binding(4) var<storage, read> list: array<u32>;
@group(0) @binding(5) var<storage, read_write> sums: array<u32>;
@group(0) @binding(6) var<storage, read> chunks: array<Chunk>;

// Sum of the four bytes of a word.
fn byte_sum(x: u32) -> u32 {
  let s = (x & 0x00ff00ffu) + ((x >> 8u) & 0x00ff00ffu);
  return (s & 0xffffu) + (s >> 16u);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
  if (id.x >= params.thread_count) {
    return;
  }
  let t = params.thread_first + id.x;
  var lo = params.chunk_first;
  var hi = params.chunk_first + params.chunk_count - 1u;
  while (lo < hi) {
    let mid = (lo + hi + 1u) / 2u;
    if (chunks[mid].thread_start <= t) {
      lo = mid;
    } else {
      hi = mid - 1u;
    }
  }
  let c = chunks[lo];
  let f = t - c.thread_start;
  if (f >= c.frames) {
    return;
  }
  let b = f >> 6u;
  let j = f & 63u;
  let g = b >> 4u;
  let k = b & 15u;
  // The width byte of block k and the mask of the bytes before it in its word.
  let kw = k >> 2u;
  let kb = (k & 3u) * 8u;
  let below = select(0u, 0xffffffffu >> (32u - kb), kb > 0u);
  var a_lo = 0u;
  var a_hi = 0u;
  var b_lo = 0u;
  var b_hi = 0u;
  for (var i = 0u; i < c.list_count; i++) {
    let entry = list[c.list_base + i];
    let pixel = entry & 0x3fffffffu;
    let e = pixel * c.groups + g;
    let wb = c.widths_base + e * 4u;
    // Words of the blocks before k in the group: 2 x their widths.
    var before = 0u;
    for (var q = 0u; q < kw; q++) {
      before += byte_sum(widths[wb + q]);
    }
    let word = widths[wb + kw];
    before += byte_sum(word & below);
    let w = (word >> kb) & 0xffu;
    if (w == 0u) {
      continue;
    }
    let bit = j * w;
    let at = c.data_base + bases[c.bases_base + e] + 2u * before + (bit >> 5u);
    let sh = bit & 31u;
    var v = data[at] >> sh;
    if (sh + w > 32u) {
      v |= data[at + 1u] << (32u - sh);
    }
    if (w < 32u) {
      v &= (1u << w) - 1u;
    }
    if ((entry & 0x40000000u) != 0u) {
      let s = a_lo + v;
      a_hi += select(0u, 1u, s < v);
      a_lo = s;
    }
    if ((entry & 0x80000000u) != 0u) {
      let s = b_lo + v;
      b_hi += select(0u, 1u, s < v);
      b_lo = s;
    }
  }
  let at = c.sums_base + 2u * f;
  sums[at] = a_lo;
  sums[at + 1u] = a_hi;
  sums[c.b_base + at] = b_lo;
  sums[c.b_base + at + 1u] = b_hi;
}
