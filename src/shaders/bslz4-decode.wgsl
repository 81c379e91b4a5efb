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
// Persistent workgroups: workgroup w takes frames frame_start + w, + num_workgroups, ... and decodes each one
// cooperatively. Per block (<= 8 KiB decoded): zero `block`, walk the LZ4 token stream with every lane reading the
// same bytes (all loop values are uniform, so barriers stay in uniform control flow), lanes copy literal and match
// bytes into `block` in parallel (each output byte is written once: atomicOr of the byte into its word); a match
// reads the bytes `offset` back with the period identity out[o + j] = out[o - offset + (j mod offset)]; a barrier
// is taken only when a match reads bytes written since the last barrier that are not its own sequence's
// literals (those it reads from the input). Then each lane undoes the bit transpose for groups of 8 elements
// (they share one byte of each of the 8 * ELEM_SIZE planes), writes packed words and counts the audit in
// registers and workgroup atomics. Frame counts go to the dispatch's workgroup histogram only when the frame
// decoded, and each workgroup adds its histogram to `audit` once per dispatch.
// Every loop is bounded by byte counts; every read of the slot stays inside its frame's chunk; writes stay
// inside the frame's words and the 8 KiB block.

override ELEM_SIZE: u32 = 2u;
override WORKGROUP_SIZE: u32 = 64u;
// Word offsets in `audit` (src/kernels/bslz4-decode.ts AUDIT_LAYOUT).
override AUDIT_MAX: u32 = 0u;
override AUDIT_FAILED: u32 = 1u;
override AUDIT_ABOVE_255: u32 = 2u;
override AUDIT_HISTOGRAM: u32 = 4u;

struct Params {
  // Batch frames [frame_start, frame_end) are decoded by this dispatch.
  frame_start: u32,
  frame_end: u32,
  pixels: u32,
  // pixels * ELEM_SIZE: the uncompressed size the header must declare.
  expected_bytes: u32,
  words_per_frame: u32,
  // Bytes of the slot that hold data (index entries must stay inside).
  slot_bytes: u32,
  // Index in `errors` and `totals` of batch frame 0 (the batch's first global frame, or 0 for per-batch arrays).
  first_frame: u32,
}

const HEADER_BYTES: u32 = 12u;
const MAX_BLOCK_BYTES: u32 = 8192u;
const BLOCK_WORDS: u32 = 2048u;
const BINS: u32 = 257u;

// src/kernels/decode-errors.ts
const ERR_INDEX_OUT_OF_SLOT: u32 = 1u;
const ERR_HEADER_TRUNCATED: u32 = 2u;
const ERR_SIZE_MISMATCH: u32 = 3u;
const ERR_BAD_BLOCK_SIZE: u32 = 4u;
const ERR_UNSUPPORTED_BLOCK_SIZE: u32 = 5u;
const ERR_BLOCK_TRUNCATED: u32 = 6u;
const ERR_BLOCK_EMPTY: u32 = 7u;
const ERR_LZ4_TRUNCATED: u32 = 8u;
const ERR_LZ4_OVERRUN: u32 = 9u;
const ERR_LZ4_BAD_OFFSET: u32 = 10u;
const ERR_LZ4_SHORT: u32 = 11u;
const ERR_TAIL_TRUNCATED: u32 = 12u;
const ERR_TRAILING_BYTES: u32 = 13u;

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> slot: array<u32>;
@group(0) @binding(2) var<storage, read> index: array<vec2<u32>>;
@group(0) @binding(3) var<storage, read> flags: array<u32>;
@group(0) @binding(4) var<storage, read_write> decoded: array<u32>;
@group(0) @binding(5) var<storage, read_write> errors: array<u32>;
@group(0) @binding(6) var<storage, read_write> totals: array<vec2<u32>>;
@group(0) @binding(7) var<storage, read_write> audit: array<atomic<u32>>;

// The decoded (still bit-shuffled) bytes of the current block.
var<workgroup> block: array<atomic<u32>, BLOCK_WORDS>;
// Histogram, maximum and (lo, hi) sum of the current frame; histogram, maximum and failures of the dispatch.
var<workgroup> frame_hist: array<atomic<u32>, BINS>;
var<workgroup> frame_max: atomic<u32>;
var<workgroup> frame_sum: array<atomic<u32>, 2>;
var<workgroup> disp_hist: array<atomic<u32>, BINS>;
var<workgroup> disp_max: atomic<u32>;
var<workgroup> disp_failed: atomic<u32>;

