// The LZ4 walk of bslz4-decode-multi.wgsl (included there by a line naming this file, scripts/wgsl-include.mjs):
// the walk's state, the WINDOW helpers (the last 8 output bytes in registers) and one epoch of the walk. It uses
// what bslz4-decode-multi.wgsl declares and common/bslz4-multi-copy.wgsl defines before the include line.

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
  // WINDOW: the last `known` (<= 8) output bytes, the latest in the high byte of hist.y (byte i of the
  // little-endian 8 bytes = output byte op - 8 + i).
  hist: vec2<u32>,
  known: u32,
}

fn shr64(h: vec2<u32>, bits: u32) -> vec2<u32> {
  if (bits == 0u) {
    return h;
  }
  if (bits >= 64u) {
    return vec2<u32>(0u);
  }
  if (bits >= 32u) {
    return vec2<u32>(h.y >> (bits - 32u), 0u);
  }
  return vec2<u32>((h.x >> bits) | (h.y << (32u - bits)), h.y >> bits);
}

fn shl64(h: vec2<u32>, bits: u32) -> vec2<u32> {
  if (bits == 0u) {
    return h;
  }
  if (bits >= 64u) {
    return vec2<u32>(0u);
  }
  if (bits >= 32u) {
    return vec2<u32>(0u, h.x << (bits - 32u));
  }
  return vec2<u32>(h.x << bits, (h.y << bits) | (h.x >> (32u - bits)));
}

fn byte64(h: vec2<u32>, i: u32) -> u32 {
  return (select(h.y, h.x, i < 4u) >> ((i & 3u) * 8u)) & 0xffu;
}

// The history after `n` (1..8) more output bytes `v` (little-endian, the latest highest).
fn push64(h: vec2<u32>, v: vec2<u32>, n: u32) -> vec2<u32> {
  return shr64(h, 8u * n) | shl64(v, 64u - 8u * n);
}

// Match from the window: block bytes [op, op + count) repeat the last `offset` (<= 8, all in `hist`) bytes
// with period `offset`: out[op + k] = hist byte 8 - offset + (k mod offset). No memory is read.
fn copy_match_window(op: u32, offset: u32, count: u32, hist: vec2<u32>, lane: u32) {
  let end = op + count;
  let base = 8u - offset;
  for (var w = owned_word(op >> 2u, lane); w * 4u < end; w += LANES) {
    let a = max(w * 4u, op);
    let n = min(w * 4u + 4u, end) - a;
    var r = (a - op) % offset;
    var word = 0u;
    for (var k = 0u; k < n; k++) {
      word |= byte64(hist, base + r) << (8u * k);
      r += 1u;
      if (r == offset) {
        r = 0u;
      }
    }
    put_bytes(a, n, word);
  }
}

// The history after a window match of `count` (>= 4) bytes with period `offset` (<= 8).
fn window_after_match(hist: vec2<u32>, offset: u32, count: u32) -> vec2<u32> {
  let n = min(count, 8u);
  // Output bytes k = count - n .. count - 1 of the match.
  var r = (count - n) % offset;
  var v = vec2<u32>(0u);
  for (var i = 0u; i < n; i++) {
    let b = byte64(hist, 8u - offset + r);
    if (i < 4u) {
      v.x |= b << (8u * i);
    } else {
      v.y |= b << (8u * (i - 4u));
    }
    r += 1u;
    if (r == offset) {
      r = 0u;
    }
  }
  return push64(hist, v, n);
}

// One epoch of the walk: the pending match, then sequences until a match needs a barrier, the block ends or
// a fault is found. Returns the updated walk; copies stay within [0, end of the block's output).
fn lz4_epoch(w0: Walk, end: u32, out_end: u32, lane: u32) -> Walk {
  var w = w0;
  if (w.pending_count != 0u) {
    copy_match(w.op, w.pending_offset, w.pending_count, false, 0u, 0u, lane);
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
      copy_literals(w.ip, w.op, lit, lane);
      if (WINDOW) {
        // The last min(lit, 8) literals join the history.
        let n = min(lit, 8u);
        let at = w.ip + lit - n;
        var v = vec2<u32>(in_bytes(at, min(n, 4u)), 0u);
        if (n > 4u) {
          v.y = in_bytes(at + 4u, n - 4u);
        }
        w.hist = push64(w.hist, v, n);
        w.known = min(w.known + lit, 8u);
      }
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
    if (WINDOW && offset <= w.known) {
      // Every source byte is in the history: no memory read, no barrier.
      copy_match_window(w.op, offset, count, w.hist, lane);
      w.hist = window_after_match(w.hist, offset, count);
      w.known = min(w.known + count, 8u);
      w.op += count;
      continue;
    }
    w.known = 0u;
    let src_lo = w.op - offset;
    let from_literals = src_lo >= lit_out;
    // With an offset that is a multiple of 4 * LANES bytes, every byte a lane reads is in a word it owns (at
    // the same place in the word): it wrote it itself, so no barrier is needed.
    let own_words = offset % (4u * LANES) == 0u;
    if (!from_literals && !own_words && src_lo + min(offset, count) > w.visible) {
      // Copied after the barrier that ends this epoch.
      w.pending_offset = offset;
      w.pending_count = count;
      w.visible = w.op;
      break;
    }
    copy_match(w.op, offset, count, from_literals, lit_src, lit_out, lane);
    w.op += count;
  }
  return w;
}

// One epoch of a block walked from its sequence list (LIST: lists[list_base..], list_n sequences checked by
// bslz4-parse.wgsl, `start` the block's first compressed byte; w.ip counts sequences): the pending match, then
// sequences until a match needs a barrier or the list ends. No token is parsed and nothing is checked here: the
// parse pass checked every sequence (a block whose list ends decodes exactly).
fn list_epoch(w0: Walk, start: u32, lane: u32) -> Walk {
  var w = w0;
  if (w.pending_count != 0u) {
    copy_match(w.op, w.pending_offset, w.pending_count, false, 0u, 0u, lane);
    w.op += w.pending_count;
    w.pending_count = 0u;
  }
  loop {
    if (w.ip == list_n) {
      w.done = 1u;
      break;
    }
    var e: vec2<u32>;
    if (LIST_STAGE) {
      e = lists[list_base + w.ip];
    } else {
      e = list_seq(list_at + w.ip);
    }
    w.ip += 1u;
    let lit = e.x & 0xffffu;
    let count = e.x >> 16u;
    let offset = e.y & 0xffffu;
    let lit_src = start + (e.y >> 16u);
    let lit_out = w.op;
    if (lit > 0u) {
      copy_literals(lit_src, w.op, lit, lane);
    }
    w.op += lit;
    if (count == 0u) {
      continue;
    }
    let src_lo = w.op - offset;
    let from_literals = src_lo >= lit_out;
    let own_words = offset % (4u * LANES) == 0u;
    if (!from_literals && !own_words && src_lo + min(offset, count) > w.visible) {
      w.pending_offset = offset;
      w.pending_count = count;
      w.visible = w.op;
      break;
    }
    copy_match(w.op, offset, count, from_literals, lit_src, lit_out, lane);
    w.op += count;
  }
  return w;
}
