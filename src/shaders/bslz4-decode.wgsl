// Fused bitshuffle/LZ4 decode + audit (HDF5 filter 32008, cd_values[4] = 2), one frame per chunk.
// CPU twin: src/kernels/bslz4-decode.ts (same walk, same error codes: src/kernels/decode-errors.ts).
//
// Input: `slot`, the chunks of the batch's frames back to back (bytes packed little-endian in u32 words, at any
// byte offset); `index[f]` = (byteOffset, byteSize) of batch frame f; `flags[p]` nonzero = pixel p flagged.
// Output: `decoded` (frame f at word f * words_per_frame, values packed little-endian in the source dtype, pad
// words 0; a failed frame is all 0), `errors[first_frame + f]` (0 = exact, else a code), `totals[first_frame + f]`
// (u64 (lo, hi) sum of unflagged values, 0 when failed), and `audit` (accumulated across dispatches and batches:
// maximum, failed frame count, count above 255 and a 257-bin histogram of unflagged values of decoded frames).
//
// Workgroups (one per frame by default, persistent when fewer): workgroup w takes frames frame_start + w,
// + num_workgroups, ... and decodes each one cooperatively (the pass's default: one 64-lane workgroup per
// frame). Per block (<= 8 KiB decoded): zero `block` and stage the first STAGE_WORDS words of the block's
// compressed bytes in workgroup memory with coalesced loads (the rest is read from the slot; on the H200 a
// one-word stage is fastest: workgroup memory bounds how many frames an SM decodes at once). Every
// lane walks the same LZ4 token stream and computes the same values; the walk runs in epochs that end with a
// barrier, and the workgroup checks for the end of the block with a uniform load every EPOCHS_PER_ROUND epochs;
// lanes copy literal and match bytes into `block` one output word each; word w always belongs to lane
// w mod WORKGROUP_SIZE, so only its owner writes it (a whole word is stored, a word shared with a neighbouring
// sequence is or-ed into its zeroed bytes; each output byte is written once) and no atomics are needed; a match
// reads the bytes `offset` back with the period identity out[o + j] = out[o - offset + (j mod offset)] (one
// modulo per word, whole-word reads when the word's sources are contiguous); a barrier is taken only when a
// match reads bytes written since the last barrier that are not its own sequence's literals (those it reads
// from the staged input); such a match waits for the next epoch. A word read for a match may be written at the
// same time by its owner in its other bytes (the next sequence's); the bytes read were written before a barrier. Then each lane undoes the bit transpose for groups of 8 elements (they share one byte
// of each of the 8 * ELEM_SIZE planes), writes packed words and counts the audit in registers and workgroup
// atomics. A decoded frame's counts go to the global audit at the end of the frame (a failed frame's never).
// Every loop is bounded by byte counts; every read of the slot stays inside its frame's chunk (staging reads
// the whole words that hold it); writes stay inside the frame's words and the 8 KiB block.

override ELEM_SIZE: u32 = 2u;
override WORKGROUP_SIZE: u32 = 64u;
// Words of workgroup memory that stage a block's compressed bytes (bytes past them are read from the slot).
override STAGE_WORDS: u32 = 1u;

// #include "common/bslz4-bindings.wgsl"
// #include "common/bslz4-out-words.wgsl"

// The decoded (still bit-shuffled) bytes of the current block.
var<workgroup> block: array<u32, BLOCK_WORDS>;
// Slot words [stage_word, stage_word + stage_words) of the current block's compressed bytes.
var<workgroup> stage: array<u32, STAGE_WORDS>;

// #include "common/bslz4-audit.wgsl"

// The staged slot bytes [stage_at, stage_at + stage_len) (uniform across the workgroup).
var<private> stage_at: u32;
var<private> stage_len: u32;

// #include "common/bslz4-bytes.wgsl"
// The flags of pixels e..e + 7 as bits (pixel e + k: bit k).
fn group_flags(e: u32) -> u32 {
  var bits = 0u;
  for (var k = 0u; k < 8u; k++) {
    bits |= select(0u, 1u << k, flags[e + k] != 0u);
  }
  return bits;
}

// #include "common/bslz4-unshuffle.wgsl"

// Slot and block bytes, partial words, literal and match copies.
// #include "common/bslz4-fused-copy.wgsl"

