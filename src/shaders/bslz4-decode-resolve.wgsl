// Bitshuffle/LZ4 decode + audit by resolving output words, a variant of src/shaders/bslz4-decode.wgsl: the same
// results word for word, the same error codes (CPU twin: src/kernels/bslz4-decode.ts), the same bindings plus
// `scratch` (8 KiB a workgroup: the decoded, still bit-shuffled block, as in bslz4-decode-multi.wgsl's SCRATCH).
// Selected by src/gpu/passes/bslz4-decode.ts for variants with the `resolve` part.
//
// One workgroup of LANES lanes (one warp) decodes a frame, block after block. The other shaders have every lane
// walk every LZ4 sequence and copy it together, with a barrier whenever a match reads bytes written in the
// same epoch; here the work is split in two:
// 1. Parse: lane 0 alone walks up to TABLE sequences and writes each one's place into workgroup memory (`tab`:
//    where its literals start and end in the output, where they are in the slot, its match offset). It checks
//    what the twin checks, in the twin's order, and copies nothing.
// 2. Resolve: every lane computes whole output words (word w belongs to lane w mod LANES) from the table
//    alone. An output byte q inside sequence k is a literal (slot byte src + q - start), or a match byte, equal
//    to output byte le - off + ((q - le) mod off) (the period identity; le = the match's start): an earlier
//    byte, resolved the same way until it is a literal or a byte of an earlier round (already in the block).
//    Four bytes are resolved at once while they stay contiguous; a match of offset 1 to 4 resolves its period
//    once and repeats it in registers; any other word is resolved byte by byte.
// Rounds of TABLE sequences repeat until the block ends; a barrier separates a round's writes from the next
// round's reads (the only barriers of the walk). A word across a round's end is written in two parts by its
// owner. Then the lanes undo the bit transpose and audit the values as the other shaders do.
// Every loop is bounded: the parse by byte counts as in the other shaders, a resolve by q, which falls at every
// step. Reads of the slot stay inside the block's compressed bytes (the parse checked every literal run),
// reads of the block below the bytes already written, writes inside the frame's words and the 8 KiB block.

override ELEM_SIZE: u32 = 2u;
// Lanes of the workgroup (one block at a time).
override LANES: u32 = 32u;
// Sequences parsed per round, and TABLE + 1 (the table's entries with the round's end).
override TABLE: u32 = 128u;
override TABLE_ENTRIES: u32 = 129u;

// #include "common/bslz4-bindings.wgsl"

// 2048 words (one decoded block) per workgroup of the dispatch, from word wid * 2048.
@group(0) @binding(8) var<storage, read_write> scratch: array<u32>;

// Sequence k of the round: (start: output byte of its first literal, le: output byte after its literals = the
// start of its match, src: slot byte of its first literal, off: match offset, 0 for the last sequence).
// Entry `count` (after the last) has start = the round's end.
var<workgroup> tab: array<vec4<u32>, TABLE_ENTRIES>;
// The round's sequence count and end (written by lane 0 before the barrier that publishes the table).
var<workgroup> round_count: u32;
var<workgroup> round_end: u32;
// 0: the block goes on in another round, else its verdict + 1 (1 = decoded).
var<workgroup> round_done: u32;
// Histogram, maximum and (lo, hi) sum of the current frame.
var<workgroup> frame_hist: array<atomic<u32>, BINS>;
var<workgroup> frame_max: atomic<u32>;
var<workgroup> frame_sum: array<atomic<u32>, 2>;

// #include "common/bslz4-audit.wgsl"

// This workgroup's decoded block: from word blk_base of `scratch`.
var<private> blk_base: u32;
// Lane 0's walk of the current block: the next token and output byte.
var<private> walk_ip: u32;
var<private> walk_op: u32;

// #include "common/bslz4-bytes.wgsl"

fn blk_word(w: u32) -> u32 {
  return scratch[blk_base + w];
}

fn block_byte(i: u32) -> u32 {
  return (blk_word(i >> 2u) >> ((i & 3u) * 8u)) & 0xffu;
}

