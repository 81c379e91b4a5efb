// The body of the multi decode passes, bslz4-decode-multi.wgsl and bslz4-decode-list.wgsl (their header
// comments describe it): overrides, bindings 0-8, the walk and `main`. The including pass defines `LIST` (a
// const) and the list accessors `list_info` and `list_seq`, so only the list pass binds the lists (bindings 9
// and 10): the others stay within the 8 storage buffers a stage that every WebGPU device offers. It defines
// `PARSE_AHEAD` (a const) and `parse_ahead(t)` too: true only in bslz4-decode-list-ahead.wgsl, whose dispatches
// also parse the next batch (block entry t of it per thread of their last Params.ahead_groups workgroups).

override ELEM_SIZE: u32 = 2u;
// Lanes per block, and blocks decoded at once by one workgroup (workgroup size LANES * GROUPS).
override LANES: u32 = 32u;
override GROUPS: u32 = 2u;
// Words of workgroup memory staging a block's compressed bytes, per group; STAGE_TOTAL = STAGE_WORDS * GROUPS.
override STAGE_WORDS: u32 = 512u;
override STAGE_TOTAL: u32 = 1024u;
// The decoded block in `scratch` (global) instead of workgroup memory.
override SCRATCH: bool = true;
// Every lane keeps the last 8 output bytes in registers: a match of offset <= 8 whose source bytes it knows
// is copied from them (no memory read, no barrier).
override WINDOW: bool = false;
// Every lane keeps the last word it wrote (index and value): a partial word is merged with it instead of read
// back from memory. Words are owned by lanes and written in output order, so the bytes of a partial word
// before its new ones were written by the same lane as its latest write; a word the lane did not write last
// holds no written bytes below its new ones (those above are written later, before anything reads them).
override KEEP: bool = false;
// A match of offset 1, 2 or 3 (the commonest in bit-shuffled counts) loads its pattern once (from the block or
// its own literals) and builds each word from it in registers: no per-byte loop, no per-word reads. (The same for
// offsets up to 7, and a word across a longer period's end read in two parts, were measured slower on the H200.)
override PATTERN: bool = false;
// The unshuffle reads whole plane words, each once for four groups of 8 elements (see unshuffle_block).
override UNSHUFFLE_WORDS: bool = false;
// Words of workgroup memory holding decoded blocks: 2048 * GROUPS without SCRATCH, else 1 (unused).
override BLOCK_WG_WORDS: u32 = 1u;
// LIST (a const of the pass file: true in bslz4-decode-list.wgsl): blocks are copied from the sequence lists
// that bslz4-parse.wgsl wrote (read through list_info and list_seq; a block without a list is walked from its
// tokens); LIST_CAP sequences a list, LIST_WG = LIST_CAP * GROUPS (else 1).
override LIST_CAP: u32 = 256u;
override LIST_WG: u32 = 1u;
// LIST: the group's list is copied into workgroup memory first (else every lane reads it through list_seq).
override LIST_STAGE: bool = true;
// Each group decodes a frame of its own, one block a round (decode_group_frame, bslz4-group-frame.wgsl),
// instead of the workgroup's groups decoding one frame's blocks together: a frame of 9 blocks and 2 groups then
// takes 9 rounds for two frames, not 5 rounds a frame whose last leaves one group idle. AUDIT_SETS = GROUPS.
override FRAME_GROUPS: bool = false;
// FRAME_GROUPS: before a block's unshuffle its lanes read the block's bit planes 4 at a time (quad q: words
// [q pb, (q + 1) pb), pb = elems / 8) and the unshuffle skips the loads and transposes of the quads that are all
// zero (plane_quads). The words it writes are the same: a zero quad contributes zero bits.
override PLANE_SKIP: bool = false;
// PLANE_SKIP: a block whose values are all below 256 (every quad of planes from 2 on zero) and whose elements are
// whole words of its planes (32 elements a word, from a multiple of 32) is unshuffled a plane word at a time
// and audited on the bit planes themselves (unshuffle_low_words): zeros, sum and maximum of 32 values from
// popcounts of their 8 plane words, instead of per value.
override BIT_AUDIT: bool = false;
// PLANE_SKIP: the quads of planes that hold a nonzero word are noted while the block is written (each lane ORs the
// quads of the nonzero words it stores; a pattern match of offset 1-3 its whole range unless its pattern is zero)
// instead of read from the block again before the unshuffle (plane_quads). A noted quad may still be zero (a
// partial word of a pattern); never the reverse, as every block byte is stored by put_bytes.
override ZERO_TRACK: bool = false;

// #include "bslz4-bindings.wgsl"

