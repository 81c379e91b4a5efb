// A slotted uint16 high plane, one batch: moves the batch's high words from its high scratch (written by
// detector-transpose with hi_dense) into the slots of the hot (pixel, segment) pairs it touches, claiming a slot
// for a pair that has none yet. Contract: src/gpu/resident-layout.ts ('slots'), docs/pass-graph.md; CPU twin:
// src/kernels/high-pool-place.ts; host: src/gpu/passes/high-pool-place.ts.
//
// One dispatch per row buffer. Workgroup w takes the 64 pixels of block w % pixel_blocks and the batch's
// segment seg_first + w / pixel_blocks. Each thread checks its pixel: cold pairs are skipped; a hot pair
// without a slot claims one (atomicAdd on the pool's used count; past the capacity the claim is undone and
// counted as failed, and the pair keeps no slot: the host grows the pool and runs the pass again on the same
// scratch, which is idempotent). The workgroup then copies each listed pair's words together: every word of
// the batch in that segment, and for a slot claimed now zeros in the rest of it (slots are not cleared before).
// The table entry of a pair is written only by the one thread that owns the pair in this dispatch.

struct Params {
  // The row buffer's first global pixel and its pixel count; blocks of 64 pixels.
  row_first_pixel: u32,
  pixel_count: u32,
  pixel_blocks: u32,
  // Scratch rows: words per pixel; the batch's first global row word (a multiple of 4) and its word count.
  scratch_words_per_pixel: u32,
  batch_word0: u32,
  batch_words: u32,
  // The batch's first segment; words per segment; words per slot (<= segment_words); segments per pixel.
  seg_first: u32,
  segment_words: u32,
  slot_words: u32,
  segments: u32,
  hot_words_per_pixel: u32,
  // Slots in this row buffer's pool; its used count and this batch's failed count in `state`.
  capacity: u32,
  state_used: u32,
  state_failed: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> scratch: array<u32>;
@group(0) @binding(2) var<storage, read_write> pool: array<u32>;
// Per global (pixel, segment): slot + 1, or 0.
@group(0) @binding(3) var<storage, read_write> slot_table: array<u32>;
@group(0) @binding(4) var<storage, read> hot: array<u32>;
@group(0) @binding(5) var<storage, read_write> state: array<atomic<u32>>;

const THREADS: u32 = 64u;

// Pairs to copy: local pixel, slot, and 1 if claimed by this dispatch.
var<workgroup> list_pixel: array<u32, THREADS>;
var<workgroup> list_slot: array<u32, THREADS>;
var<workgroup> list_fresh: array<u32, THREADS>;
var<workgroup> list_count: atomic<u32>;

@compute @workgroup_size(THREADS)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let block = wid.x % params.pixel_blocks;
  let segment = params.seg_first + wid.x / params.pixel_blocks;
  if (lid == 0u) {
    atomicStore(&list_count, 0u);
  }
  workgroupBarrier();

  let local = block * THREADS + lid;
  if (local < params.pixel_count) {
    let pixel = params.row_first_pixel + local;
    let bits = hot[pixel * params.hot_words_per_pixel + segment / 32u];
    if (((bits >> (segment % 32u)) & 1u) != 0u) {
      let at = pixel * params.segments + segment;
      var entry = slot_table[at];
      var fresh = 0u;
      if (entry == 0u) {
        let s = atomicAdd(&state[params.state_used], 1u);
        if (s < params.capacity) {
          entry = s + 1u;
          slot_table[at] = entry;
          fresh = 1u;
        } else {
          atomicSub(&state[params.state_used], 1u);
          atomicAdd(&state[params.state_failed], 1u);
        }
      }
      if (entry != 0u) {
        let i = atomicAdd(&list_count, 1u);
        list_pixel[i] = local;
        list_slot[i] = entry - 1u;
        list_fresh[i] = fresh;
      }
    }
  }
  workgroupBarrier();

  // The batch's words in this segment, relative to the segment's first word.
  let seg_word0 = segment * params.segment_words;
  let c0 = max(seg_word0, params.batch_word0) - seg_word0;
  let c1 = min(seg_word0 + params.slot_words, params.batch_word0 + params.batch_words) - seg_word0;
  let n = atomicLoad(&list_count);
  for (var i = 0u; i < n; i++) {
    let row = list_pixel[i] * params.scratch_words_per_pixel + seg_word0 - params.batch_word0;
    let slot0 = list_slot[i] * params.slot_words;
    let fresh = list_fresh[i] != 0u;
    for (var j = lid; j < params.slot_words; j += THREADS) {
      if (j >= c0 && j < c1) {
        pool[slot0 + j] = scratch[row + j];
      } else if (fresh) {
        pool[slot0 + j] = 0u;
      }
    }
  }
}
