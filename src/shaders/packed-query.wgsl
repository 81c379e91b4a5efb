// Masked sums from the exact series index (src/series/packed-index.ts describes the layout): one invocation per
// frame reads, for every list entry (a pixel or a tile), its value from the entry's block (64 frames of one
// width), so a warp reads one block's few words together. A list holds the entries that add (accumulator A)
// first, `list_count_a` of them, then those that subtract (B: the pixels a mask leaves out of a tile it adds
// whole, or a delta's removed pixels); the two ranges are summed apart. Nothing is decoded that the mask does not
// cover. Each invocation owns its frame: it writes the frame's new image value, exact in (lo, hi) u32, into the
// acquisition's resident image (a full mask: A - B; a delta: the image before + A - B) and its low word into
// `out`, the readback, with a flag word after the frames set when any value needs its high word. One dispatch
// covers the chunks of one acquisition in one data buffer (a chunk table maps invocations to chunks). CPU twin:
// packedQuery (src/series/packed-index.ts).

override WORKGROUP_SIZE: u32 = 64u;

struct Params {
  thread_first: u32,
  thread_count: u32,
  chunk_first: u32,
  chunk_count: u32,
  // The acquisition's list entries [list_base, list_base + list_count) (a dispatch covers one acquisition).
  list_base: u32,
  list_count: u32,
  // Entries [0, list_count_a) add to accumulator A, the rest to B.
  list_count_a: u32,
  // 1: add this query's A - B to the image before (a delta); 0: the image is A - B.
  delta: u32,
  // Frames of the acquisition: `out[frames]` is the high-word flag.
  frames: u32,
}

// One chunk of the dispatch (src/series/packed-index-gpu.ts CHUNK_WORDS).
struct Chunk {
  // First invocation of the dispatch that belongs to this chunk.
  thread_start: u32,
  frames: u32,
  groups: u32,
  // Word offsets of the chunk's data in `data`, its block table and its group offsets.
  data_base: u32,
  blocks_base: u32,
  bases_base: u32,
  // The chunk's first frame in the acquisition.
  frame_base: u32,
  pad: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> data: array<u32>;
// The block table: per (pixel, group) 8 words, block k's offset from the group's first word | width << 10 in the
// 16 bits at word k >> 1, shift (k & 1) * 16.
@group(0) @binding(2) var<storage, read> blocks: array<u32>;
@group(0) @binding(3) var<storage, read> bases: array<u32>;
// Pixel in the low 30 bits, accumulator bits (1 = A, 2 = B) above.
@group(0) @binding(4) var<storage, read> list: array<u32>;
// The acquisition's image for the last mask, (lo, hi) per frame.
@group(0) @binding(5) var<storage, read_write> image: array<u32>;
@group(0) @binding(6) var<storage, read> chunks: array<Chunk>;
// Low words of the new image, then the flag.
@group(0) @binding(7) var<storage, read_write> out: array<u32>;

// The list is read LIST_TILE entries at a time into workgroup memory (one load per entry per workgroup).
const LIST_TILE: u32 = 256u;
var<workgroup> tile: array<u32, LIST_TILE>;

// This invocation's frame: its chunk, and its place in the chunk's blocks.
var<private> c: Chunk;
var<private> j: u32;
var<private> g: u32;
// The word of the block table holding this block's entry, and the entry's shift in it.
var<private> kw: u32;
var<private> ks: u32;

// The value at this invocation's frame of the block whose table word (offset from the group's first word |
// width << 10, at shift ks) and group offset are given. Both data words are always read (0 bits used for width 0),
// so no branch stands between the loads of different entries.
fn value_of(word: u32, base: u32) -> u32 {
  let h = (word >> ks) & 0xffffu;
  let w = h >> 10u;
  let bit = j * w;
  let i = c.data_base + base + (h & 0x3ffu) + (bit >> 5u);
  let sh = bit & 31u;
  let lo = data[i];
  let hi = data[i + 1u];
  return extractBits((lo >> sh) | select(0u, hi << (32u - sh), sh != 0u), 0u, w);
}

// Entries a step reads together: every metadata load, then every data load, issued before any value is used.
const STEP: u32 = 8u;

// The exact sum (lo, hi) of this invocation's values of list entries [begin, end) (uniform bounds: every
// invocation of the workgroup takes part in the list loads).
fn sum_entries(local: u32, begin: u32, end: u32) -> vec2<u32> {
  var lo = 0u;
  var hi = 0u;
  for (var first = begin; first < end; first += LIST_TILE) {
    let n = min(LIST_TILE, end - first);
    workgroupBarrier();
    for (var i = local; i < LIST_TILE; i += WORKGROUP_SIZE) {
      tile[i] = select(0u, list[params.list_base + first + i], i < n);
    }
    workgroupBarrier();
    for (var i = 0u; i < n; i += STEP) {
      var m: array<u32, STEP>;
      var base: array<u32, STEP>;
      for (var u = 0u; u < STEP; u++) {
        let at = (tile[i + u] & 0x3fffffffu) * c.groups + g;
        // Entries past the range read pixel 0 with width 0: they add nothing.
        m[u] = select(0u, blocks[c.blocks_base + at * 8u + kw], i + u < n);
        base[u] = bases[c.bases_base + at];
      }
      for (var u = 0u; u < STEP; u++) {
        let v = value_of(m[u], base[u]);
        let s = lo + v;
        hi += select(0u, 1u, s < v);
        lo = s;
      }
    }
  }
  return vec2<u32>(lo, hi);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(local_invocation_index) local: u32) {
  // Every invocation takes part in the list loads (workgroup barriers); those past the dispatch's frames store
  // nothing.
  let t = params.thread_first + min(id.x, params.thread_count - 1u);
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
  c = chunks[lo];
  let f = min(t - c.thread_start, c.frames - 1u);
  let b = f >> 6u;
  j = f & 63u;
  g = b >> 4u;
  let k = b & 15u;
  kw = k >> 1u;
  ks = (k & 1u) * 16u;
  let a = sum_entries(local, 0u, params.list_count_a);
  let r = sum_entries(local, params.list_count_a, params.list_count);
  if (id.x >= params.thread_count || t - c.thread_start >= c.frames) {
    return;
  }
  let frame = c.frame_base + f;
  var v_lo = a.x;
  var v_hi = a.y;
  if (params.delta != 0u) {
    let s = image[2u * frame] + v_lo;
    v_hi += image[2u * frame + 1u] + select(0u, 1u, s < v_lo);
    v_lo = s;
  }
  // Minus B, modulo 2^64 (the image of the new mask is never negative, so the result is exact).
  v_hi -= r.y + select(0u, 1u, v_lo < r.x);
  v_lo -= r.x;
  image[2u * frame] = v_lo;
  image[2u * frame + 1u] = v_hi;
  out[frame] = v_lo;
  if (v_hi != 0u) {
    out[params.frames] = 1u;
  }
}