// SCRATCH: 2048 words per group of each workgroup of the dispatch (workgroup w, group s: from word
// (w * GROUPS + s) * 2048).
@group(0) @binding(8) var<storage, read_write> scratch: array<u32>;

// Decoded (still bit-shuffled) blocks without SCRATCH, 2048 words per group.
var<workgroup> block: array<u32, BLOCK_WG_WORDS>;
// Per group: slot words of its block's compressed bytes.
var<workgroup> stage: array<u32, STAGE_TOTAL>;
// LIST: per group, its block's sequence list (LIST_CAP entries from list_base).
var<workgroup> lists: array<vec2<u32>, LIST_WG>;

// #include "bslz4-audit.wgsl"

// The staged slot bytes [stage_at, stage_at + stage_len) of this lane's group, from stage[stage_base].
var<private> stage_at: u32;
var<private> stage_len: u32;
var<private> stage_base: u32;
// This lane's group's decoded block: from word blk_base of `scratch` (SCRATCH) or of `block`.
var<private> blk_base: u32;
// KEEP: the last word this lane wrote in its block (index; 0xffffffff: none yet) and its value.
var<private> kept_w: u32;
var<private> kept_v: u32;
// ZERO_TRACK: the quads of planes of the current block this lane stored a nonzero word in (bit q: quad q), and
// words a quad (elems / 8).
var<private> lane_quads: u32;
var<private> quad_words: u32;
// LIST: this group's list (from lists[list_base]), its sequences, and its block's verdict + 1 (0: no list).
var<private> list_base: u32;
// LIST without LIST_STAGE: the group's list from list_seq(list_at).
var<private> list_at: u32;
var<private> list_n: u32;
var<private> list_done: u32;

// #include "bslz4-bytes.wgsl"
// The flags of the 32 pixels from 32 floor(e / 32) as bits (bit i: pixel 32 floor(e / 32) + i), as pack_flags
// wrote them.
fn flag_word(e: u32) -> u32 {
  return scratch[params.flag_base + (e >> 5u)];
}

// The flags of pixels e..e + 7 (e a multiple of 8) as bits, from the words pack_flags wrote (one load for 8
// values, where reading each pixel's flag cost 4 % of the pass on the H200).
fn group_flags(e: u32) -> u32 {
  return (flag_word(e) >> (e & 31u)) & 0xffu;
}

// #include "bslz4-unshuffle.wgsl"

// Slot and block bytes, partial words, literal and match copies.
// #include "bslz4-multi-copy.wgsl"

// Epochs between checks that every group finished its block (two barriers and a uniform load each).
override EPOCHS_PER_ROUND: u32 = 8u;

// The walk's state, the WINDOW helpers and lz4_epoch.
// #include "bslz4-multi-walk.wgsl"

// Byte k of each of four words, packed (w3's in the top byte).
fn pick(w0: u32, w1: u32, w2: u32, w3: u32, k: u32) -> u32 {
  let s = 8u * k;
  return (((w3 >> s) & 0xffu) << 24u) | (((w2 >> s) & 0xffu) << 16u) | (((w1 >> s) & 0xffu) << 8u) |
    ((w0 >> s) & 0xffu);
}

// Undoes the bit transpose of a decoded block of `elems` elements (a multiple of 8) whose first element is
// element `first` of the frame; writes packed words and audits the values. With UNSHUFFLE_WORDS and planes of
// whole words, a lane reads each plane's word once for the four groups of 8 elements whose bytes it holds (8 x
// ELEM_SIZE word reads for 32 elements, against one word read per plane byte).
fn unshuffle_block(elems: u32, first: u32, out_base: u32, lane: u32, live: u32) {
  let pb = elems / 8u;
  if (PLANE_SKIP) {
    if (BIT_AUDIT && (live >> 2u) == 0u && elems % 32u == 0u && first % 32u == 0u) {
      let pw = pb / 4u;
      if (quad_low_words()) {
        // Every lane of the group takes every round, so that the 4 lanes of a quad exchange their pieces
        // together; a lane past the block's words stores and audits nothing.
        let q = quad_lanes(lane);
        for (var k0 = 0u; k0 < pw; k0 += LANES) {
          unshuffle_low_words(k0 + lane, pw, first, out_base, live, k0, q);
        }
      } else {
        for (var k = lane; k < pw; k += LANES) {
          unshuffle_low_words(k, pw, first, out_base, live, 0u, QuadLanes());
        }
      }
      if (AUDIT_BINS && MID_BINS) {
        bound_lane_mid();
      }
      return;
    }
    for (var g = lane; g < pb; g += LANES) {
      unshuffle_group_live(g, pb, first, out_base, live);
    }
    return;
  }
  if (UNSHUFFLE_WORDS && pb % 4u == 0u) {
    let pw = pb / 4u;
    for (var q = lane; q < pw; q += LANES) {
      var w: array<u32, 32>;
      for (var r = 0u; r < 8u * ELEM_SIZE; r++) {
        w[r] = blk_word(r * pw + q);
      }
      for (var k = 0u; k < 4u; k++) {
        var lo = vec4<u32>(0u);
        var hi = vec4<u32>(0u);
        for (var j = 0u; j < ELEM_SIZE; j++) {
          let r = 8u * j;
          let p = transpose8(
            pick(w[r + 4u], w[r + 5u], w[r + 6u], w[r + 7u], k),
            pick(w[r], w[r + 1u], w[r + 2u], w[r + 3u], k),
          );
          let shift = vec4<u32>(8u * j);
          lo |= bytes4(p.x) << shift;
          hi |= bytes4(p.y) << shift;
        }
        emit_group(first + 32u * q + 8u * k, lo, hi, out_base);
      }
    }
    return;
  }
  for (var g = lane; g < pb; g += LANES) {
    unshuffle_group(g, pb, first, out_base);
  }
}