// Per-lane audit of the current frame: zeros and values above 255 counted in registers.
var<private> lane_zero: u32;
var<private> lane_over: u32;
var<private> lane_max: u32;
var<private> lane_sum: vec2<u32>;

fn slot_byte(i: u32) -> u32 {
  return (slot[i >> 2u] >> ((i & 3u) * 8u)) & 0xffu;
}

fn slot_be32(i: u32) -> u32 {
  return (slot_byte(i) << 24u) | (slot_byte(i + 1u) << 16u) | (slot_byte(i + 2u) << 8u) | slot_byte(i + 3u);
}

// `count` (1..4) bytes of the slot from byte `a`, little-endian in the low bytes; reads only their words.
fn slot_bytes(a: u32, count: u32) -> u32 {
  let w = a >> 2u;
  let sh = (a & 3u) * 8u;
  var v = slot[w] >> sh;
  if ((a & 3u) + count > 4u) {
    v |= slot[w + 1u] << (32u - sh);
  }
  if (count < 4u) {
    v &= (1u << (8u * count)) - 1u;
  }
  return v;
}

fn block_byte(i: u32) -> u32 {
  return (atomicLoad(&block[i >> 2u]) >> ((i & 3u) * 8u)) & 0xffu;
}

fn add64(a: vec2<u32>, b: u32) -> vec2<u32> {
  let lo = a.x + b;
  return vec2<u32>(lo, a.y + select(0u, 1u, lo < b));
}

// Adds `value` to the u64 counter at audit[i], audit[i + 1].
fn audit_add64(i: u32, value: u32) {
  let old = atomicAdd(&audit[i], value);
  if (old + value < old) {
    atomicAdd(&audit[i + 1u], 1u);
  }
}

fn audit_value(pixel: u32, v: u32) {
  if (flags[pixel] != 0u) {
    return;
  }
  lane_sum = add64(lane_sum, v);
  lane_max = max(lane_max, v);
  if (v == 0u) {
    lane_zero += 1u;
  } else if (v > 255u) {
    lane_over += 1u;
  } else {
    atomicAdd(&frame_hist[v], 1u);
  }
}

// Literals: input bytes [src, src + count) to block bytes [op, op + count); one word per lane.
fn copy_literals(src: u32, op: u32, count: u32, lid: u32) {
  let end = op + count;
  for (var w = (op >> 2u) + lid; w * 4u < end; w += WORKGROUP_SIZE) {
    let a = max(w * 4u, op);
    let b = min(w * 4u + 4u, end);
    let bytes = slot_bytes(src + (a - op), b - a);
    atomicOr(&block[w], bytes << ((a - w * 4u) * 8u));
  }
}

// Match: block bytes [op, op + count) from `offset` back (period identity). When `from_literals`, every source
// byte is a literal of the same sequence (block bytes [lit_out, op), input bytes from lit_src): read the input.
fn copy_match(op: u32, offset: u32, count: u32, from_literals: bool, lit_src: u32, lit_out: u32, lid: u32) {
  let end = op + count;
  let base = op - offset;
  for (var w = (op >> 2u) + lid; w * 4u < end; w += WORKGROUP_SIZE) {
    let a = max(w * 4u, op);
    let b = min(w * 4u + 4u, end);
    var word = 0u;
    for (var o = a; o < b; o++) {
      let j = o - op;
      let s = base + select(j % offset, j, j < offset);
      var byte: u32;
      if (from_literals) {
        byte = slot_byte(lit_src + (s - lit_out));
      } else {
        byte = block_byte(s);
      }
      word |= byte << ((o & 3u) * 8u);
    }
    atomicOr(&block[w], word);
  }
}

