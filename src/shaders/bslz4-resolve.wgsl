// Two-phase bitshuffle/LZ4 decode, phase 2: resolve + unshuffle + audit. Phase 1: src/shaders/bslz4-parse.wgsl
// (its header describes the sequence table and the verdicts). CPU twin: src/kernels/bslz4-resolve.ts.
// Pass: src/gpu/passes/bslz4-decode-2p.ts. Outputs exactly those of src/shaders/bslz4-decode.wgsl.
//
// One workgroup of WORKGROUP_SIZE lanes per frame (grid stride when fewer). A frame whose verdict is a fault
// is zero-filled and counted as failed. A decoded frame's blocks are taken one after another: the block's
// sequence table is copied to workgroup memory when it has at most CACHE_ENTRIES entries (else read from
// `seqs`), then every lane resolves whole output words of the bit-shuffled block independently: a byte run
// is located by binary search on the output starts; a literal run is read from the slot; a match run maps to
// the earlier positions out[o + j] = out[o - offset + (j mod offset)] (period identity) and is located again,
// until it reaches literals (a run is cut where its sources stop being contiguous). No lane waits for another:
// the words go to `block` in workgroup memory, a barrier, then the bit transpose, packed stores and the audit
// exactly as the production pass does them. Loops are bounded (each hop moves to a strictly earlier position).

override ELEM_SIZE: u32 = 2u;
override WORKGROUP_SIZE: u32 = 256u;
// Sequence table entries cached in workgroup memory per block.
override CACHE_ENTRIES: u32 = 512u;
// Word offsets in `audit` (src/kernels/bslz4-decode.ts AUDIT_LAYOUT).
override AUDIT_MAX: u32 = 0u;
override AUDIT_FAILED: u32 = 1u;
override AUDIT_ABOVE_255: u32 = 2u;
override AUDIT_HISTOGRAM: u32 = 4u;

struct Params {
  frame_start: u32,
  frame_end: u32,
  pixels: u32,
  expected_bytes: u32,
  words_per_frame: u32,
  slot_bytes: u32,
  first_frame: u32,
  frame_count: u32,
  per_dispatch: u32,
  max_groups: u32,
  chunks: u32,
  // Entry of `seqs` holding batch frame 0's verdict (after the sequence table; frame f at + f, in x).
  verdict_base: u32,
}

const HEADER_BYTES: u32 = 12u;
const BLOCK_WORDS: u32 = 2048u;
const BINS: u32 = 257u;

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> slot: array<u32>;
@group(0) @binding(2) var<storage, read> index: array<vec2<u32>>;
@group(0) @binding(3) var<storage, read> flags: array<u32>;
@group(0) @binding(4) var<storage, read_write> decoded: array<u32>;
@group(0) @binding(5) var<storage, read_write> errors: array<u32>;
@group(0) @binding(6) var<storage, read_write> totals: array<vec2<u32>>;
@group(0) @binding(7) var<storage, read_write> audit: array<atomic<u32>>;
@group(0) @binding(8) var<storage, read> seqs: array<vec2<u32>>;

var<workgroup> block: array<u32, BLOCK_WORDS>;
var<workgroup> cache: array<vec2<u32>, CACHE_ENTRIES>;
var<workgroup> frame_hist: array<atomic<u32>, BINS>;
var<workgroup> frame_max: atomic<u32>;
var<workgroup> frame_sum: array<atomic<u32>, 2>;

var<private> lane_zero: u32;
var<private> lane_over: u32;
var<private> lane_max: u32;
var<private> lane_sum: vec2<u32>;
// The current block's table: in `cache` or at seqs[table_base + i] (uniform across the workgroup).
var<private> cached: bool;
var<private> table_base: u32;

fn slot_byte(i: u32) -> u32 {
  return (slot[i >> 2u] >> ((i & 3u) * 8u)) & 0xffu;
}

fn slot_be32(i: u32) -> u32 {
  return (slot_byte(i) << 24u) | (slot_byte(i + 1u) << 16u) | (slot_byte(i + 2u) << 8u) | slot_byte(i + 3u);
}

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

fn entry(i: u32) -> vec2<u32> {
  if (cached) {
    return cache[i];
  }
  return seqs[table_base + i];
}

// The last sequence i in [lo, hi] whose output start is <= p (entry lo's start is <= p).
fn find(p: u32, lo0: u32, hi0: u32) -> u32 {
  var lo = lo0;
  var hi = hi0;
  if ((entry(hi).x & 0xffffu) <= p) {
    return hi;
  }
  hi -= 1u;
  while (lo < hi) {
    let mid = (lo + hi + 1u) >> 1u;
    if ((entry(mid).x & 0xffffu) <= p) {
      lo = mid;
    } else {
      hi = mid - 1u;
    }
  }
  return lo;
}

