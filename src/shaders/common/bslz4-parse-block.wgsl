// The parse pass's walk of one LZ4 block into its sequence list, shared through an include line naming this
// file (scripts/wgsl-include.mjs) by bslz4-parse.wgsl (the parse pass) and bslz4-decode-list-ahead.wgsl (which
// parses the next batch in the decode's dispatch). The including file declares ELEM_SIZE, LIST_CAP,
// WINDOW_WORDS, the decode bindings (bslz4-bindings.wgsl), `seqs` read_write, and the byte readers
// (bslz4-bytes.wgsl). CPU twin and list format: src/kernels/bslz4-parse.ts.

// The slot words last read by this thread (its tokens are read byte by byte, mostly from the same words):
// WINDOW_WORDS words from word cached_w (none yet: 2^31, past any slot word).
var<private> cached_w: u32 = 0x80000000u;
var<private> cached_v: vec4<u32>;

fn rd(i: u32) -> u32 {
  let w = i >> 2u;
  if (w - cached_w >= WINDOW_WORDS) {
    cached_w = w & ~(WINDOW_WORDS - 1u);
    if (WINDOW_WORDS == 4u) {
      let last = arrayLength(&slot) - 1u;
      cached_v = vec4<u32>(slot[cached_w], slot[min(cached_w + 1u, last)], slot[min(cached_w + 2u, last)],
        slot[min(cached_w + 3u, last)]);
    } else {
      cached_v.x = slot[w];
    }
  }
  return (cached_v[w - cached_w] >> ((i & 3u) * 8u)) & 0xffu;
}

fn fail(k: u32, err: u32) -> vec2<u32> {
  return vec2<u32>(k, 1u + err);
}

// Block b of the frame whose chunk is `entry` (byte offset, size; inside slot bytes [0, slot_bytes)), its list
// from seqs[base]: (sequences written, verdict + 1 or 0).
fn parse_block(entry: vec2<u32>, slot_bytes: u32, b: u32, base: u32) -> vec2<u32> {
  let off = entry.x;
  let size = entry.y;
  if (off > slot_bytes || size > slot_bytes - off || size < HEADER_BYTES) {
    return vec2<u32>(0u);
  }
  if (slot_be32(off) != 0u || slot_be32(off + 4u) != params.expected_bytes) {
    return vec2<u32>(0u);
  }
  let block_bytes = slot_be32(off + 8u);
  if (block_bytes == 0u || block_bytes % (8u * ELEM_SIZE) != 0u || block_bytes > MAX_BLOCK_BYTES) {
    return vec2<u32>(0u);
  }
  let block_elems = block_bytes / ELEM_SIZE;
  let blocks = frame_blocks(block_elems);
  let full = blocks.x;
  let last = blocks.y;
  let count = blocks.z;
  if (b >= count) {
    return vec2<u32>(0u);
  }
  var pos = HEADER_BYTES;
  var start = 0u;
  var length = 0u;
  for (var s = 0u; s <= b; s++) {
    if (size - pos < 4u) {
      return vec2<u32>(0u);
    }
    length = slot_be32(off + pos);
    pos += 4u;
    if (length == 0u || length > size - pos) {
      return vec2<u32>(0u);
    }
    start = off + pos;
    pos += length;
  }
  let out_end = select(last, block_elems, b < full) * ELEM_SIZE;
  let end = start + length;
  var ip = start;
  var op = 0u;
  var k = 0u;
  loop {
    if (ip >= end) {
      return fail(k, ERR_LZ4_TRUNCATED);
    }
    let token = rd(ip);
    ip += 1u;
    var lit = token >> 4u;
    if (lit == 15u) {
      loop {
        if (ip >= end) {
          return fail(k, ERR_LZ4_TRUNCATED);
        }
        let byte = rd(ip);
        ip += 1u;
        lit += byte;
        if (lit > end - ip) {
          return fail(k, ERR_LZ4_TRUNCATED);
        }
        if (byte != 255u) {
          break;
        }
      }
    }
    if (lit > end - ip) {
      return fail(k, ERR_LZ4_TRUNCATED);
    }
    if (lit > out_end - op) {
      return fail(k, ERR_LZ4_OVERRUN);
    }
    let lit_start = ip - start;
    ip += lit;
    op += lit;
    if (ip == end) {
      if (k >= LIST_CAP || lit_start > 0xffffu) {
        return vec2<u32>(k, 0u);
      }
      seqs[base + k] = vec2<u32>(lit, lit_start << 16u);
      return vec2<u32>(k + 1u, 1u + select(ERR_LZ4_SHORT, 0u, op == out_end));
    }
    if (end - ip < 2u) {
      return fail(k, ERR_LZ4_TRUNCATED);
    }
    let offset = rd(ip) | (rd(ip + 1u) << 8u);
    ip += 2u;
    if (offset == 0u || offset > op) {
      return fail(k, ERR_LZ4_BAD_OFFSET);
    }
    var match_len = token & 15u;
    if (match_len == 15u) {
      loop {
        if (ip >= end) {
          return fail(k, ERR_LZ4_TRUNCATED);
        }
        let byte = rd(ip);
        ip += 1u;
        match_len += byte;
        if (match_len + 4u > out_end - op) {
          return fail(k, ERR_LZ4_OVERRUN);
        }
        if (byte != 255u) {
          break;
        }
      }
    }
    match_len += 4u;
    if (match_len > out_end - op) {
      return fail(k, ERR_LZ4_OVERRUN);
    }
    if (k >= LIST_CAP || lit_start > 0xffffu) {
      return vec2<u32>(k, 0u);
    }
    seqs[base + k] = vec2<u32>(lit | (match_len << 16u), offset | (lit_start << 16u));
    k += 1u;
    op += match_len;
  }
}