// `count` (1..4) block bytes from byte `a` (all below 8192), little-endian in the low bytes.
fn block_bytes(a: u32, count: u32) -> u32 {
  let w = a >> 2u;
  let sh = (a & 3u) * 8u;
  var v = blk_word(w) >> sh;
  if ((a & 3u) + count > 4u) {
    v |= blk_word(w + 1u) << (32u - sh);
  }
  if (count < 4u) {
    v &= (1u << (8u * count)) - 1u;
  }
  return v;
}

// #include "common/bslz4-unshuffle.wgsl"

// Lane 0: parses sequences of the block slot[.., end) (decoding to out_end bytes) from walk_ip / walk_op into
// `tab`, at most TABLE; sets round_count, round_end and round_done (0 when the table is full and the block
// goes on). The checks and their order are the twin's.
fn parse_round(end: u32, out_end: u32) {
  var ip = walk_ip;
  var op = walk_op;
  var n = 0u;
  var done = 0u;
  loop {
    if (n == TABLE) {
      break;
    }
    if (ip >= end) {
      done = 1u + ERR_LZ4_TRUNCATED;
      break;
    }
    let token = slot_byte(ip);
    ip += 1u;
    var lit = token >> 4u;
    if (lit == 15u) {
      loop {
        if (ip >= end) {
          done = 1u + ERR_LZ4_TRUNCATED;
          break;
        }
        let b = slot_byte(ip);
        ip += 1u;
        lit += b;
        if (lit > end - ip) {
          done = 1u + ERR_LZ4_TRUNCATED;
          break;
        }
        if (b != 255u) {
          break;
        }
      }
      if (done != 0u) {
        break;
      }
    }
    if (lit > end - ip) {
      done = 1u + ERR_LZ4_TRUNCATED;
      break;
    }
    if (lit > out_end - op) {
      done = 1u + ERR_LZ4_OVERRUN;
      break;
    }
    let start = op;
    let src = ip;
    ip += lit;
    op += lit;
    if (ip == end) {
      done = 1u + select(ERR_LZ4_SHORT, 0u, op == out_end);
      tab[n] = vec4<u32>(start, op, src, 0u);
      n += 1u;
      break;
    }
    if (end - ip < 2u) {
      done = 1u + ERR_LZ4_TRUNCATED;
      break;
    }
    let offset = slot_bytes(ip, 2u);
    ip += 2u;
    if (offset == 0u || offset > op) {
      done = 1u + ERR_LZ4_BAD_OFFSET;
      break;
    }
    var count = token & 15u;
    if (count == 15u) {
      loop {
        if (ip >= end) {
          done = 1u + ERR_LZ4_TRUNCATED;
          break;
        }
        let b = slot_byte(ip);
        ip += 1u;
        count += b;
        if (count + 4u > out_end - op) {
          done = 1u + ERR_LZ4_OVERRUN;
          break;
        }
        if (b != 255u) {
          break;
        }
      }
      if (done != 0u) {
        break;
      }
    }
    count += 4u;
    if (count > out_end - op) {
      done = 1u + ERR_LZ4_OVERRUN;
      break;
    }
    tab[n] = vec4<u32>(start, op, src, offset);
    n += 1u;
    op += count;
  }
  tab[n] = vec4<u32>(op, op, 0u, 0u);
  walk_ip = ip;
  walk_op = op;
  round_count = n;
  round_end = op;
  round_done = done;
}

// The 4 bytes at phase r (< off) of the repetition of the `off` (1..4) bytes p: bytes r, r + 1, ... mod off.
fn repeat_word(p: u32, off: u32, r: u32) -> u32 {
  var lo = p * 0x01010101u;
  var hi = lo;
  if (off == 2u) {
    lo = p | (p << 16u);
    hi = lo;
  } else if (off == 3u) {
    lo = p | (p << 24u);
    hi = (p >> 8u) | (p << 16u);
  } else if (off == 4u) {
    lo = p;
    hi = p;
  }
  return select((lo >> (8u * r)) | (hi << (32u - 8u * r)), lo, r == 0u);
}