// Rounds of epochs between checks that the whole workgroup finished a block (one uniform load each).
const EPOCHS_PER_ROUND: u32 = 8u;

// State of the LZ4 walk of the current block, identical in every lane (each lane parses the same bytes).
struct Walk {
  ip: u32,
  op: u32,
  // Block bytes [0, visible) were written before the last barrier.
  visible: u32,
  // A match waits for the next barrier: it reads bytes written since the last one.
  pending_offset: u32,
  pending_count: u32,
  // 0 while running, then the block's verdict + 1 (1 = decoded).
  done: u32,
}

// One epoch of the walk: the pending match, then sequences until a match needs a barrier, the block ends or
// a fault is found. Returns the updated walk; copies stay within [0, end of the block's output).
fn lz4_epoch(w0: Walk, end: u32, out_end: u32, lid: u32) -> Walk {
  var w = w0;
  if (w.pending_count != 0u) {
    copy_match(w.op, w.pending_offset, w.pending_count, false, 0u, 0u, lid);
    w.op += w.pending_count;
    w.pending_count = 0u;
  }
  loop {
    if (w.ip >= end) {
      w.done = 1u + ERR_LZ4_TRUNCATED;
      break;
    }
    let token = in_byte(w.ip);
    w.ip += 1u;
    var lit = token >> 4u;
    if (lit == 15u) {
      loop {
        if (w.ip >= end) {
          w.done = 1u + ERR_LZ4_TRUNCATED;
          break;
        }
        let b = in_byte(w.ip);
        w.ip += 1u;
        lit += b;
        if (lit > end - w.ip) {
          w.done = 1u + ERR_LZ4_TRUNCATED;
          break;
        }
        if (b != 255u) {
          break;
        }
      }
      if (w.done != 0u) {
        break;
      }
    }
    if (lit > end - w.ip) {
      w.done = 1u + ERR_LZ4_TRUNCATED;
      break;
    }
    if (lit > out_end - w.op) {
      w.done = 1u + ERR_LZ4_OVERRUN;
      break;
    }
    let lit_src = w.ip;
    let lit_out = w.op;
    if (lit > 0u) {
      copy_literals(w.ip, w.op, lit, lid);
    }
    w.ip += lit;
    w.op += lit;
    if (w.ip == end) {
      w.done = 1u + select(ERR_LZ4_SHORT, 0u, w.op == out_end);
      break;
    }
    if (end - w.ip < 2u) {
      w.done = 1u + ERR_LZ4_TRUNCATED;
      break;
    }
    let offset = in_bytes(w.ip, 2u);
    w.ip += 2u;
    if (offset == 0u || offset > w.op) {
      w.done = 1u + ERR_LZ4_BAD_OFFSET;
      break;
    }
    var count = token & 15u;
    if (count == 15u) {
      loop {
        if (w.ip >= end) {
          w.done = 1u + ERR_LZ4_TRUNCATED;
          break;
        }
        let b = in_byte(w.ip);
        w.ip += 1u;
        count += b;
        if (count + 4u > out_end - w.op) {
          w.done = 1u + ERR_LZ4_OVERRUN;
          break;
        }
        if (b != 255u) {
          break;
        }
      }
      if (w.done != 0u) {
        break;
      }
    }
    count += 4u;
    if (count > out_end - w.op) {
      w.done = 1u + ERR_LZ4_OVERRUN;
      break;
    }
    let src_lo = w.op - offset;
    let from_literals = src_lo >= lit_out;
    if (!from_literals && src_lo + min(offset, count) > w.visible) {
      // Copied after the barrier that ends this epoch.
      w.pending_offset = offset;
      w.pending_count = count;
      w.visible = w.op;
      break;
    }
    copy_match(w.op, offset, count, from_literals, lit_src, lit_out, lid);
    w.op += count;
  }
  return w;
}

// Whether the workgroup finished the current block, and its verdict + 1 (written by lane 0, read uniformly).
var<workgroup> walk_done: u32;

