// The `row` copy of the list decode (ROW_COPY, with LIST, LIST_STAGE and FRAME_GROUPS): included by
// common/bslz4-multi-main.wgsl (a line naming this file, scripts/wgsl-include.mjs); it uses the group's staged
// list (lists[list_base..], list_n sequences checked by the parse pass), in_byte/in_bytes, block_byte/block_bytes,
// blk_set and epoch_barrier from there.
//
// The sequence-at-a-time copy (list_epoch) spreads each sequence over the lanes that own its words, so a warp's
// pass over a sequence of 20 words leaves 12 lanes idle, and a block of ~96 sequences (the benchmark's) takes
// ~200 lane passes for its 64 rows of 32 words. Here the lanes instead take the block's words a row at a time
// (row r: words 32 r .. 32 r + 31 for 32 lanes), each lane resolving its own word's 4 bytes through the list:
// a literal byte is read from the input; a match byte is the byte `offset` earlier (for an overlapping match,
// the byte of the same phase in the period before the match: out[m + j] = out[m - o + j mod o]), which is
// either behind the last barrier (read from the block) or resolved again, one sequence further back each time.
// So a row costs one pass whatever its sequences, and the block 64 passes and 64 barriers (cheap with one warp
// a workgroup). The words written are the LZ4 output by construction; the parity tests run `row` over every
// fault, mutation, boundary and fixture of the other variants.

// ROW_COPY: per group, the output start of each sequence of its list (from starts[list_base]); ROW_WG =
// LIST_CAP * GROUPS (else 1).
var<workgroup> starts: array<u32, ROW_WG>;
// ROW_COPY: per lane, the output bytes of its chunk of the list (the scan of row_starts); ROW_SUMS = LANES * GROUPS.
var<workgroup> row_sums: array<u32, ROW_SUMS>;
// The first block byte not yet behind a barrier (bytes below it are visible to every lane of the group), and the
// slot byte of the block's first compressed byte (list entries give their literals from it).
var<private> row_visible: u32;
var<private> row_in: u32;

// A sequence of the group's list: output bytes [start, lit_end) are literals from slot byte `src`, bytes
// [lit_end, end) a match `offset` back.
struct Seq {
  start: u32,
  lit_end: u32,
  end: u32,
  offset: u32,
  src: u32,
}

fn seq_start(s: u32) -> u32 {
  return starts[list_base + s];
}

fn row_seq(s: u32) -> Seq {
  let e = lists[list_base + s];
  let start = seq_start(s);
  let lit_end = start + (e.x & 0xffffu);
  return Seq(start, lit_end, lit_end + (e.x >> 16u), e.y & 0xffffu, row_in + (e.y >> 16u));
}

// The output starts of the group's list (when `rowed`): each lane sums a chunk of the entries, then adds the
// chunks before its own. Call in uniform control flow.
fn row_starts(rowed: bool, sub: u32, lane: u32) {
  let chunk = (LIST_CAP + LANES - 1u) / LANES;
  let n = select(0u, list_n, rowed);
  let k0 = min(lane * chunk, n);
  let k1 = min(k0 + chunk, n);
  var sum = 0u;
  for (var k = k0; k < k1; k++) {
    let e = lists[list_base + k].x;
    sum += (e & 0xffffu) + (e >> 16u);
  }
  row_sums[sub * LANES + lane] = sum;
  workgroupBarrier();
  var acc = 0u;
  for (var j = 0u; j < lane; j++) {
    acc += row_sums[sub * LANES + j];
  }
  for (var k = k0; k < k1; k++) {
    starts[list_base + k] = acc;
    let e = lists[list_base + k].x;
    acc += (e & 0xffffu) + (e >> 16u);
  }
  workgroupBarrier();
}

// The sequence that holds block byte q (below the block's output end), searched from sequence s: the last one
// whose start is <= q (that one is never empty).
fn seq_at(q: u32, s0: u32) -> u32 {
  var s = s0;
  while (s + 1u < list_n && seq_start(s + 1u) <= q) {
    s++;
  }
  while (seq_start(s) > q) {
    s--;
  }
  return s;
}