// unshuffle_group_live and plane_quads (PLANE_SKIP).
// #include "bslz4-plane-skip.wgsl"

// The verdict of this lane's group's block in the last lz4_round (0 or an error code; not uniform).
var<private> own_verdict: u32;

// Per group: its walk's verdict + 1 once done (0 while running), written by the group's lane 0.
var<workgroup> walk_done: array<u32, GROUPS>;
// 0 while a group of the round is still walking, else the round's verdict + 1 (written by lane 0 of group 0,
// read uniformly): the first failing block's error, else 0.
var<workgroup> round_done: u32;

// The barrier that ends an epoch: makes the blocks' bytes written before it visible to the group.
fn epoch_barrier() {
  if (SCRATCH) {
    storageBarrier();
  } else {
    workgroupBarrier();
  }
}

// Every group decodes its raw LZ4 block slot[start, end) into its block bytes [0, out_end) (a group with
// `busy` false does nothing). Returns 0 or the first failing group's error code (uniform across the
// workgroup); own_verdict is the lane's group's. Every EPOCHS_PER_ROUND epochs the workgroup checks uniformly whether every group is done.
fn lz4_round(start: u32, end: u32, out_end: u32, busy: bool, sub: u32, lane: u32, lid: u32) -> u32 {
  kept_w = 0xffffffffu;
  lane_quads = 0u;
  quad_words = out_end / (8u * ELEM_SIZE);
  var w = Walk(start, 0u, 0u, 0u, 0u, select(1u, 0u, busy), vec2<u32>(0u), 0u);
  let listed = LIST && busy && list_done != 0u;
  if (listed) {
    w.ip = 0u;
    if (list_done != 1u) {
      w.done = list_done;
    }
  }
  loop {
    for (var e = 0u; e < EPOCHS_PER_ROUND; e++) {
      if (w.done == 0u) {
        if (listed) {
          w = list_epoch(w, start, lane);
        } else {
          w = lz4_epoch(w, end, out_end, lane);
        }
      }
      epoch_barrier();
    }
    // The reads of walk_done and round_done of the last check were followed by EPOCHS_PER_ROUND barriers.
    if (lane == 0u) {
      walk_done[sub] = w.done;
    }
    workgroupBarrier();
    if (lid == 0u) {
      var verdict = 1u;
      for (var s = 0u; s < GROUPS; s++) {
        let d = walk_done[s];
        if (d == 0u) {
          verdict = 0u;
          break;
        }
        if (d != 1u && verdict == 1u) {
          verdict = d;
        }
      }
      round_done = verdict;
    }
    let done = workgroupUniformLoad(&round_done);
    if (done != 0u) {
      own_verdict = w.done - 1u;
      return done - 1u;
    }
  }
}

// The chunk's header checks (its index entry and 12-byte header): (0, block bytes) or (error code, 0).
fn check_chunk(off: u32, size: u32) -> vec2<u32> {
  if (off > params.slot_bytes || size > params.slot_bytes - off) {
    return vec2<u32>(ERR_INDEX_OUT_OF_SLOT, 0u);
  }
  if (size < HEADER_BYTES) {
    return vec2<u32>(ERR_HEADER_TRUNCATED, 0u);
  }
  if (slot_be32(off) != 0u || slot_be32(off + 4u) != params.expected_bytes) {
    return vec2<u32>(ERR_SIZE_MISMATCH, 0u);
  }
  let block_bytes = slot_be32(off + 8u);
  if (block_bytes == 0u || block_bytes % (8u * ELEM_SIZE) != 0u) {
    return vec2<u32>(ERR_BAD_BLOCK_SIZE, 0u);
  }
  if (block_bytes > MAX_BLOCK_BYTES) {
    return vec2<u32>(ERR_UNSUPPORTED_BLOCK_SIZE, 0u);
  }
  return vec2<u32>(0u, block_bytes);
}

