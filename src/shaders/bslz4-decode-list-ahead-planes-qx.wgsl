enable subgroups;
// The subgroup operations below are quad swaps and broadcasts in the unshuffle of a block below 256, reached by
// all 4 lanes of a quad together (a group's loop over its block's plane words, LANES a multiple of 4).
diagnostic(off, subgroup_uniformity);

// bslz4-decode-list-ahead-planes.wgsl with QUAD_STORES (variant part `qx`; common/bslz4-quad.wgsl): the same output, the
// unshuffle's stores of a block below 256 exchanged within quads so that each store instruction writes whole
// sectors. Chosen by src/gpu/passes/bslz4-decode-pipeline.ts on a device with the `subgroups` feature. CPU twin:
// src/kernels/bslz4-decode.ts, then src/kernels/decoded-planes.ts.

// #include "common/bslz4-out-planes.wgsl"
// #include "common/bslz4-quad.wgsl"
// #include "common/bslz4-decode-list-ahead-body.wgsl"
