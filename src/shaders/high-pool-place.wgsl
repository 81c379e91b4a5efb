// A slotted uint16 high plane, one batch: moves the batch's high words from its high scratch (where
// detector-transpose wrote them, nonzero words only) into the slots of the (pixel, segment) pairs whose words
// in this batch are not all zero, claiming a slot for a pair that has none yet. Contract:
// src/gpu/resident-layout.ts ('slots'), docs/pass-graph.md; CPU twin: src/kernels/high-pool-place.ts; host:
// src/gpu/passes/high-pool-place.ts.
//
// The scratch is zero outside what the transpose wrote (zeroed at creation), and this pass keeps it so: it zeroes
// the words it copies. A pair whose claim finds the pool full (the claim undone, counted as failed) keeps its
// words in the scratch; the host grows the pool and runs the pass again on the same batch, which then finds only
// those pairs' words nonzero. A slot claimed here gets zeros outside the batch's words (slots are not cleared
// before): other batches' words of the segment were zero, or come later, or are placed by such a rerun.
//
// One dispatch per row buffer. Workgroup w takes the 64 pixels of block w % pixel_blocks and the batch's
// segment seg_first + w / pixel_blocks. Its threads list the pixels whose (pixel, segment) hot bit is set
// (a bit the batch's transpose sets for every nonzero high word); then, pair by pair, the workgroup checks the
// pair's words, one thread claims or looks up the slot, and all copy. The table entry of a pair is written
// only by the workgroup that owns the pair in this dispatch.

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
@group(0) @binding(1) var<storage, read_write> scratch: array<u32>;
@group(0) @binding(2) var<storage, read_write> pool: array<u32>;
// Per global (pixel, segment): slot + 1, or 0.
@group(0) @binding(3) var<storage, read_write> slot_table: array<u32>;
@group(0) @binding(4) var<storage, read> hot: array<u32>;
@group(0) @binding(5) var<storage, read_write> state: array<atomic<u32>>;

const THREADS: u32 = 64u;

// Hot pixels of this workgroup's block (local pixel indices), and the current pair's state.
var<workgroup> list_pixel: array<u32, THREADS>;
var<workgroup> list_count: atomic<u32>;
var<workgroup> list_n: u32;
var<workgroup> pair_any: atomic<u32>;
// Slot + 1 (0: none), and 1 if claimed now.
var<workgroup> pair_entry: u32;
var<workgroup> pair_fresh: u32;

@compute @workgroup_size(THREADS)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let block = wid.x % params.pixel_blocks;
  let segment = params.seg_first + wid.x / params.pixel_blocks;
  if (lid == 0u) {
    atomicStore(&list_count, 0u);
    atomicStore(&pair_any, 0u);
  }
  workgroupBarrier();
  let local = block * THREADS + lid;
  if (local < params.pixel_count) {
    let pixel = params.row_first_pixel + local;
    let bits = hot[pixel * params.hot_words_per_pixel + segment / 32u];
    if (((bits >> (segment % 32u)) & 1u) != 0u) {
      list_pixel[atomicAdd(&list_count, 1u)] = local;
    }
  }
  workgroupBarrier();
  if (lid == 0u) {
    list_n = atomicLoad(&list_count);
  }
  let n = workgroupUniformLoad(&list_n);

  // The batch's words in this segment, relative to the segment's first word.
  let seg_word0 = segment * params.segment_words;
  let c0 = max(seg_word0, params.batch_word0) - seg_word0;
  let c1 = min(seg_word0 + params.slot_words, params.batch_word0 + params.batch_words) - seg_word0;
  for (var i = 0u; i < n; i++) {
    let local_pixel = list_pixel[i];
    // Scratch word of segment word j: row + j (wrapping arithmetic; j >= c0 keeps it in the batch's row).
    let row = local_pixel * params.scratch_words_per_pixel + seg_word0 - params.batch_word0;
    var any = 0u;
    for (var j = c0 + lid; j < c1; j += THREADS) {
      any |= scratch[row + j];
    }
    if (any != 0u) {
      atomicOr(&pair_any, 1u);
    }
    workgroupBarrier();
    if (lid == 0u) {
      var entry = 0u;
      var fresh = 0u;
      if (atomicExchange(&pair_any, 0u) != 0u) {
        let at = (params.row_first_pixel + local_pixel) * params.segments + segment;
        entry = slot_table[at];
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
      }
      pair_entry = entry;
      pair_fresh = fresh;
    }
    workgroupBarrier();
    let entry = pair_entry;
    if (entry != 0u) {
      let slot0 = (entry - 1u) * params.slot_words;
      let fresh = pair_fresh != 0u;
      for (var j = lid; j < params.slot_words; j += THREADS) {
        if (j >= c0 && j < c1) {
          pool[slot0 + j] = scratch[row + j];
          scratch[row + j] = 0u;
        } else if (fresh) {
          pool[slot0 + j] = 0u;
        }
      }
    }
    workgroupBarrier();
  }
}
