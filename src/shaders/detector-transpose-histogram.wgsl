// The detector transpose (common/detector-transpose-main.wgsl: contract, layouts, entry points main and
// main_vec4) that also counts the audit histogram's bins 1..255 of the batch's unflagged values into the decode's
// audit buffer (bindings 7 and 8, common/detector-transpose-bins.wgsl): the load's transpose, whose decode leaves
// those bins to it (AUDIT_BINS false in common/bslz4-audit.wgsl). CPU twin: src/kernels/detector-transpose.ts
// (`histogram`). Needs 17 KiB of workgroup memory: the load counts the bins in the decode on a device that offers
// less (src/compute/gpu-load.ts).

// #include "common/detector-transpose-bins.wgsl"

// #include "common/detector-transpose-packed.wgsl"

// #include "common/detector-transpose-main.wgsl"