// Bytes [a, a + 4) of the block's decoded output (all inside it); `hint` <= the sequence holding byte a.
fn resolve_word(a: u32, start: u32, nseq: u32, out_end: u32, hint: ptr<function, u32>) -> u32 {
  var word = 0u;
  var done = 0u;
  for (var guard = 0u; guard < 4u && done < 4u; guard++) {
    var p = a + done;
    var k = 4u - done;
    var hi = nseq - 1u;
    var lo = *hint;
    var bytes = 0u;
    var first = true;
    for (var hop = 0u; hop <= out_end; hop++) {
      let i = find(p, lo, hi);
      if (first) {
        *hint = i;
        first = false;
      }
      let e = entry(i);
      let os = e.x & 0xffffu;
      let offset = e.x >> 16u;
      let lit_end = os + (e.y & 0xffffu);
      if (p < lit_end || offset == 0u) {
        k = min(k, lit_end - p);
        bytes = slot_bytes(start + (e.y >> 16u) + (p - os), k);
        break;
      }
      var me = out_end;
      if (i + 1u < nseq) {
        me = entry(i + 1u).x & 0xffffu;
      }
      let j = p - lit_end;
      var r = j;
      if (j >= offset) {
        r = j % offset;
      }
      k = min(k, min(offset - r, me - p));
      p = lit_end - offset + r;
      lo = 0u;
      hi = i;
    }
    word |= bytes << (8u * done);
    done += k;
  }
  return word;
}

fn block_byte(i: u32) -> u32 {
  return (block[i >> 2u] >> ((i & 3u) * 8u)) & 0xffu;
}

fn add64(a: vec2<u32>, b: u32) -> vec2<u32> {
  let lo = a.x + b;
  return vec2<u32>(lo, a.y + select(0u, 1u, lo < b));
}

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

// As in src/shaders/bslz4-decode.wgsl.
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

fn write_tail(src: u32, first: u32, out_base: u32) {
  let n = params.pixels;
  for (var e = first; e < n; e++) {
    var v = 0u;
    for (var j = 0u; j < ELEM_SIZE; j++) {
      v |= slot_byte(src + (e - first) * ELEM_SIZE + j) << (8u * j);
    }
    audit_value(e, v);
  }
  let byte0 = first * ELEM_SIZE;
  let bytes = (n - first) * ELEM_SIZE;
  for (var k = 0u; k < bytes; k += 4u) {
    decoded[out_base + (byte0 + k) / 4u] = slot_bytes(src + k, min(4u, bytes - k));
  }
}

// Decodes batch frame f (its verdict is 0: the structure and every block were checked by `parse`).
fn decode_frame(f: u32, lid: u32) {
  let entry0 = index[f];
  let off = entry0.x;
  let out_base = f * params.words_per_frame;
  let block_bytes = slot_be32(off + 8u);
  let n = params.pixels;
  let block_elems = block_bytes / ELEM_SIZE;
  let full = n / block_elems;
  let last = (n % block_elems) & ~7u;
  let count = full + select(0u, 1u, last > 0u);
  var pos = HEADER_BYTES;
  var first = 0u;
  for (var b = 0u; b < count; b++) {
    let length = slot_be32(off + pos);
    let start = off + pos + 4u;
    let elems = select(last, block_elems, b < full);
    let bytes = elems * ELEM_SIZE;
    let base = start >> 1u;
    let nseq = seqs[base].x;
    cached = nseq <= CACHE_ENTRIES;
    table_base = base + 1u;
    if (cached) {
      for (var i = lid; i < nseq; i += WORKGROUP_SIZE) {
        cache[i] = seqs[base + 1u + i];
      }
    }
    workgroupBarrier();
    var hint = 0u;
    for (var w = lid; w < bytes / 4u; w += WORKGROUP_SIZE) {
      block[w] = resolve_word(4u * w, start, nseq, bytes, &hint);
    }
    workgroupBarrier();
    unshuffle_block(elems, first, out_base, lid);
    workgroupBarrier();
    pos += 4u + length;
    first += elems;
  }
  if (lid == 0u && first < n) {
    write_tail(off + pos, first, out_base);
  }
}

var<workgroup> wg_verdict: u32;

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
    if (lid == 0u) {
      wg_verdict = seqs[params.verdict_base + f].x;
    }
    let err = workgroupUniformLoad(&wg_verdict);
    let out_base = f * params.words_per_frame;
    if (err == 0u) {
      decode_frame(f, lid);
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
      for (var w = lid; w < params.words_per_frame; w += WORKGROUP_SIZE) {
        decoded[out_base + w] = 0u;
      }
    }
    workgroupBarrier();
    for (var i = lid; i < BINS; i += WORKGROUP_SIZE) {
      let c = atomicExchange(&frame_hist[i], 0u);
      if (err == 0u && c != 0u) {
        audit_add64(AUDIT_HISTOGRAM + 2u * i, c);
        if (i == BINS - 1u) {
          audit_add64(AUDIT_ABOVE_255, c);
        }
      }
    }
    if (lid == 0u) {
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
