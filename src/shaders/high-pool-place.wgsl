// A slotted uint16 high plane, one batch: moves the batch's high words from its high scratch (where
// detector-transpose wrote them, nonzero words only) into the slots of the (pixel, segment) pairs that have such
// words in this batch (the batch's own hot bits, set by the same transpose), claiming a slot for a pair that has
// none yet. Contract: src/gpu/resident-layout.ts ('slots'), docs/pass-graph.md; CPU twin:
// src/kernels/high-pool-place.ts; host: src/gpu/passes/high-pool-place.ts.
//
// The scratch and the batch's bits are zero outside what the transpose wrote (zeroed at creation), and this pass
// keeps them so: it zeroes the words it copies and clears the bit of every pair it places. A pair whose claim
// finds the pool full (the claim undone, counted as failed) keeps its bit and its words; the host grows the pool
// and runs the pass again on the same batch, which then finds exactly those pairs. A slot claimed here gets zeros
// outside the batch's words (slots are not cleared before): other batches' words of the segment were zero, or
// come later, or are placed by such a rerun.
//
// One dispatch per row buffer. Workgroup w takes the 64 pixels of block w % pixel_blocks and the batch's segment
// seg_first + w / pixel_blocks. Each thread claims or looks up its pair's slot (in parallel: the table entry of a
// pair is written only by the thread that owns the pair in this dispatch) and lists it; then the workgroup copies
// the listed pairs' words together.

struct Params {
  // The row buffer's first global pixel and its pixel count; blocks of 64 pixels.
  row_first_pixel: u32,
  pixel_count: u32,
  pixel_blocks: u32,
  // Scratch rows: words per pixel; the batch's first global row word (a multiple of 4) and its word count.
  scratch_words_per_pixel: u32,
  batch_word0: u32,
  batch_words: u32,
  // This dispatch's first segment; words per segment; words per slot (<= segment_words); segments per pixel.
  seg_first: u32,
  segment_words: u32,
  slot_words: u32,
  segments: u32,
  // The batch's bits: words per pixel, and the segment of bit 0 (the batch's first segment).
  batch_hot_words: u32,
  batch_seg_first: u32,
  // Slots in this row buffer's pool; its used count and this batch's failed count in `state`.
  capacity: u32,
  state_used: u32,
  state_failed: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
// Both as 16-byte groups: scratch rows, slots and the words a batch places in a slot start and end on 16 bytes
// (batches start at multiples of 64 frames, segments at multiples of 128; the last batch's last group holds
// zeros past the scan, as the scratch is zero where the transpose wrote nothing).
@group(0) @binding(1) var<storage, read_write> scratch: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read_write> pool: array<vec4<u32>>;
// Per global (pixel, segment): slot + 1, or 0.
@group(0) @binding(3) var<storage, read_write> slot_table: array<u32>;
// The batch's own hot bits (detector-transpose's batch_hot), cleared here for every pair placed.
@group(0) @binding(4) var<storage, read_write> batch_hot: array<atomic<u32>>;
@group(0) @binding(5) var<storage, read_write> state: array<atomic<u32>>;

const THREADS: u32 = 64u;

// Pairs to copy: local pixel, slot, and 1 if claimed by this dispatch.
var<workgroup> list_pixel: array<u32, THREADS>;
var<workgroup> list_slot: array<u32, THREADS>;
var<workgroup> list_fresh: array<u32, THREADS>;
var<workgroup> list_count: atomic<u32>;
var<workgroup> list_n: u32;

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
    let rel = segment - params.batch_seg_first;
    let b_at = pixel * params.batch_hot_words + rel / 32u;
    let bit = 1u << (rel % 32u);
    if ((atomicLoad(&batch_hot[b_at]) & bit) != 0u) {
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
        atomicAnd(&batch_hot[b_at], ~bit);
        let i = atomicAdd(&list_count, 1u);
        list_pixel[i] = local;
        list_slot[i] = entry - 1u;
        list_fresh[i] = fresh;
      }
    }
  }
  workgroupBarrier();
  if (lid == 0u) {
    list_n = atomicLoad(&list_count);
  }
  let n = workgroupUniformLoad(&list_n);

  // The batch's 16-byte groups in this segment, relative to the segment's first group: [g0, g1).
  let seg_word0 = segment * params.segment_words;
  let g0 = (max(seg_word0, params.batch_word0) - seg_word0) / 4u;
  let g1 = (min(seg_word0 + params.slot_words, params.batch_word0 + params.batch_words) - seg_word0 + 3u) / 4u;
  let slot_groups = params.slot_words / 4u;
  for (var i = 0u; i < n; i++) {
    // Scratch group of segment group j: row + j (wrapping arithmetic; j >= g0 keeps it in the batch's row).
    // (Every term is a whole number of groups, so the wrapping happens in groups.)
    let row = list_pixel[i] * (params.scratch_words_per_pixel / 4u) + seg_word0 / 4u - params.batch_word0 / 4u;
    let slot0 = list_slot[i] * slot_groups;
    let fresh = list_fresh[i] != 0u;
    // Four groups a thread at a time, all loads issued before any store (one round trip, not four).
    for (var base = 0u; base < slot_groups; base += 4u * THREADS) {
      let j0 = base + lid;
      let j1 = j0 + THREADS;
      let j2 = j1 + THREADS;
      let j3 = j2 + THREADS;
      let v0 = group_of(row, j0, g0, g1);
      let v1 = group_of(row, j1, g0, g1);
      let v2 = group_of(row, j2, g0, g1);
      let v3 = group_of(row, j3, g0, g1);
      place_group(row, slot0, j0, g0, g1, slot_groups, fresh, v0);
      place_group(row, slot0, j1, g0, g1, slot_groups, fresh, v1);
      place_group(row, slot0, j2, g0, g1, slot_groups, fresh, v2);
      place_group(row, slot0, j3, g0, g1, slot_groups, fresh, v3);
    }
  }
}

// Segment group j of a pair's scratch row when it is one of the batch's, else zero.
fn group_of(row: u32, j: u32, g0: u32, g1: u32) -> vec4<u32> {
  if (j >= g0 && j < g1) {
    return scratch[row + j];
  }
  return vec4<u32>(0u);
}

// Stores group j of a slot: the batch's groups (and zeroes them in the scratch), or zeros in a slot claimed now.
fn place_group(row: u32, slot0: u32, j: u32, g0: u32, g1: u32, slot_groups: u32, fresh: bool, v: vec4<u32>) {
  if (j >= g0 && j < g1) {
    pool[slot0 + j] = v;
    scratch[row + j] = vec4<u32>(0u);
  } else if (fresh && j < slot_groups) {
    pool[slot0 + j] = vec4<u32>(0u);
  }
}
