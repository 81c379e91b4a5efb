// Bitshuffle/LZ4 decode + audit, the variant family of src/shaders/bslz4-decode.wgsl, without subgroup
// operations. CPU twin: src/kernels/bslz4-decode.ts. The shader is common/bslz4-decode-multi-body.wgsl (its header
// says what differs from bslz4-decode.wgsl); bslz4-decode-multi-subgroups.wgsl is the same body with subgroups.

// No subgroup operations: SHUFFLE variants take the memory path.
const HAS_SUBGROUPS: bool = false;

fn lane_value(v: u32, src: u32) -> u32 {
  return v;
}

fn all_lanes(b: bool) -> bool {
  return b;
}

fn lanes_form_subgroup(lid: u32, lane: u32) -> bool {
  return false;
}

// #include "common/bslz4-decode-multi-body.wgsl"