// Block byte q: behind the barrier, a literal, or the byte its match copies (q falls by at least one each
// time, to before the match: at most q steps).
fn row_byte(q0: u32, hint: u32) -> u32 {
  var q = q0;
  var s = hint;
  for (var step = 0u; step <= q0; step++) {
    if (q < row_visible) {
      return block_byte(q);
    }
    s = seq_at(q, s);
    let t = row_seq(s);
    if (q < t.lit_end) {
      return in_byte(t.src + (q - t.start));
    }
    q = t.lit_end - t.offset + (q - t.lit_end) % t.offset;
  }
  return 0u;
}

// `n` (1..4) block bytes from q0, little-endian: followed as one span while they stay inside one literal run or
// one period of one match (each step maps them to bytes with the same values), else byte by byte.
fn row_span(q0: u32, n: u32, hint: u32) -> u32 {
  var q = q0;
  var s = hint;
  for (var step = 0u; step <= q0; step++) {
    if (q + n <= row_visible) {
      return block_bytes(q, n);
    }
    s = seq_at(q, s);
    let t = row_seq(s);
    if (q + n <= t.lit_end) {
      return in_bytes(t.src + (q - t.start), n);
    }
    if (q < t.lit_end || q + n > t.end) {
      break;
    }
    let r = (q - t.lit_end) % t.offset;
    if (r + n > t.offset) {
      break;
    }
    q = t.lit_end - t.offset + r;
  }
  var v = 0u;
  for (var k = 0u; k < n; k++) {
    v |= row_byte(q + k, s) << (8u * k);
  }
  return v;
}

// The word of block bytes [a, a + 4), a in sequence `cur`.
fn row_word(a: u32, cur: u32) -> u32 {
  let t = row_seq(cur);
  if (a + 4u <= t.lit_end) {
    return in_bytes(t.src + (a - t.start), 4u);
  }
  if (a >= t.lit_end && a + 4u <= t.end) {
    let o = t.offset;
    let m = t.lit_end;
    let r = (a - m) % o;
    if (r + 4u <= o) {
      return row_span(m - o + r, 4u, cur);
    }
    if (o < 4u) {
      // Offsets 1 to 3: the word at phase r of the pattern's repetition (bytes 0..7 from phase 0: lo, hi).
      let p = row_span(m - o, o, cur);
      var lo = p * 0x01010101u;
      var hi = lo;
      if (o == 2u) {
        lo = p | (p << 16u);
        hi = lo;
      } else if (o == 3u) {
        lo = p | (p << 24u);
        hi = (p >> 8u) | (p << 16u);
      }
      return select((lo >> (8u * r)) | (hi << (32u - 8u * r)), lo, r == 0u);
    }
    // Across the period's end: k bytes to it, then the period's first 4 - k (< o) bytes.
    let k = o - r;
    return row_span(m - o + r, k, cur) | (row_span(m - o, 4u - k, cur) << (8u * k));
  }
  var v = 0u;
  for (var k = 0u; k < 4u; k++) {
    v |= row_byte(a + k, cur) << (8u * k);
  }
  return v;
}

// The group's block (when `rowed`: its list staged and checked) copied row by row into block bytes
// [0, out_end), `block_start` its first compressed slot byte. Call in uniform control flow; ends with a barrier.
fn row_copy(rowed: bool, out_end: u32, block_start: u32, sub: u32, lane: u32) {
  row_starts(rowed, sub, lane);
  row_in = block_start;
  var cur = 0u;
  let rows = (BLOCK_WORDS + LANES - 1u) / LANES;
  for (var r = 0u; r < rows; r++) {
    let a = (r * LANES + lane) * 4u;
    row_visible = (r - r % ROW_WINDOW) * LANES * 4u;
    if (rowed && a < out_end) {
      while (cur + 1u < list_n && seq_start(cur + 1u) <= a) {
        cur++;
      }
      blk_set(a >> 2u, row_word(a, cur));
    }
    if (r % ROW_WINDOW == ROW_WINDOW - 1u || r + 1u == rows) {
      epoch_barrier();
    }
  }
}
