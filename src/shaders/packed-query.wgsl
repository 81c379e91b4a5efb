// Masked sums from the exact series index (src/series/packed-index.ts describes the layout): one invocation per
// frame reads, for every listed pixel, its value from the pixel's block (64 frames of one width), so a warp reads
// one block's few words together, and adds it to accumulator A or B as the list entry says (full mask: A; delta:
// added pixels A, removed B). Nothing is decoded that the mask does not cover. Each invocation owns its frame:
// it writes the frame's new image value, exact in (lo, hi) u32, into the acquisition's resident image (a full
// mask: A; a delta: the image before + A - B) and its low word into `out`, the readback, with a flag word after
// the frames set when any value needs its high word. One dispatch covers the chunks of one acquisition in one
// data buffer (a chunk table maps invocations to chunks). CPU twin: packedQuery (src/series/packed-index.ts).

override WORKGROUP_SIZE: u32 = 64u;

struct Params {
  thread_first: u32,
  thread_count: u32,
  chunk_first: u32,
  chunk_count: u32,
  // The acquisition's list entries [list_base, list_base + list_count) (a dispatch covers one acquisition).
  list_base: u32,
  list_count: u32,
  // 1: add this query's A - B to the image before (a delta); 0: the image is A.
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
  // Word offset of the chunk's data in `data`; its widths (in vec4 units) and group offsets.
  data_base: u32,
  widths_base: u32,
  bases_base: u32,
  // The chunk's first frame in the acquisition.
  frame_base: u32,
  pad: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> data: array<u32>;
// The 16 widths of a (pixel, group), one byte each.
@group(0) @binding(2) var<storage, read> widths: array<vec4<u32>>;
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

// Sum of the four bytes of a word.
fn byte_sum(x: u32) -> u32 {
  let s = (x & 0x00ff00ffu) + ((x >> 8u) & 0x00ff00ffu);
  return (s & 0xffffu) + (s >> 16u);
}

// This invocation's frame: its chunk, and its place in the chunk's blocks.
var<private> c: Chunk;
var<private> j: u32;
var<private> g: u32;
var<private> kw: u32;
var<private> kb: u32;
var<private> below: u32;

// The value of list entry `entry` (a pixel or a tile) at this invocation's frame.
fn value_of(entry: u32) -> u32 {
  let e = (entry & 0x3fffffffu) * c.groups + g;
  let m = widths[c.widths_base + e];
  let base = bases[c.bases_base + e];
  // Words of the blocks before this one in the group: 2 x their widths.
  var before = byte_sum(m[kw] & below);
  if (kw > 0u) {
    before += byte_sum(m.x);
  }
  if (kw > 1u) {
    before += byte_sum(m.y);
  }
  if (kw > 2u) {
    before += byte_sum(m.z);
  }
  let w = (m[kw] >> kb) & 0xffu;
  if (w == 0u) {
    return 0u;
  }
  let bit = j * w;
  let at = c.data_base + base + 2u * before + (bit >> 5u);
  let sh = bit & 31u;
  var v = data[at] >> sh;
  if (sh + w > 32u) {
    v |= data[at + 1u] << (32u - sh);
  }
  if (w < 32u) {
    v &= (1u << w) - 1u;
  }
  return v;
}

var<private> a_lo: u32;
var<private> a_hi: u32;
var<private> b_lo: u32;
var<private> b_hi: u32;

fn accumulate(entry: u32, v: u32) {
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
  kw = k >> 2u;
  kb = (k & 3u) * 8u;
  below = select(0u, 0xffffffffu >> (32u - kb), kb > 0u);
  a_lo = 0u;
  a_hi = 0u;
  b_lo = 0u;
  b_hi = 0u;
  for (var first = 0u; first < params.list_count; first += LIST_TILE) {
    let n = min(LIST_TILE, params.list_count - first);
    workgroupBarrier();
    for (var i = local; i < LIST_TILE; i += WORKGROUP_SIZE) {
      // Entries past the list read pixel 0 into no accumulator.
      tile[i] = select(0u, list[params.list_base + first + i], i < n);
    }
    workgroupBarrier();
    // Four entries at a time, their loads issued together.
    for (var i = 0u; i < n; i += 4u) {
      let e0 = tile[i];
      let e1 = tile[i + 1u];
      let e2 = tile[i + 2u];
      let e3 = tile[i + 3u];
      let v0 = value_of(e0);
      let v1 = value_of(e1);
      let v2 = value_of(e2);
      let v3 = value_of(e3);
      accumulate(e0, v0);
      accumulate(e1, v1);
      accumulate(e2, v2);
      accumulate(e3, v3);
    }
  }
  if (id.x >= params.thread_count || t - c.thread_start >= c.frames) {
    return;
  }
  let frame = c.frame_base + f;
  var v_lo = a_lo;
  var v_hi = a_hi;
  if (params.delta != 0u) {
    let s = image[2u * frame] + v_lo;
    v_hi += image[2u * frame + 1u] + select(0u, 1u, s < v_lo);
    v_lo = s;
    // Minus B (the image of the new mask is never negative).
    v_hi -= b_hi + select(0u, 1u, v_lo < b_lo);
    v_lo -= b_lo;
  }
  image[2u * frame] = v_lo;
  image[2u * frame + 1u] = v_hi;
  out[frame] = v_lo;
  if (v_hi != 0u) {
    out[params.frames] = 1u;
  }
}