// A busy group's lanes stage the slot words that hold block b's compressed bytes [start, start + length) of
// frame f (whole words inside the slot's data) and, with LIST, find the block's list from the parse pass.
fn stage_block(f: u32, b: u32, start: u32, length: u32, lane: u32) {
  let stage_word = start >> 2u;
  let stage_words = min(((start + length + 3u) >> 2u) - stage_word, STAGE_WORDS);
  for (var w = lane; w < stage_words; w += LANES) {
    stage[stage_base + w] = slot[stage_word + w];
  }
  stage_at = stage_word * 4u;
  stage_len = stage_words * 4u;
  if (LIST) {
    // The block's list from the parse pass, when it has one (blocks past the 8 KiB count have none).
    let per_frame = list_blocks();
    list_n = 0u;
    list_done = 0u;
    if (b < per_frame) {
      let t = params.list_entry0 + (f - params.frame_start) * per_frame + b;
      let info = list_info(t);
      list_n = info.x;
      list_done = info.y;
      list_at = t * LIST_CAP;
      if (LIST_STAGE && list_done == 1u) {
        for (var k = lane; k < list_n; k += LANES) {
          lists[list_base + k] = list_seq(t * LIST_CAP + k);
        }
      }
    }
  }
}

// The chunk's end after its blocks (from byte `pos`): the raw tail of elements past the last whole group of 8,
// exactly as long as the frame needs. Returns 0 or an error code; lane 0 of the frame's lanes writes the tail.
fn finish_chunk(off: u32, size: u32, pos: u32, done_elems: u32, out_base: u32, first_lane: bool) -> u32 {
  let tail_bytes = (params.pixels - done_elems) * ELEM_SIZE;
  if (size - pos < tail_bytes) {
    return ERR_TAIL_TRUNCATED;
  }
  if (size - pos > tail_bytes) {
    return ERR_TRAILING_BYTES;
  }
  if (first_lane && tail_bytes > 0u) {
    write_tail(off + pos, done_elems, out_base);
  }
  return 0u;
}

// decode_frame (the groups of a workgroup decode one frame's blocks together).
// #include "bslz4-frame.wgsl"

// #include "bslz4-group-frame.wgsl"

// Packs the pixel flags as bits into scratch words [flag_base, flag_base + ceil(pixels / 32)), one word an
// invocation; dispatched once before a job's decode dispatches.
@compute @workgroup_size(64)
fn pack_flags(@builtin(global_invocation_id) id: vec3<u32>) {
  let i = id.x;
  if (i >= (params.pixels + 31u) / 32u) {
    return;
  }
  var bits = 0u;
  for (var k = 0u; k < 32u; k++) {
    let p = i * 32u + k;
    if (p < params.pixels && flags[p] != 0u) {
      bits |= 1u << k;
    }
  }
  scratch[params.flag_base + i] = bits;
}

@compute @workgroup_size(LANES * GROUPS)
fn main(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) groups: vec3<u32>,
  @builtin(local_invocation_index) lid: u32,
) {
  let workgroup_size = LANES * GROUPS;
  // PARSE_AHEAD: the dispatch's last ahead_groups workgroups parse the next batch, the others decode.
  let w = wid.x;
  var decode_groups = groups.x;
  if (PARSE_AHEAD) {
    decode_groups -= params.ahead_groups;
    if (w >= decode_groups) {
      parse_ahead((w - decode_groups) * workgroup_size + lid);
      return;
    }
  }
  let sub = lid / LANES;
  let lane = lid % LANES;
  stage_base = sub * STAGE_WORDS;
  list_base = sub * LIST_CAP;
  blk_base = select(sub * BLOCK_WORDS, (w * GROUPS + sub) * BLOCK_WORDS, SCRATCH);
  if (FRAME_GROUPS) {
    // Workgroup w takes frames from frame_start + w * GROUPS, GROUPS at a time (group `sub` the sub-th).
    audit_set = sub;
    for (var f0 = params.frame_start + w * GROUPS; f0 < params.frame_end; f0 += decode_groups * GROUPS) {
      let f = f0 + sub;
      let live = f < params.frame_end;
      reset_lane_audit();
      let err = decode_group_frame(f, live, sub, lane, lid);
      finish_frame(f, err, live, lane, LANES);
    }
    return;
  }
  audit_set = 0u;
  for (var f = params.frame_start + w; f < params.frame_end; f += decode_groups) {
    reset_lane_audit();
    let err = decode_frame(f, sub, lane, lid);
    finish_frame(f, err, true, lid, workgroup_size);
  }
}
