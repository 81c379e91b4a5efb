// The walk of one tANS lane (docs/archive-format.md), shared by tans-query.wgsl and tans-values.wgsl through an
// include line naming this file (scripts/wgsl-include.mjs). The including shader includes
// common/tans-lane-bindings.wgsl (`data`, `cells`, `class_map`, `override TABLE_LOG, BITS, TOKENS`),
// common/tans-context.wgsl and common/tans-bits.wgsl, and defines `fn on_value(i: u32, v: u32)`, called with
// each of the first `stop` values of the lane in pixel order. CPU twin: decodeLane (src/archive/tans-decode.ts).

struct LaneWalk {
  // Word offsets of the record's data, decoder cells and class map in the bound buffers.
  data_base: u32,
  cells_base: u32,
  class_base: u32,
  // The lane's words [s0, s1) of the record's `data_words`.
  s0: u32,
  s1: u32,
  data_words: u32,
  // First pixel and pixel count of the lane; values to walk; detector columns (contexts restart per row).
  first: u32,
  count: u32,
  stop: u32,
  cols: u32,
}

fn pixel_class(class_base: u32, pixel: u32) -> u32 {
  return (class_map[class_base + (pixel >> 2u)] >> ((pixel & 3u) * 8u)) & 0xffu;
}

// Walks the lane; false when it lies (its range, its stop bit, a read before its start, a token outside the
// alphabet): values handed out before the lie must then be dropped by the caller.
fn walk_lane(l: LaneWalk) -> bool {
  let raw_words = (l.count * BITS + 31u) / 32u;
  let L = 1u << TABLE_LOG;
  start = l.data_base + l.s0;
  // The reader checked every lane's range when the archive was opened; these checks keep a bad record from
  // reading outside its words all the same.
  if (!(l.s0 <= l.s1 && l.s1 <= l.data_words) || l.s1 - l.s0 > raw_words) {
    return false;
  }
  if (l.s1 - l.s0 == raw_words) {
    for (var i = 0u; i < l.stop; i++) {
      on_value(i, raw_value(i));
    }
    return true;
  }
  if (l.s1 == l.s0 || data[l.data_base + l.s1 - 1u] == 0u) {
    return false;
  }
  p = (l.s1 - l.s0 - 1u) * 32u + firstLeadingBit(data[l.data_base + l.s1 - 1u]);
  if (p < TABLE_LOG) {
    return false;
  }
  lane_words = l.s1 - l.s0;
  open_window();
  var s = read_bits(TABLE_LOG);
  var l1 = 0u;
  var l2 = 0u;
  var col = l.first % l.cols;
  for (var i = 0u; i < l.stop; i++) {
    let pixel = l.first + i;
    if (col == 0u) {
      l1 = 0u;
      l2 = 0u;
    }
    let context = pixel_class(l.class_base, pixel) * 9u + neighbour_bucket(l1, l2);
    let cell = cells[l.cells_base + context * L + s];
    let token = (cell >> 16u) & 0xffu;
    let nb = (cell >> 12u) & 15u;
    var eb = 0u;
    if (token >= 16u) {
      eb = 2u + ((token - 16u) >> 2u);
    }
    if (token >= TOKENS || p < eb + nb) {
      return false;
    }
    var v = token;
    if (token >= 16u) {
      v = ((4u | (token & 3u)) << eb) + read_bits(eb);
    }
    on_value(i, v);
    s = (cell & 0xfffu) + read_bits(nb);
    l2 = l1;
    l1 = v;
    col = select(col + 1u, 0u, col + 1u == l.cols);
  }
  return true;
}
