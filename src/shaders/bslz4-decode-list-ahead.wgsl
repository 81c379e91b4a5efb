// The list decode (bslz4-decode-list.wgsl, whose header describes it) that also parses the next batch in the
// same dispatch: its last Params.ahead_groups workgroups walk the next batch's blocks into the other set of
// lists (the parse pass's work, common/bslz4-parse-block.wgsl), the others decode this batch from its lists.
// One dispatch, so no barrier separates the parse from the decode and the GPU runs both at once (a parse pass of
// its own recorded after the decode ran after it on the H200, even into buffers the decode did not bind, the
// barriers Dawn places between dispatches being wider than their buffers; docs/performance.md). The load keeps
// two sets of inputs in one buffer each (compressed chunks, index, lists; gpu-load.ts), chosen by Params bases.
// 10 storage buffers, like the list decode. CPU twins: src/kernels/bslz4-decode.ts (the decode), and
// src/kernels/bslz4-parse.ts (the lists).

// #include "common/bslz4-out-words.wgsl"
// #include "common/bslz4-quad-none.wgsl"
// #include "common/bslz4-decode-list-ahead-body.wgsl"