// Decodes the raw LZ4 block slot[start, end) into `block` bytes [0, out_end). Returns 0 or an error code
// (uniform across the workgroup). Every lane walks the same tokens; a barrier ends each epoch, and every
// EPOCHS_PER_ROUND epochs the workgroup checks uniformly whether the walk is done (extra epochs do nothing).
fn lz4_block(start: u32, end: u32, out_end: u32, lid: u32) -> u32 {
  var w = Walk(start, 0u, 0u, 0u, 0u, 0u);
  loop {
    for (var e = 0u; e < EPOCHS_PER_ROUND; e++) {
      if (w.done == 0u) {
        w = lz4_epoch(w, end, out_end, lid);
      }
      workgroupBarrier();
    }
    // The last uniform load was followed by EPOCHS_PER_ROUND barriers: this write races with no read.
    if (lid == 0u) {
      walk_done = w.done;
    }
    let done = workgroupUniformLoad(&walk_done);
    if (done != 0u) {
      return done - 1u;
    }
  }
}

// Undoes the bit transpose of a decoded block of `elems` elements (a multiple of 8) whose first element is
// element `first` of the frame; writes packed words and audits the values.
fn unshuffle_block(elems: u32, first: u32, out_base: u32, lid: u32) {
  let pb = elems / 8u;
  for (var g = lid; g < pb; g += WORKGROUP_SIZE) {
    unshuffle_group(g, pb, first, out_base);
  }
}

// Decodes batch frame f into its output words; returns 0 or an error code.
fn decode_frame(f: u32, lid: u32) -> u32 {
  let entry = index[f];
  let off = entry.x;
  let size = entry.y;
  let out_base = f * params.words_per_frame;
  if (off > params.slot_bytes || size > params.slot_bytes - off) {
    return ERR_INDEX_OUT_OF_SLOT;
  }
  if (size < HEADER_BYTES) {
    return ERR_HEADER_TRUNCATED;
  }
  if (slot_be32(off) != 0u || slot_be32(off + 4u) != params.expected_bytes) {
    return ERR_SIZE_MISMATCH;
  }
  let block_bytes = slot_be32(off + 8u);
  if (block_bytes == 0u || block_bytes % (8u * ELEM_SIZE) != 0u) {
    return ERR_BAD_BLOCK_SIZE;
  }
  if (block_bytes > MAX_BLOCK_BYTES) {
    return ERR_UNSUPPORTED_BLOCK_SIZE;
  }
  let block_elems = block_bytes / ELEM_SIZE;
  let blocks = frame_blocks(block_elems);
  let full = blocks.x;
  let last = blocks.y;
  let count = blocks.z;
  var pos = HEADER_BYTES;
  var first = 0u;
  for (var b = 0u; b < count; b++) {
    if (size - pos < 4u) {
      return ERR_BLOCK_TRUNCATED;
    }
    let length = slot_be32(off + pos);
    pos += 4u;
    if (length == 0u) {
      return ERR_BLOCK_EMPTY;
    }
    if (length > size - pos) {
      return ERR_BLOCK_TRUNCATED;
    }
    let elems = select(last, block_elems, b < full);
    let bytes = elems * ELEM_SIZE;
    for (var w = lid; w < bytes / 4u; w += WORKGROUP_SIZE) {
      block[w] = 0u;
    }
    // Stage the slot words that hold the block's compressed bytes (whole words inside the slot's data).
    let start = off + pos;
    let stage_word = start >> 2u;
    let stage_words = min(((start + length + 3u) >> 2u) - stage_word, STAGE_WORDS);
    for (var w = lid; w < stage_words; w += WORKGROUP_SIZE) {
      stage[w] = slot[stage_word + w];
    }
    stage_at = stage_word * 4u;
    stage_len = stage_words * 4u;
    workgroupBarrier();
    let err = lz4_block(start, start + length, bytes, lid);
    workgroupBarrier();
    if (err != 0u) {
      return err;
    }
    unshuffle_block(elems, first, out_base, lid);
    workgroupBarrier();
    pos += length;
    first += elems;
  }
  let tail_bytes = (params.pixels - first) * ELEM_SIZE;
  if (size - pos < tail_bytes) {
    return ERR_TAIL_TRUNCATED;
  }
  if (size - pos > tail_bytes) {
    return ERR_TRAILING_BYTES;
  }
  if (lid == 0u && tail_bytes > 0u) {
    write_tail(off + pos, first, out_base);
  }
  return 0u;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) groups: vec3<u32>,
  @builtin(local_invocation_index) lid: u32,
) {
  for (var f = params.frame_start + wid.x; f < params.frame_end; f += groups.x) {
    reset_lane_audit();
    let err = decode_frame(f, lid);
    finish_frame(f, err, true, lid, WORKGROUP_SIZE);
  }
}
