// decode_frame (the groups of a workgroup decode one frame's blocks together, GROUPS at a time), the part of
// common/bslz4-multi-main.wgsl that the variants without `gf` run, included there by a line naming this file
// (scripts/wgsl-include.mjs); it uses what that file declares before the include line. The `gf` variants run
// decode_group_frame (common/bslz4-group-frame.wgsl) instead.

// Decodes batch frame f into its output words; returns 0 or an error code. Lane `lane` of group `sub`.
fn decode_frame(f: u32, sub: u32, lane: u32, lid: u32) -> u32 {
  let entry = index[params.index_base + f];
  let off = entry.x;
  let size = entry.y;
  let out_base = f * params.words_per_frame;
  let checked = check_chunk(off, size);
  if (checked.x != 0u) {
    return checked.x;
  }
  let block_bytes = checked.y;
  let block_elems = block_bytes / ELEM_SIZE;
  let blocks = frame_blocks(block_elems);
  let full = blocks.x;
  let last = blocks.y;
  let count = blocks.z;
  var pos = HEADER_BYTES;
  for (var b0 = 0u; b0 < count; b0 += GROUPS) {
    // The headers of blocks b0.. (at most GROUPS) in order, up to the first bad one; every lane reads them.
    var header_err = 0u;
    var ok = 0u;
    var my_start = 0u;
    var my_length = 0u;
    for (var s = 0u; s < GROUPS && b0 + s < count; s++) {
      if (size - pos < 4u) {
        header_err = ERR_BLOCK_TRUNCATED;
        break;
      }
      let length = slot_be32(off + pos);
      pos += 4u;
      if (length == 0u) {
        header_err = ERR_BLOCK_EMPTY;
        break;
      }
      if (length > size - pos) {
        header_err = ERR_BLOCK_TRUNCATED;
        break;
      }
      if (s == sub) {
        my_start = off + pos;
        my_length = length;
      }
      pos += length;
      ok += 1u;
    }
    let b = b0 + sub;
    let busy = sub < ok;
    let elems = select(last, block_elems, b < full);
    let bytes = elems * ELEM_SIZE;
    if (busy) {
      stage_block(f, b, my_start, my_length, lane);
    }
    // Also orders this round's block writes after the previous round's unshuffle reads.
    if (SCRATCH) {
      storageBarrier();
    }
    workgroupBarrier();
    let err = lz4_round(my_start, my_start + my_length, bytes, busy, sub, lane, lid);
    if (err != 0u) {
      return err;
    }
    epoch_barrier();
    if (busy) {
      unshuffle_block(elems, b * block_elems, out_base, lane, 0xffffffffu);
    }
    if (header_err != 0u) {
      return header_err;
    }
  }
  return finish_chunk(off, size, pos, full * block_elems + last, out_base, lid == 0u);
}
