// Masked sums from the exact series index (src/series/packed-index.ts describes the layout): one invocation per
// frame reads, for every listed pixel, its value from the pixel's block (64 frames of one width), so a warp reads
// one block's few words together, and adds it to accumulator A or B as the list entry says (full mask: A; delta:
// added pixels A, removed B; FRAMES consecutive frames an invocation). Nothing is decoded that the mask does not cover. Each invocation owns its frame:
// it writes the frame's new image value, exact in (lo, hi) u32, into the acquisition's resident image (a full
// mask: A; a delta: the image before + A - B) and its low word into `out`, the readback, with a flag word after
// the frames set when any value needs its high word. One dispatch covers the chunks of one acquisition in one
// data buffer (a chunk table maps invocations to chunks). CPU twin: packedQuery (src/series/packed-index.ts).

override WORKGROUP_SIZE: u32 = 64u;
// Consecutive frames of one block an invocation sums (1, 2, 4 or 8): the entry's width and offset are found once
// for all of them.
override FRAMES: u32 = 1u;

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

// This invocation's frames: their chunk, and their place in the chunk's blocks (all in one block).
var<private> c: Chunk;
var<private> j0: u32;
var<private> g: u32;
// The word of the block table holding this block's entry, and the entry's shift in it.
var<private> kw: u32;
var<private> ks: u32;

// Where list entry `entry` has this invocation's block: its first word and its width, from the block table's
// word for it (offset from the group's first word | width << 10) and the group's first word.
fn block_of(word: u32, base: u32) -> vec2<u32> {
  let h = (word >> ks) & 0xffffu;
  return vec2<u32>(c.data_base + base + (h & 0x3ffu), h >> 10u);
}

// Value j of the block of width w whose words start at `at` (0 for width 0); both words are always read, so no
// branch stands between the loads of different entries.
fn value_at(at: u32, w: u32, j: u32) -> u32 {
  let bit = j * w;
  let i = at + (bit >> 5u);
  let sh = bit & 31u;
  let lo = data[i];
  let hi = data[i + 1u];
  let v = (lo >> sh) | select(0u, hi << (32u - sh), sh != 0u);
  return v & select(0u, 0xffffffffu >> (32u - w), w != 0u);
}

// Per frame of the invocation: (A lo, A hi, B lo, B hi).
var<private> acc: array<vec4<u32>, 8>;

// Adds v to accumulator A and/or B of frame q as the entry's bits say (exact: carries into the high words).
fn accumulate(q: u32, entry: u32, v: u32) {
  let va = select(0u, v, (entry & 0x40000000u) != 0u);
  let vb = select(0u, v, (entry & 0x80000000u) != 0u);
  var r = acc[q];
  let sa = r.x + va;
  let sb = r.z + vb;
  r = vec4<u32>(sa, r.y + select(0u, 1u, sa < va), sb, r.w + select(0u, 1u, sb < vb));
  acc[q] = r;
}

// Entries a step reads together (their metadata loads, then their data loads, in flight at once): 2, 4 or 8
// (more in flight, more registers). The step's arrays are sized for 8; the compiler keeps the ones used.
override STEP: u32 = 8u;
const STEP_MAX: u32 = 8u;

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
  // The first of the invocation's frames (FRAMES divides 64: they share a block).
  let f0 = min((t - c.thread_start) * FRAMES, ((c.frames - 1u) / FRAMES) * FRAMES);
  let b = f0 >> 6u;
  j0 = f0 & 63u;
  g = b >> 4u;
  let k = b & 15u;
  kw = k >> 1u;
  ks = (k & 1u) * 16u;
  for (var q = 0u; q < FRAMES; q++) {
    acc[q] = vec4<u32>(0u);
  }
  for (var first = 0u; first < params.list_count; first += LIST_TILE) {
    let n = min(LIST_TILE, params.list_count - first);
    workgroupBarrier();
    for (var i = local; i < LIST_TILE; i += WORKGROUP_SIZE) {
      // Entries past the list read pixel 0 into no accumulator.
      tile[i] = select(0u, list[params.list_base + first + i], i < n);
    }
    workgroupBarrier();
    // STEP entries at a time: every load of a step is issued before any of its values is used.
    for (var i = 0u; i < n; i += STEP) {
      var e: array<u32, STEP_MAX>;
      var m: array<u32, STEP_MAX>;
      var base: array<u32, STEP_MAX>;
      for (var u = 0u; u < STEP; u++) {
        e[u] = tile[i + u];
        let at = (e[u] & 0x3fffffffu) * c.groups + g;
        m[u] = blocks[c.blocks_base + at * 8u + kw];
        base[u] = bases[c.bases_base + at];
      }
      for (var u = 0u; u < STEP; u++) {
        let k = block_of(m[u], base[u]);
        for (var q = 0u; q < FRAMES; q++) {
          accumulate(q, e[u], value_at(k.x, k.y, j0 + q));
        }
      }
    }
  }
  if (id.x >= params.thread_count || (t - c.thread_start) * FRAMES >= c.frames) {
    return;
  }
  for (var q = 0u; q < FRAMES; q++) {
    let f = f0 + q;
    if (f >= c.frames) {
      break;
    }
    let frame = c.frame_base + f;
    let r = acc[q];
    var v_lo = r.x;
    var v_hi = r.y;
    if (params.delta != 0u) {
      let s = image[2u * frame] + v_lo;
      v_hi += image[2u * frame + 1u] + select(0u, 1u, s < v_lo);
      v_lo = s;
      // Minus B (the image of the new mask is never negative).
      v_hi -= r.w + select(0u, 1u, v_lo < r.z);
      v_lo -= r.z;
    }
    image[2u * frame] = v_lo;
    image[2u * frame + 1u] = v_hi;
    out[frame] = v_lo;
    if (v_hi != 0u) {
      out[params.frames] = 1u;
    }
  }
}