// Decodes the raw LZ4 block slot[start, end) into `block` bytes [0, out_end). Returns 0 or an error code.
fn lz4_block(start: u32, end: u32, out_end: u32, lid: u32) -> u32 {
  var ip = start;
  var op = 0u;
  // Block bytes [0, visible) were written before the last barrier.
  var visible = 0u;
  loop {
    if (ip >= end) {
      return ERR_LZ4_TRUNCATED;
    }
    let token = slot_byte(ip);
    ip += 1u;
    var lit = token >> 4u;
    if (lit == 15u) {
      loop {
        if (ip >= end) {
          return ERR_LZ4_TRUNCATED;
        }
        let b = slot_byte(ip);
        ip += 1u;
        lit += b;
        if (lit > end - ip) {
          return ERR_LZ4_TRUNCATED;
        }
        if (b != 255u) {
          break;
        }
      }
    }
    if (lit > end - ip) {
      return ERR_LZ4_TRUNCATED;
    }
    if (lit > out_end - op) {
      return ERR_LZ4_OVERRUN;
    }
    let lit_src = ip;
    let lit_out = op;
    if (lit > 0u) {
      copy_literals(ip, op, lit, lid);
    }
    ip += lit;
    op += lit;
    if (ip == end) {
      break;
    }
    if (end - ip < 2u) {
      return ERR_LZ4_TRUNCATED;
    }
    let offset = slot_byte(ip) | (slot_byte(ip + 1u) << 8u);
    ip += 2u;
    if (offset == 0u || offset > op) {
      return ERR_LZ4_BAD_OFFSET;
    }
    var count = token & 15u;
    if (count == 15u) {
      loop {
        if (ip >= end) {
          return ERR_LZ4_TRUNCATED;
        }
        let b = slot_byte(ip);
        ip += 1u;
        count += b;
        if (count + 4u > out_end - op) {
          return ERR_LZ4_OVERRUN;
        }
        if (b != 255u) {
          break;
        }
      }
    }
    count += 4u;
    if (count > out_end - op) {
      return ERR_LZ4_OVERRUN;
    }
    let src_lo = op - offset;
    let from_literals = src_lo >= lit_out;
    if (!from_literals && src_lo + min(offset, count) > visible) {
      workgroupBarrier();
      visible = op;
    }
    copy_match(op, offset, count, from_literals, lit_src, lit_out, lid);
    op += count;
  }
  if (op != out_end) {
    return ERR_LZ4_SHORT;
  }
  return 0u;
}

// Undoes the bit transpose of a decoded block of `elems` elements (a multiple of 8) whose first element is
// element `first` of the frame; writes packed words and audits the values.
fn unshuffle_block(elems: u32, first: u32, out_base: u32, lid: u32) {
  let pb = elems / 8u;
  for (var g = lid; g < pb; g += WORKGROUP_SIZE) {
    var lo = vec4<u32>(0u);
    var hi = vec4<u32>(0u);
    for (var j = 0u; j < ELEM_SIZE; j++) {
      let b = 8u * j * pb + g;
      var x = (block_byte(b + 7u * pb) << 24u) | (block_byte(b + 6u * pb) << 16u) |
        (block_byte(b + 5u * pb) << 8u) | block_byte(b + 4u * pb);
      var y = (block_byte(b + 3u * pb) << 24u) | (block_byte(b + 2u * pb) << 16u) |
        (block_byte(b + pb) << 8u) | block_byte(b);
      // Transpose the 8x8 bit matrix (Hacker's Delight 7-3), as src/codec/bitshuffle.ts does.
      var t = (x ^ (x >> 7u)) & 0x00aa00aau;
      x = x ^ t ^ (t << 7u);
      t = (y ^ (y >> 7u)) & 0x00aa00aau;
      y = y ^ t ^ (t << 7u);
      t = (x ^ (x >> 14u)) & 0x0000ccccu;
      x = x ^ t ^ (t << 14u);
      t = (y ^ (y >> 14u)) & 0x0000ccccu;
      y = y ^ t ^ (t << 14u);
      t = (x & 0xf0f0f0f0u) | ((y >> 4u) & 0x0f0f0f0fu);
      y = ((x << 4u) & 0xf0f0f0f0u) | (y & 0x0f0f0f0fu);
      // Byte k of y is byte j of element k (k < 4); byte k of t is byte j of element 4 + k.
      let shift = vec4<u32>(8u * j);
      lo |= ((vec4<u32>(y) >> vec4<u32>(0u, 8u, 16u, 24u)) & vec4<u32>(0xffu)) << shift;
      hi |= ((vec4<u32>(t) >> vec4<u32>(0u, 8u, 16u, 24u)) & vec4<u32>(0xffu)) << shift;
    }
    let e = first + 8u * g;
    if (ELEM_SIZE == 1u) {
      let w = out_base + e / 4u;
      decoded[w] = lo.x | (lo.y << 8u) | (lo.z << 16u) | (lo.w << 24u);
      decoded[w + 1u] = hi.x | (hi.y << 8u) | (hi.z << 16u) | (hi.w << 24u);
    } else if (ELEM_SIZE == 2u) {
      let w = out_base + e / 2u;
      decoded[w] = lo.x | (lo.y << 16u);
      decoded[w + 1u] = lo.z | (lo.w << 16u);
      decoded[w + 2u] = hi.x | (hi.y << 16u);
      decoded[w + 3u] = hi.z | (hi.w << 16u);
    } else {
      let w = out_base + e;
      decoded[w] = lo.x;
      decoded[w + 1u] = lo.y;
      decoded[w + 2u] = lo.z;
      decoded[w + 3u] = lo.w;
      decoded[w + 4u] = hi.x;
      decoded[w + 5u] = hi.y;
      decoded[w + 6u] = hi.z;
      decoded[w + 7u] = hi.w;
    }
    audit_value(e, lo.x);
    audit_value(e + 1u, lo.y);
    audit_value(e + 2u, lo.z);
    audit_value(e + 3u, lo.w);
    audit_value(e + 4u, hi.x);
    audit_value(e + 5u, hi.y);
    audit_value(e + 6u, hi.z);
    audit_value(e + 7u, hi.w);
  }
}

