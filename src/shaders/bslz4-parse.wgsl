// Two-phase bitshuffle/LZ4 decode, phase 1: plan + parse. Phase 2: src/shaders/bslz4-resolve.wgsl.
// CPU twin: src/kernels/bslz4-parse.ts (same checks, same order, same sequence table, same verdicts).
// Pass: src/gpu/passes/bslz4-decode-2p.ts. Error codes: src/kernels/decode-errors.ts.
//
// `plan` (one workgroup of 256 lanes) checks that the chunks of the frames whose index entries lie inside the
// slot are disjoint and in slot order (each starts at or after the end of every earlier one). The sequence
// table is indexed by slot byte position (below), which is only collision-free for such chunks; otherwise the
// batch takes the fallback: the production pass (src/shaders/bslz4-decode.wgsl) decodes it. `plan` writes the
// indirect dispatch arguments of every chunk of frames: (fallback, parse, resolve) x (x, y, z).
//
// `main` (parse): FRAME_LANES lanes per frame (PARSE_WG / FRAME_LANES frames per workgroup, grid stride). Every lane
// walks the frame's index entry, 12-byte header and block length prefixes exactly like the twin of the
// production pass (src/kernels/bslz4-decode.ts); block b is parsed by lane b mod FRAME_LANES, which walks its
// raw LZ4 token stream once with the twin's checks in the twin's order and writes one table entry per
// sequence. Each fault is keyed by its place in the walk (2b for a block prefix fault, 2b + 1 for an LZ4 fault
// inside block b, 2 * blocks for the tail checks), so the frame's verdict (workgroup atomicMin over the keys)
// is the first fault of the walk: the code the twin returns.
//
// Sequence table (`seqs`, vec2<u32> entries): the block whose compressed bytes start at slot byte s owns
// entries [s / 2, s / 2 + 1 + n): entry s / 2 holds n (the block's sequence count), then one entry per
// sequence: x = output start | match offset << 16 (offset 0 = no match: the block's last sequence), y =
// literal length | (literal source - s) << 16. Every sequence but the last consumes >= 3 input bytes, the
// last >= 1, so n <= (L + 2) / 3 for a block of L bytes; the next block (or chunk) starts at >= s + L + 4,
// so the regions of disjoint chunks never overlap and the table needs floor(slot_bytes / 2) + 3 entries.
// The frames' verdicts follow the table in the same buffer (entry verdict_base + f, in x).
// Output starts and literal lengths are <= 8192 and literal sources (relative) are < 65536 for any prefix
// that passed the checks (<= 2049 sequences of <= 8192 output bytes in all), so 16 bits each suffice.
// Every loop is bounded by byte counts; every read of the slot stays inside its frame's chunk.

override ELEM_SIZE: u32 = 2u;
// Lanes per frame in `parse` and lanes per workgroup (a multiple of FRAME_LANES).
override FRAME_LANES: u32 = 16u;
override PARSE_WG: u32 = 64u;

struct Params {
  // The first seven fields are the production pass's Params (its fallback dispatch binds the same slot).
  frame_start: u32,
  frame_end: u32,
  pixels: u32,
  expected_bytes: u32,
  words_per_frame: u32,
  slot_bytes: u32,
  first_frame: u32,
  // Whole batch (for `plan`): frames, frames per dispatch chunk, workgroups per chunk at most, chunks.
  frame_count: u32,
  per_dispatch: u32,
  max_groups: u32,
  chunks: u32,
  // Entry of `seqs` holding batch frame 0's verdict (after the sequence table; frame f at + f, in x).
  verdict_base: u32,
}

const HEADER_BYTES: u32 = 12u;
const MAX_BLOCK_BYTES: u32 = 8192u;
const NO_FAULT: u32 = 0xffffffffu;

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
@group(0) @binding(8) var<storage, read_write> seqs: array<vec2<u32>>;
@group(0) @binding(10) var<storage, read_write> args: array<u32>;

fn slot_byte(i: u32) -> u32 {
  return (slot[i >> 2u] >> ((i & 3u) * 8u)) & 0xffu;
}

fn slot_be32(i: u32) -> u32 {
  return (slot_byte(i) << 24u) | (slot_byte(i + 1u) << 16u) | (slot_byte(i + 2u) << 8u) | slot_byte(i + 3u);
}

