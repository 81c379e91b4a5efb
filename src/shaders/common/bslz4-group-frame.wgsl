// decode_group_frame (FRAME_GROUPS: each group of a workgroup decodes a frame of its own) and its workgroup
// counters, the part of common/bslz4-multi-main.wgsl that the `gf` variants run, included there by a line naming
// this file (scripts/wgsl-include.mjs); it uses what that file declares before the include line.

// FRAME_GROUPS: blocks of each group's frame (0 when it failed its checks), and the most of them (the rounds).
var<workgroup> group_blocks: array<u32, GROUPS>;
var<workgroup> round_count: u32;

// FRAME_GROUPS: group `sub` decodes batch frame f (when `live`: inside the dispatch) into its output words, one
// block a round, the groups' rounds together (as many as the longest frame has blocks). Returns 0 or the frame's
// error code (its group's own; control flow stays uniform across the workgroup, so no early return). The same
// checks in the same order as decode_frame: a block's header is read when its round starts.
fn decode_group_frame(f: u32, live: bool, sub: u32, lane: u32, lid: u32) -> u32 {
  var err = 0u;
  var off = 0u;
  var size = 0u;
  var block_elems = 8u;
  var full = 0u;
  var last = 0u;
  var count = 0u;
  if (live) {
    let entry = index[params.index_base + f];
    off = entry.x;
    size = entry.y;
    let checked = check_chunk(off, size);
    err = checked.x;
    if (err == 0u) {
      block_elems = checked.y / ELEM_SIZE;
      let blocks = frame_blocks(block_elems);
      full = blocks.x;
      last = blocks.y;
      count = blocks.z;
    }
  }
  let out_base = f * params.words_per_frame;
  if (lane == 0u) {
    group_blocks[sub] = count;
  }
  workgroupBarrier();
  if (lid == 0u) {
    var m = 0u;
    for (var s = 0u; s < GROUPS; s++) {
      m = max(m, group_blocks[s]);
    }
    round_count = m;
  }
  let rounds = workgroupUniformLoad(&round_count);
  var pos = HEADER_BYTES;
  for (var b = 0u; b < rounds; b++) {
    var busy = err == 0u && b < count;
    var my_start = 0u;
    var my_length = 0u;
    if (busy) {
      if (size - pos < 4u) {
        err = ERR_BLOCK_TRUNCATED;
      } else {
        let length = slot_be32(off + pos);
        pos += 4u;
        if (length == 0u) {
          err = ERR_BLOCK_EMPTY;
        } else if (length > size - pos) {
          err = ERR_BLOCK_TRUNCATED;
        } else {
          my_start = off + pos;
          my_length = length;
          pos += length;
        }
      }
      busy = err == 0u;
    }
    let elems = select(last, block_elems, b < full);
    if (busy) {
      stage_block(f, b, my_start, my_length, lane);
    }
    // Also orders this round's block writes after the previous round's unshuffle reads.
    if (SCRATCH) {
      storageBarrier();
    }
    workgroupBarrier();
    _ = lz4_round(my_start, my_start + my_length, elems * ELEM_SIZE, busy, sub, lane, lid);
    if (busy && own_verdict != 0u) {
      err = own_verdict;
      busy = false;
    }
    epoch_barrier();
    var live = 0xffffffffu;
    if (PLANE_SKIP) {
      live = plane_quads(busy, elems, sub, lane);
    }
    if (busy) {
      unshuffle_block(elems, b * block_elems, out_base, lane, live);
    }
  }
  if (live && err == 0u) {
    err = finish_chunk(off, size, pos, full * block_elems + last, out_base, lane == 0u);
  }
  return err;
}