// The raw tail: elements [first, pixels) from slot bytes at `src` (one lane).
fn write_tail(src: u32, first: u32, out_base: u32) {
  let n = params.pixels;
  for (var e = first; e < n; e++) {
    var v = 0u;
    for (var j = 0u; j < ELEM_SIZE; j++) {
      v |= slot_byte(src + (e - first) * ELEM_SIZE + j) << (8u * j);
    }
    audit_value(e, v);
  }
  // Output words from byte first * ELEM_SIZE (a multiple of 8) to the end of the values, the last one padded.
  let byte0 = first * ELEM_SIZE;
  let bytes = (n - first) * ELEM_SIZE;
  for (var k = 0u; k < bytes; k += 4u) {
    decoded[out_base + (byte0 + k) / 4u] = slot_bytes(src + k, min(4u, bytes - k));
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
    let bytes = elems * ELEM_SIZE;
    for (var w = lid; w < bytes / 4u; w += WORKGROUP_SIZE) {
      atomicStore(&block[w], 0u);
    }
    workgroupBarrier();
    let err = lz4_block(off + pos, off + pos + length, bytes, lid);
    workgroupBarrier();
    if (err != 0u) {
      return err;
    }
    unshuffle_block(elems, first, out_base, lid);
    workgroupBarrier();
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
  let value_words = (params.pixels * ELEM_SIZE + 3u) / 4u;
  for (var f = params.frame_start + wid.x; f < params.frame_end; f += groups.x) {
    lane_zero = 0u;
    lane_over = 0u;
    lane_max = 0u;
    lane_sum = vec2<u32>(0u);
    let err = decode_frame(f, lid);
    let out_base = f * params.words_per_frame;
    if (err == 0u) {
      for (var w = value_words + lid; w < params.words_per_frame; w += WORKGROUP_SIZE) {
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
      for (var w = lid; w < params.words_per_frame; w += WORKGROUP_SIZE) {
        decoded[out_base + w] = 0u;
      }
    }
    workgroupBarrier();
    for (var i = lid; i < BINS; i += WORKGROUP_SIZE) {
      let c = atomicExchange(&frame_hist[i], 0u);
      if (err == 0u && c != 0u) {
        atomicAdd(&disp_hist[i], c);
      }
    }
    if (lid == 0u) {
      let sum = vec2<u32>(atomicExchange(&frame_sum[0], 0u), atomicExchange(&frame_sum[1], 0u));
      let fmax = atomicExchange(&frame_max, 0u);
      let g = params.first_frame + f;
      errors[g] = err;
      if (err == 0u) {
        totals[g] = sum;
        atomicMax(&disp_max, fmax);
      } else {
        totals[g] = vec2<u32>(0u);
        atomicAdd(&disp_failed, 1u);
      }
    }
    workgroupBarrier();
  }
  // Once per workgroup and dispatch: the workgroup's counts into the global audit.
  for (var i = lid; i < BINS; i += WORKGROUP_SIZE) {
    let c = atomicLoad(&disp_hist[i]);
    if (c != 0u) {
      audit_add64(AUDIT_HISTOGRAM + 2u * i, c);
      if (i == BINS - 1u) {
        audit_add64(AUDIT_ABOVE_255, c);
      }
    }
  }
  if (lid == 0u) {
    atomicMax(&audit[AUDIT_MAX], atomicLoad(&disp_max));
    let failed = atomicLoad(&disp_failed);
    if (failed != 0u) {
      atomicAdd(&audit[AUDIT_FAILED], failed);
    }
  }
}