// ---------------------------------------------------------------------------------------------------- plan

const PLAN_WG: u32 = 256u;
var<workgroup> scan: array<u32, PLAN_WG>;
var<workgroup> plan_bad: atomic<u32>;
var<workgroup> plan_carry: u32;

@compute @workgroup_size(PLAN_WG)
fn plan(@builtin(local_invocation_index) lid: u32) {
  if (lid == 0u) {
    atomicStore(&plan_bad, 0u);
    plan_carry = 0u;
  }
  workgroupBarrier();
  let n = params.frame_count;
  for (var base = 0u; base < n; base += PLAN_WG) {
    let f = base + lid;
    var valid = false;
    var off = 0u;
    var end = 0u;
    if (f < n) {
      let e = index[f];
      off = e.x;
      valid = e.x <= params.slot_bytes && e.y <= params.slot_bytes - e.x;
      end = select(0u, e.x + e.y, valid);
    }
    let carry = plan_carry;
    scan[lid] = end;
    workgroupBarrier();
    // Inclusive max scan (Hillis-Steele).
    for (var d = 1u; d < PLAN_WG; d <<= 1u) {
      var v = scan[lid];
      if (lid >= d) {
        v = max(v, scan[lid - d]);
      }
      workgroupBarrier();
      scan[lid] = v;
      workgroupBarrier();
    }
    var before = carry;
    if (lid > 0u) {
      before = max(before, scan[lid - 1u]);
    }
    if (valid && off < before) {
      atomicStore(&plan_bad, 1u);
    }
    workgroupBarrier();
    if (lid == 0u) {
      plan_carry = max(carry, scan[PLAN_WG - 1u]);
    }
    workgroupBarrier();
  }
  let bad = atomicLoad(&plan_bad);
  for (var c = lid; c < params.chunks; c += PLAN_WG) {
    let frames = min(params.per_dispatch, n - c * params.per_dispatch);
    let groups = min(frames, params.max_groups);
    let parse_groups = min((frames + PARSE_WG / FRAME_LANES - 1u) / (PARSE_WG / FRAME_LANES), params.max_groups);
    let a = 9u * c;
    args[a] = select(0u, groups, bad != 0u);
    args[a + 1u] = 1u;
    args[a + 2u] = 1u;
    args[a + 3u] = select(parse_groups, 0u, bad != 0u);
    args[a + 4u] = 1u;
    args[a + 5u] = 1u;
    args[a + 6u] = select(groups, 0u, bad != 0u);
    args[a + 7u] = 1u;
    args[a + 8u] = 1u;
  }
}

// --------------------------------------------------------------------------------------------------- parse

// Parses the raw LZ4 block slot[start, end) that decodes to `out_end` bytes and writes its sequence table at
// entry start / 2. Returns 0 or an LZ4 error code (the twin's checks in the twin's order).
fn parse_block(start: u32, end: u32, out_end: u32) -> u32 {
  let base = start >> 1u;
  var ip = start;
  var op = 0u;
  var n = 0u;
  var err = 0u;
  loop {
    if (ip >= end) {
      err = ERR_LZ4_TRUNCATED;
      break;
    }
    let token = slot_byte(ip);
    ip += 1u;
    var lit = token >> 4u;
    if (lit == 15u) {
      loop {
        if (ip >= end) {
          err = ERR_LZ4_TRUNCATED;
          break;
        }
        let b = slot_byte(ip);
        ip += 1u;
        lit += b;
        if (lit > end - ip) {
          err = ERR_LZ4_TRUNCATED;
          break;
        }
        if (b != 255u) {
          break;
        }
      }
      if (err != 0u) {
        break;
      }
    }
    if (lit > end - ip) {
      err = ERR_LZ4_TRUNCATED;
      break;
    }
    if (lit > out_end - op) {
      err = ERR_LZ4_OVERRUN;
      break;
    }
    let lit_src = ip - start;
    let lit_out = op;
    ip += lit;
    op += lit;
    if (ip == end) {
      seqs[base + 1u + n] = vec2<u32>(lit_out, lit | (lit_src << 16u));
      n += 1u;
      err = select(ERR_LZ4_SHORT, 0u, op == out_end);
      break;
    }
    if (end - ip < 2u) {
      err = ERR_LZ4_TRUNCATED;
      break;
    }
    let offset = slot_byte(ip) | (slot_byte(ip + 1u) << 8u);
    ip += 2u;
    if (offset == 0u || offset > op) {
      err = ERR_LZ4_BAD_OFFSET;
      break;
    }
    var count = token & 15u;
    if (count == 15u) {
      loop {
        if (ip >= end) {
          err = ERR_LZ4_TRUNCATED;
          break;
        }
        let b = slot_byte(ip);
        ip += 1u;
        count += b;
        if (count + 4u > out_end - op) {
          err = ERR_LZ4_OVERRUN;
          break;
        }
        if (b != 255u) {
          break;
        }
      }
      if (err != 0u) {
        break;
      }
    }
    count += 4u;
    if (count > out_end - op) {
      err = ERR_LZ4_OVERRUN;
      break;
    }
    seqs[base + 1u + n] = vec2<u32>(lit_out | (offset << 16u), lit | (lit_src << 16u));
    n += 1u;
    op += count;
  }
  seqs[base] = vec2<u32>(n, 0u);
  return err;
}

