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

// Every 64 invocations of a workgroup are one block's frames: 64 consecutive frames of one chunk (the chunk
// table pads each chunk's invocations to a multiple of 64), so they read the same block of every entry. They
// resolve the list LIST_TILE entries at a time into workgroup memory together (each invocation one entry in 64:
// its block's data word, from the block table and the group offset, and its width), and every invocation then
// reads its value from there: one workgroup load, two data loads and a bit extraction an entry.
const SUB: u32 = 64u;
const META: u32 = 1024u;
override LIST_TILE: u32 = META / (WORKGROUP_SIZE / SUB);
var<workgroup> resolved: array<vec2<u32>, META>;

// This invocation's frame: its chunk, its place in its block, its block's group and entry in the group's
// table (the word of the block table and the shift in it), and its block's first slot in `resolved`.
var<private> c: Chunk;
var<private> j: u32;
var<private> g: u32;
var<private> kw: u32;
var<private> ks: u32;
var<private> slot: u32;

// Entries a step reads together: every data load issued before any value is used.
const STEP: u32 = 8u;

// The exact sum (lo, hi) of this invocation's values of list entries [begin, end) (uniform bounds: every
// invocation of the workgroup takes part in resolving the list).
fn sum_entries(local: u32, begin: u32, end: u32) -> vec2<u32> {
  var lo = 0u;
  var hi = 0u;
  for (var first = begin; first < end; first += LIST_TILE) {
    let n = min(LIST_TILE, end - first);
    workgroupBarrier();
    // Entries past the list resolve to width 0: they add nothing.
    for (var e = local % SUB; e < LIST_TILE; e += SUB) {
      var m = vec2<u32>(0u, 0u);
      if (e < n) {
        let at = (list[params.list_base + first + e] & 0x3fffffffu) * c.groups + g;
        let h = (blocks[c.blocks_base + at * 8u + kw] >> ks) & 0xffffu;
        m = vec2<u32>(c.data_base + bases[c.bases_base + at] + (h & 0x3ffu), h >> 10u);
      }
      resolved[slot + e] = m;
    }
    workgroupBarrier();
    for (var i = 0u; i < n; i += STEP) {
      var lo_w: array<u32, STEP>;
      var hi_w: array<u32, STEP>;
      var sh: array<u32, STEP>;
      var w: array<u32, STEP>;
      for (var u = 0u; u < STEP; u++) {
        // Past the list's end (i + u < LIST_TILE, a multiple of STEP): width 0.
        let m = resolved[slot + i + u];
        w[u] = m.y;
        let bit = j * w[u];
        let at = m.x + (bit >> 5u);
        sh[u] = bit & 31u;
        lo_w[u] = data[at];
        hi_w[u] = data[at + 1u];
      }
      for (var u = 0u; u < STEP; u++) {
        let v = extractBits((lo_w[u] >> sh[u]) | select(0u, hi_w[u] << (32u - sh[u]), sh[u] != 0u), 0u, w[u]);
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
  // Invocations past the chunk's frames (its padding to a multiple of 64) share its last block.
  let f = t - c.thread_start;
  let b = f >> 6u;
  j = f & 63u;
  g = b >> 4u;
  let k = b & 15u;
  kw = k >> 1u;
  ks = (k & 1u) * 16u;
  slot = (local / SUB) * LIST_TILE;
  let a = sum_entries(local, 0u, params.list_count_a);
  let r = sum_entries(local, params.list_count_a, params.list_count);
  if (id.x >= params.thread_count || f >= c.frames) {
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
