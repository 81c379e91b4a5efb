// bslz4-decode-multi.wgsl (whose header describes the pass) with its output stored 16 bytes at a time
// (common/bslz4-out-vec4.wgsl): the same words. Chosen by src/gpu/passes/bslz4-decode-pipeline.ts for values of 2
// or 4 bytes and frames of a multiple of 4 words. CPU twin: src/kernels/bslz4-decode.ts.

// #include "common/bslz4-out-vec4.wgsl"
// #include "common/bslz4-quad-none.wgsl"
// #include "common/bslz4-decode-multi-body.wgsl"