fn key(position: u32, code: u32) -> u32 {
  return (position << 4u) | code;
}

// The first fault of frame f this lane sees (its own blocks' LZ4 faults and every structural fault), as a key.
fn frame_key(f: u32, lane: u32) -> u32 {
  let entry = index[f];
  let off = entry.x;
  let size = entry.y;
  if (off > params.slot_bytes || size > params.slot_bytes - off) {
    return key(0u, ERR_INDEX_OUT_OF_SLOT);
  }
  if (size < HEADER_BYTES) {
    return key(0u, ERR_HEADER_TRUNCATED);
  }
  if (slot_be32(off) != 0u || slot_be32(off + 4u) != params.expected_bytes) {
    return key(0u, ERR_SIZE_MISMATCH);
  }
  let block_bytes = slot_be32(off + 8u);
  if (block_bytes == 0u || block_bytes % (8u * ELEM_SIZE) != 0u) {
    return key(0u, ERR_BAD_BLOCK_SIZE);
  }
  if (block_bytes > MAX_BLOCK_BYTES) {
    return key(0u, ERR_UNSUPPORTED_BLOCK_SIZE);
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
      return key(2u * b, ERR_BLOCK_TRUNCATED);
    }
    let length = slot_be32(off + pos);
    pos += 4u;
    if (length == 0u) {
      return key(2u * b, ERR_BLOCK_EMPTY);
    }
    if (length > size - pos) {
      return key(2u * b, ERR_BLOCK_TRUNCATED);
    }
    let elems = select(last, block_elems, b < full);
    if (b % FRAME_LANES == lane) {
      let start = off + pos;
      let err = parse_block(start, start + length, elems * ELEM_SIZE);
      if (err != 0u) {
        // Every later fault has a larger key.
        return key(2u * b + 1u, err);
      }
    }
    pos += length;
    first += elems;
  }
  let tail_bytes = (n - first) * ELEM_SIZE;
  if (size - pos < tail_bytes) {
    return key(2u * count, ERR_TAIL_TRUNCATED);
  }
  if (size - pos > tail_bytes) {
    return key(2u * count, ERR_TRAILING_BYTES);
  }
  return NO_FAULT;
}

var<workgroup> frame_keys: array<atomic<u32>, PARSE_WG>;

@compute @workgroup_size(PARSE_WG)
fn main(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) groups: vec3<u32>,
  @builtin(local_invocation_index) lid: u32,
) {
  let per_group = PARSE_WG / FRAME_LANES;
  let sub = lid / FRAME_LANES;
  let lane = lid % FRAME_LANES;
  atomicStore(&frame_keys[lid], NO_FAULT);
  workgroupBarrier();
  for (var f0 = params.frame_start + wid.x * per_group; f0 < params.frame_end; f0 += groups.x * per_group) {
    let f = f0 + sub;
    if (f < params.frame_end) {
      atomicMin(&frame_keys[sub], frame_key(f, lane));
    }
    workgroupBarrier();
    if (lane == 0u && f < params.frame_end) {
      let k = atomicExchange(&frame_keys[sub], NO_FAULT);
      seqs[params.verdict_base + f] = vec2<u32>(select(k & 15u, 0u, k == NO_FAULT), 0u);
    }
    workgroupBarrier();
  }
}
