// Bitshuffle/LZ4 decode + audit, the variant family of src/shaders/bslz4-decode.wgsl, with subgroup operations
// (the device's 'subgroups' feature; variants with the SHUFFLE part). CPU twin: src/kernels/bslz4-decode.ts.
// The shader is common/bslz4-decode-multi-body.wgsl; bslz4-decode-multi.wgsl is the same body without subgroups.
enable subgroups;

// The walk is uniform across a group's lanes (every lane parses the same bytes), which the uniformity analysis
// cannot see through the loads it depends on; the shuffles are reached by every lane of the subgroup.
diagnostic(off, subgroup_uniformity);

const HAS_SUBGROUPS: bool = true;

// `v` of subgroup invocation `src`.
fn lane_value(v: u32, src: u32) -> u32 {
  return subgroupShuffle(v, src);
}

fn all_lanes(b: bool) -> bool {
  return subgroupAll(b);
}

// Whether a group's LANES lanes are exactly one subgroup, lane i its invocation i (else SHUFFLE is not used).
fn lanes_form_subgroup(lid: u32, lane: u32) -> bool {
  let next = (lane + 1u) % LANES;
  return subgroupAll(subgroupAdd(1u) == LANES && subgroupShuffle(lid, next) == lid - lane + next);
}

// #include "common/bslz4-decode-multi-body.wgsl"
