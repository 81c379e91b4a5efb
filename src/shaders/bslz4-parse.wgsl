// Bitshuffle/LZ4 parse: the first pass of the decode variants named `list` (src/gpu/passes/bslz4-decode.ts).
// One thread per LZ4 block of the dispatch's frames walks the block's tokens with the decode walk's checks, in
// its order, and writes the block's sequences to a list; the decode pass (bslz4-decode-multi.wgsl with LIST)
// then copies from the list, so its lanes no longer parse every token together. CPU twin, list format and the
// cases without a list: src/kernels/bslz4-parse.ts.

override ELEM_SIZE: u32 = 2u;
override LIST_CAP: u32 = 256u;
override WORKGROUP_SIZE: u32 = 64u;
// Slot words a thread loads at once into its window (1 or 4, aligned).
override WINDOW_WORDS: u32 = 1u;

// #include "common/bslz4-bindings.wgsl"

// Per block entry: LIST_CAP (literals | match << 16, offset | literal start << 16).
@group(0) @binding(9) var<storage, read_write> seqs: array<vec2<u32>>;
// Per block entry: (sequences written, verdict + 1, or 0: no list).
@group(0) @binding(10) var<storage, read_write> seq_info: array<vec2<u32>>;

// #include "common/bslz4-bytes.wgsl"

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

// Blocks of a frame at the 8 KiB block size (src/kernels/bslz4-parse.ts listBlocks).
fn list_blocks() -> u32 {
  let block_elems = MAX_BLOCK_BYTES / ELEM_SIZE;
  return params.pixels / block_elems + select(0u, 1u, ((params.pixels % block_elems) & ~7u) > 0u);
}

fn fail(k: u32, err: u32) -> vec2<u32> {
  return vec2<u32>(k, 1u + err);
}

// Block b of batch frame f, its list from seqs[base]: (sequences written, verdict + 1 or 0).
fn parse_block(f: u32, b: u32, base: u32) -> vec2<u32> {
  let entry = index[f];
  let off = entry.x;
  let size = entry.y;
  if (off > params.slot_bytes || size > params.slot_bytes - off || size < HEADER_BYTES) {
    return vec2<u32>(0u);
  }
  if (slot_be32(off) != 0u || slot_be32(off + 4u) != params.expected_bytes) {
    return vec2<u32>(0u);
  }
  let block_bytes = slot_be32(off + 8u);
  if (block_bytes == 0u || block_bytes % (8u * ELEM_SIZE) != 0u || block_bytes > MAX_BLOCK_BYTES) {
    return vec2<u32>(0u);
  }
  let n = params.pixels;
  let block_elems = block_bytes / ELEM_SIZE;
  let full = n / block_elems;
  let last = (n % block_elems) & ~7u;
  let count = full + select(0u, 1u, last > 0u);
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

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let per_frame = list_blocks();
  let t = gid.x;
  if (t >= (params.frame_end - params.frame_start) * per_frame) {
    return;
  }
  seq_info[t] = parse_block(params.frame_start + t / per_frame, t % per_frame, t * LIST_CAP);
}
