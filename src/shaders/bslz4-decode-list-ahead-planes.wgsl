// bslz4-decode-list-ahead.wgsl (whose header describes the pass) with its output as two byte planes a frame
// (common/bslz4-out-planes.wgsl): the low bytes of every value, the high bytes only where nonzero, and a mark of
// the spans that hold them. Chosen by src/gpu/passes/bslz4-decode-pipeline.ts for a job of 2-byte values that asks
// for the planes form (the load's). CPU twin: src/kernels/bslz4-decode.ts, then src/kernels/decoded-planes.ts.

// #include "common/bslz4-out-planes.wgsl"
// #include "common/bslz4-quad-none.wgsl"
// #include "common/bslz4-decode-list-ahead-body.wgsl"
