// The byte access and copies of bslz4-decode-multi.wgsl's LZ4 walk (included there by a line naming this file,
// scripts/wgsl-include.mjs): slot bytes through the group's stage, the group's decoded block (global scratch or
// workgroup memory), partial words merged under a mask (KEEP: with the lane's last written word), literals, and
// matches (PATTERN: offsets 1 to 3 from their pattern in registers; else the period identity). It uses the
// overrides, bindings and private variables that bslz4-decode-multi.wgsl declares before the include line.

// Slot byte `i` of the group's block, from the stage when it holds it.
fn in_byte(i: u32) -> u32 {
  let r = i - stage_at;
  if (r < stage_len) {
    return (stage[stage_base + (r >> 2u)] >> ((r & 3u) * 8u)) & 0xffu;
  }
  return slot_byte(i);
}

// `count` (1..4) slot bytes of the group's block from byte `a`, from the stage when it holds them all.
fn in_bytes(a: u32, count: u32) -> u32 {
  let r = a - stage_at;
  if (r < stage_len && count <= stage_len - r) {
    let w = stage_base + (r >> 2u);
    let sh = (r & 3u) * 8u;
    var v = stage[w] >> sh;
    if ((r & 3u) + count > 4u) {
      v |= stage[w + 1u] << (32u - sh);
    }
    if (count < 4u) {
      v &= (1u << (8u * count)) - 1u;
    }
    return v;
  }
  return slot_bytes(a, count);
}

// Word w (< 2048) of the group's decoded block.
fn blk_word(w: u32) -> u32 {
  if (SCRATCH) {
    return scratch[blk_base + w];
  }
  return block[blk_base + w];
}

fn blk_set(w: u32, value: u32) {
  if (SCRATCH) {
    scratch[blk_base + w] = value;
  } else {
    block[blk_base + w] = value;
  }
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

// ZERO_TRACK: the quad of planes that block word w lies in (0 .. 2 ELEM_SIZE - 1).
fn quad_of(w: u32) -> u32 {
  var q = 0u;
  for (var j = 1u; j < 2u * ELEM_SIZE; j++) {
    q += select(0u, 1u, w >= j * quad_words);
  }
  return q;
}

// ZERO_TRACK: notes the quads of block bytes [a, end) (end > a) as holding a nonzero word.
fn note_range(a: u32, end: u32) {
  let q0 = quad_of(a >> 2u);
  let q1 = quad_of((end - 1u) >> 2u);
  lane_quads |= ((2u << q1) - 1u) & ~((1u << q0) - 1u);
}

// Writes `count` (1..4) bytes `value` at block byte `a` (inside word w = a / 4, owned by the calling lane): a
// whole word is stored; part of a word is merged under a mask (its other bytes belong to neighbouring
// sequences, written by the same lane before or after). Other lanes read only bytes written before a barrier.
// ZERO_TRACK: notes the word's quad when the word is nonzero, unless `noted` (its caller noted the range).
fn put_bytes(a: u32, count: u32, value: u32) {
  put_bytes_noted(a, count, value, false);
}

fn put_bytes_noted(a: u32, count: u32, value: u32, noted: bool) {
  let w = a >> 2u;
  var v = value;
  if (count != 4u) {
    let sh = (a & 3u) * 8u;
    let mask = ((1u << (8u * count)) - 1u) << sh;
    var old = 0u;
    if (KEEP) {
      old = select(0u, kept_v, kept_w == w);
    } else {
      old = blk_word(w);
    }
    v = (old & ~mask) | ((value << sh) & mask);
  }
  blk_set(w, v);
  if (ZERO_TRACK && !noted) {
    lane_quads |= select(0u, 1u << quad_of(w), v != 0u);
  }
  if (KEEP) {
    kept_w = w;
    kept_v = v;
  }
}

// The first word >= w0 that lane `lane` owns (words w with w mod LANES == lane).
fn owned_word(w0: u32, lane: u32) -> u32 {
  return w0 + (lane + LANES - w0 % LANES) % LANES;
}

// Literals: input bytes [src, src + count) to block bytes [op, op + count); one word per lane.
fn copy_literals(src: u32, op: u32, count: u32, lane: u32) {
  let end = op + count;
  for (var w = owned_word(op >> 2u, lane); w * 4u < end; w += LANES) {
    let a = max(w * 4u, op);
    let n = min(w * 4u + 4u, end) - a;
    put_bytes(a, n, in_bytes(src + (a - op), n));
  }
}

// Match of offset 1, 2 or 3 (PATTERN): block bytes [op, end) repeat the `offset` bytes `p` (little-endian)
// before op. Bytes 0..7 of the repetition from phase 0 are (lo, hi); the word at phase r is bytes r..r+3.
fn copy_pattern(op: u32, offset: u32, end: u32, p: u32, lane: u32) {
  var lo = p * 0x01010101u;
  var hi = lo;
  if (offset == 2u) {
    lo = p | (p << 16u);
    hi = lo;
  } else if (offset == 3u) {
    lo = p | (p << 24u);
    hi = (p >> 8u) | (p << 16u);
  }
  if (ZERO_TRACK && p != 0u) {
    note_range(op, end);
  }
  for (var w = owned_word(op >> 2u, lane); w * 4u < end; w += LANES) {
    let a = max(w * 4u, op);
    let n = min(w * 4u + 4u, end) - a;
    let j = a - op;
    var r = 0u;
    if (offset == 2u) {
      r = j & 1u;
    } else if (offset == 3u) {
      r = j % 3u;
    }
    let word = select((lo >> (8u * r)) | (hi << (32u - 8u * r)), lo, r == 0u);
    put_bytes_noted(a, n, word, true);
  }
}

// Match: block bytes [op, op + count) from `offset` back (period identity). When `from_literals`, every source
// byte is a literal of the same sequence (block bytes [lit_out, op), input bytes from lit_src): read the input.
fn copy_match(op: u32, offset: u32, count: u32, from_literals: bool, lit_src: u32, lit_out: u32, lane: u32) {
  let end = op + count;
  let base = op - offset;
  if (PATTERN && offset < 4u) {
    var p = 0u;
    if (from_literals) {
      p = in_bytes(lit_src + (base - lit_out), offset);
    } else {
      p = block_bytes(base, offset);
    }
    copy_pattern(op, offset, end, p, lane);
    return;
  }
  for (var w = owned_word(op >> 2u, lane); w * 4u < end; w += LANES) {
    let a = max(w * 4u, op);
    let n = min(w * 4u + 4u, end) - a;
    let j = a - op;
    // Source of the word's first byte: base + r, r = j mod offset.
    var r = j;
    if (j >= offset) {
      r = j % offset;
    }
    var word = 0u;
    if (r + n <= offset) {
      // The word's sources are contiguous.
      if (from_literals) {
        word = in_bytes(lit_src + (base + r - lit_out), n);
      } else {
        word = block_bytes(base + r, n);
      }
    } else {
      for (var k = 0u; k < n; k++) {
        let s = base + r;
        var byte: u32;
        if (from_literals) {
          byte = in_byte(lit_src + (s - lit_out));
        } else {
          byte = block_byte(s);
        }
        word |= byte << (8u * k);
        r += 1u;
        if (r == offset) {
          r = 0u;
        }
      }
    }
    put_bytes(a, n, word);
  }
}
