// The byte access and copies of bslz4-decode.wgsl's LZ4 walk (included there by a line naming this file,
// scripts/wgsl-include.mjs): slot bytes through the stage, the block in workgroup memory, partial words or-ed
// into their zeroed bytes, literals, and matches by the period identity. It uses the overrides, bindings and
// variables that bslz4-decode.wgsl declares before the include line.

// Slot byte `i` of the current block, from the stage when it holds it.
fn in_byte(i: u32) -> u32 {
  let r = i - stage_at;
  if (r < stage_len) {
    return (stage[r >> 2u] >> ((r & 3u) * 8u)) & 0xffu;
  }
  return slot_byte(i);
}

// `count` (1..4) slot bytes of the current block from byte `a`, from the stage when it holds them all.
fn in_bytes(a: u32, count: u32) -> u32 {
  let r = a - stage_at;
  if (r < stage_len && count <= stage_len - r) {
    let w = r >> 2u;
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

fn block_byte(i: u32) -> u32 {
  return (block[i >> 2u] >> ((i & 3u) * 8u)) & 0xffu;
}

// `count` (1..4) block bytes from byte `a` (all below 8192), little-endian in the low bytes.
fn block_bytes(a: u32, count: u32) -> u32 {
  let w = a >> 2u;
  let sh = (a & 3u) * 8u;
  var v = block[w] >> sh;
  if ((a & 3u) + count > 4u) {
    v |= block[w + 1u] << (32u - sh);
  }
  if (count < 4u) {
    v &= (1u << (8u * count)) - 1u;
  }
  return v;
}

// Writes `count` (1..4) bytes `value` at block byte `a` (inside word w = a / 4, owned by the calling lane): a
// whole word is stored, part of a word is or-ed into its zeroed bytes (the rest of the word belongs to a
// neighbouring sequence, written by the same lane). Other lanes read only bytes written before a barrier.
fn put_bytes(a: u32, count: u32, value: u32) {
  let w = a >> 2u;
  if (count == 4u) {
    block[w] = value;
  } else {
    block[w] |= value << ((a & 3u) * 8u);
  }
}

// The first word >= w0 that lane `lid` owns (words w with w mod WORKGROUP_SIZE == lid).
fn owned_word(w0: u32, lid: u32) -> u32 {
  return w0 + (lid + WORKGROUP_SIZE - w0 % WORKGROUP_SIZE) % WORKGROUP_SIZE;
}

// Literals: input bytes [src, src + count) to block bytes [op, op + count); one word per lane.
fn copy_literals(src: u32, op: u32, count: u32, lid: u32) {
  let end = op + count;
  for (var w = owned_word(op >> 2u, lid); w * 4u < end; w += WORKGROUP_SIZE) {
    let a = max(w * 4u, op);
    let n = min(w * 4u + 4u, end) - a;
    put_bytes(a, n, in_bytes(src + (a - op), n));
  }
}

// Match: block bytes [op, op + count) from `offset` back (period identity). When `from_literals`, every source
// byte is a literal of the same sequence (block bytes [lit_out, op), input bytes from lit_src): read the input.
fn copy_match(op: u32, offset: u32, count: u32, from_literals: bool, lit_src: u32, lit_out: u32, lid: u32) {
  let end = op + count;
  let base = op - offset;
  for (var w = owned_word(op >> 2u, lid); w * 4u < end; w += WORKGROUP_SIZE) {
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
