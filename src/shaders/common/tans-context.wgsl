// Neighbour context of the tANS codec (src/archive/hybrid-uint.ts), shared by tans-stats.wgsl, tans-encode.wgsl,
// tans-query.wgsl and tans-compare.wgsl through an include line naming this file (scripts/wgsl-include.mjs).
// Bucket of the two values to the left in the same row and lane.
fn neighbour_bucket(l1: u32, l2: u32) -> u32 {
  let n = min(l1, 16u) + min(l2, 16u);
  if (n < 4u) {
    return n;
  }
  if (n < 6u) {
    return 4u;
  }
  if (n < 8u) {
    return 5u;
  }
  if (n < 12u) {
    return 6u;
  }
  if (n < 16u) {
    return 7u;
  }
  return 8u;
}