// Output bytes [q0, q0 + n0) (n0: 1 or 4) of the round that starts at `lo`, q0 inside sequence k0: (value
// little-endian, 1) or (0, 0) when four bytes do not resolve together (they cross a literal run's, a match's, a
// period's or the round's start). One byte always resolves.
fn resolve(q0: u32, n0: u32, k0: u32, lo: u32) -> vec2<u32> {
  var q = q0;
  var n = n0;
  var k = k0;
  // A match of offset 1 to 4 under a whole word: its period (pat_off bytes before the match) is resolved, and
  // the word is the period repeated from phase pat_r.
  var pat_off = 0u;
  var pat_r = 0u;
  var value = 0u;
  loop {
    if (q < lo) {
      // Written by an earlier round.
      if (q + n > lo) {
        return vec2<u32>(0u);
      }
      value = block_bytes(q, n);
      break;
    }
    // tab[0].x == lo <= q: the search ends.
    while (tab[k].x > q) {
      k -= 1u;
    }
    let e = tab[k];
    if (q < e.y) {
      if (q + n > e.y) {
        return vec2<u32>(0u);
      }
      value = slot_bytes(e.z + (q - e.x), n);
      break;
    }
    let off = e.w;
    let d = q - e.y;
    var r = d;
    if (d >= off) {
      r = d % off;
    }
    if (q + n > tab[k + 1u].x) {
      return vec2<u32>(0u);
    }
    if (r + n > off) {
      if (n == 4u && off <= 4u && pat_off == 0u) {
        pat_off = off;
        pat_r = r;
        n = off;
        q = e.y - off;
        continue;
      }
      return vec2<u32>(0u);
    }
    q = e.y - off + r;
  }
  if (pat_off != 0u) {
    value = repeat_word(value, pat_off, pat_r);
  }
  return vec2<u32>(value, 1u);
}

// The first word >= w0 that lane `lane` owns (words w with w mod LANES == lane).
fn owned_word(w0: u32, lane: u32) -> u32 {
  return w0 + (lane + LANES - w0 % LANES) % LANES;
}

// Writes the block bytes [lo, hi) of the round whose `count` sequences are in `tab`: whole words, a word across
// `lo` merged with its bytes below lo (written by this lane in the round before), a word across `hi` with zeros
// above hi (merged in the next round).
fn resolve_round(lo: u32, hi: u32, count: u32, lane: u32) {
  var k = 0u;
  let w_end = (hi + 3u) >> 2u;
  for (var w = owned_word(lo >> 2u, lane); w < w_end; w += LANES) {
    let a = max(w * 4u, lo);
    let b = min(w * 4u + 4u, hi);
    if (a >= b) {
      continue;
    }
    while (k + 1u < count && tab[k + 1u].x <= a) {
      k += 1u;
    }
    var v = 0u;
    var whole = vec2<u32>(0u);
    if (b - a == 4u) {
      whole = resolve(a, 4u, k, lo);
    }
    if (whole.y != 0u) {
      v = whole.x;
    } else {
      var kb = k;
      for (var i = a; i < b; i++) {
        while (kb + 1u < count && tab[kb + 1u].x <= i) {
          kb += 1u;
        }
        v |= resolve(i, 1u, kb, lo).x << (8u * (i & 3u));
      }
    }
    if (a > w * 4u) {
      v |= blk_word(w) & ((1u << (8u * (a & 3u))) - 1u);
    }
    scratch[blk_base + w] = v;
  }
}

// Decodes the raw LZ4 block slot[start, end) into block bytes [0, out_end). Returns 0 or an error code
// (uniform across the workgroup).
fn lz4_block(start: u32, end: u32, out_end: u32, lane: u32) -> u32 {
  walk_ip = start;
  walk_op = 0u;
  var lo = 0u;
  loop {
    if (lane == 0u) {
      parse_round(end, out_end);
    }
    let done = workgroupUniformLoad(&round_done);
    if (done > 1u) {
      return done - 1u;
    }
    let hi = round_end;
    resolve_round(lo, hi, round_count, lane);
    // The round's words are visible to the next round (or the unshuffle), and its table is read before lane 0
    // writes the next (an execution barrier).
    storageBarrier();
    if (done == 1u) {
      return 0u;
    }
    lo = hi;
  }
}

