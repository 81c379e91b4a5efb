// Bitshuffle/LZ4 decode + audit from sequence lists: the second pass of the decode variants named `list`
// (src/gpu/passes/bslz4-decode-variants.ts), after src/shaders/bslz4-parse.wgsl. The multi pass
// (bslz4-decode-multi.wgsl, whose header describes the walk) with LIST: a group copies its block from the list
// the parse pass wrote for it instead of parsing the block's tokens; a block without a list (past the parse
// pass's blocks, or whose list overflowed LIST_CAP) is walked from its tokens. The same results word for word,
// the same error codes (CPU twin: src/kernels/bslz4-decode.ts; the lists' twin: src/kernels/bslz4-parse.ts).
// 10 storage buffers: chosen only on a device whose maxStorageBuffersPerShaderStage allows them.

// #include "common/bslz4-out-words.wgsl"
// #include "common/bslz4-quad-none.wgsl"
// #include "common/bslz4-decode-list-body.wgsl"
