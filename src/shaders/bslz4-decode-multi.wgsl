// Bitshuffle/LZ4 decode + audit: the production pass (DEFAULT_DECODE_VARIANT, scratch-keep-pat-wg16-x2-stage16;
// the load's on a device that binds fewer than 10 storage buffers a stage) and its variants. The same results
// word for word as src/shaders/bslz4-decode.wgsl (the first design, variant `base`), the same error codes (CPU
// twin: src/kernels/bslz4-decode.ts), the same bindings plus `scratch`. Selected by src/gpu/passes/bslz4-decode.ts
// (variants: src/gpu/passes/bslz4-decode-variants.ts); measured by `stemflow bench decode`. The body (overrides,
// walk, `main`) is common/bslz4-multi-main.wgsl, shared with bslz4-decode-list.wgsl (the list variants); the
// walk's byte access and copies are in common/bslz4-multi-copy.wgsl, its state and epochs in
// common/bslz4-multi-walk.wgsl.
//
// What differs from bslz4-decode.wgsl:
// - A workgroup of GROUPS * LANES lanes decodes GROUPS blocks of a frame at once, one group of LANES lanes per
//   block (LANES = 32 is one warp on NVIDIA): more blocks in flight for the same number of workgroups. The
//   block headers of a round of GROUPS blocks are read by every lane (the same addresses: uniform), in order,
//   up to the first bad header; the frame's verdict is the first failing block's, else the bad header's, so
//   the verdict is the one the twin's block-by-block walk gives.
// - With SCRATCH, a group's decoded (still bit-shuffled) block lives in global memory (`scratch`, 8 KiB per
//   group of each persistent workgroup, L2-resident) instead of workgroup memory, so workgroup memory no
//   longer bounds the blocks in flight; the epoch barriers are storage barriers. Without SCRATCH it lives in
//   workgroup memory as in bslz4-decode.wgsl (BLOCK_WG_WORDS = 2048 words per group).
// - Each group stages the first STAGE_WORDS words of its block's compressed bytes in workgroup memory (bytes
//   past them are read from the slot), so the serial token walk reads workgroup memory.
// - Blocks are not zeroed first: a lane stores whole words, or merges the bytes of a partial word under a
//   mask (the word's other bytes belong to neighbouring sequences, written by the same lane; with KEEP the
//   lane merges with the last word it wrote, kept in registers, instead of reading the word back). Every byte of
//   [0, out_end) is written exactly once before it is read; a successful walk writes all of them.
// - With WINDOW, every lane keeps the last 8 output bytes (known from the literals it read and the window
//   matches it copied) in registers; a match whose offset is at most the known bytes (offset 2 is the most
//   common in bit-shuffled counts) is copied from them: no memory read and no barrier.
// - A match whose offset is a multiple of 4 * LANES bytes reads only words its lanes wrote themselves: it
//   never waits for a barrier (bit planes of a block are 512-byte multiples apart at the default block size).
// The token walk, the match copy (period identity), the epochs and the unshuffle are otherwise those of
// bslz4-decode.wgsl, with `lane` (0..LANES) in place of the workgroup's lane index.

// #include "common/bslz4-out-words.wgsl"
// #include "common/bslz4-quad-none.wgsl"
// #include "common/bslz4-decode-multi-body.wgsl"