// Undoes the bit transpose of a decoded block of `elems` elements (a multiple of 8) whose first element is
// element `first` of the frame; writes packed words and audits the values.
fn unshuffle_block(elems: u32, first: u32, out_base: u32, lane: u32) {
  let pb = elems / 8u;
  for (var g = lane; g < pb; g += LANES) {
    unshuffle_group(g, pb, first, out_base);
  }
}

// Decodes batch frame f into its output words; returns 0 or an error code.
fn decode_frame(f: u32, lane: u32) -> u32 {
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
  let n = params.pixels;
  let block_elems = block_bytes / ELEM_SIZE;
  let full = n / block_elems;
  let last = (n % block_elems) & ~7u;
  let count = full + select(0u, 1u, last > 0u);
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
    // The previous block's unshuffle read the block before this one writes it.
    storageBarrier();
    let err = lz4_block(off + pos, off + pos + length, elems * ELEM_SIZE, lane);
    if (err != 0u) {
      return err;
    }
    unshuffle_block(elems, first, out_base, lane);
    pos += length;
    first += elems;
  }
  let tail_bytes = (n - first) * ELEM_SIZE;
  if (size - pos < tail_bytes) {
    return ERR_TAIL_TRUNCATED;
  }
  if (size - pos > tail_bytes) {
    return ERR_TRAILING_BYTES;
  }
  if (lane == 0u && tail_bytes > 0u) {
    write_tail(off + pos, first, out_base);
  }
  return 0u;
}

@compute @workgroup_size(LANES)
fn main(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) groups: vec3<u32>,
  @builtin(local_invocation_index) lane: u32,
) {
  blk_base = wid.x * BLOCK_WORDS;
  let value_words = (params.pixels * ELEM_SIZE + 3u) / 4u;
  for (var f = params.frame_start + wid.x; f < params.frame_end; f += groups.x) {
    lane_zero = 0u;
    lane_over = 0u;
    lane_max = 0u;
    lane_sum = vec2<u32>(0u);
    let err = decode_frame(f, lane);
    let out_base = f * params.words_per_frame;
    if (err == 0u) {
      for (var w = value_words + lane; w < params.words_per_frame; w += LANES) {
        decoded[out_base + w] = 0u;
      }
      if (lane_zero != 0u) {
        atomicAdd(&frame_hist[0], lane_zero);
      }
      if (lane_over != 0u) {
        atomicAdd(&frame_hist[BINS - 1u], lane_over);
      }
      atomicMax(&frame_max, lane_max);
      let old = atomicAdd(&frame_sum[0], lane_sum.x);
      atomicAdd(&frame_sum[1], lane_sum.y + select(0u, 1u, old + lane_sum.x < old));
    } else {
      // Other lanes may have written these words: order their writes before the zero fill.
      storageBarrier();
      for (var w = lane; w < params.words_per_frame; w += LANES) {
        decoded[out_base + w] = 0u;
      }
    }
    workgroupBarrier();
    // A decoded frame's counts go to the global audit; a failed frame's are dropped.
    for (var i = lane; i < BINS; i += LANES) {
      let c = atomicExchange(&frame_hist[i], 0u);
      if (err == 0u && c != 0u) {
        audit_add64(AUDIT_HISTOGRAM + 2u * i, c);
        if (i == BINS - 1u) {
          audit_add64(AUDIT_ABOVE_255, c);
        }
      }
    }
    if (lane == 0u) {
      let sum = vec2<u32>(atomicExchange(&frame_sum[0], 0u), atomicExchange(&frame_sum[1], 0u));
      let fmax = atomicExchange(&frame_max, 0u);
      let g = params.first_frame + f;
      errors[g] = err;
      if (err == 0u) {
        totals[g] = sum;
        if (fmax != 0u) {
          atomicMax(&audit[AUDIT_MAX], fmax);
        }
      } else {
        totals[g] = vec2<u32>(0u);
        atomicAdd(&audit[AUDIT_FAILED], 1u);
      }
    }
    workgroupBarrier();
  }
}
