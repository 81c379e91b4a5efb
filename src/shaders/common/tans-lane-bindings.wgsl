// Overrides and bindings 0-4 of a pass that reads an archive record's tANS lanes (docs/archive-format.md),
// shared by tans-query.wgsl, tans-values.wgsl and tans-compare.wgsl through an include line naming this file
// (scripts/wgsl-include.mjs). The including shader declares its own `struct Params` (its layout is read from the
// final source by structLayout, src/gpu/uniform-layout.ts) and its bindings from 5 on.

override WORKGROUP_SIZE: u32 = 64u;
override TABLE_LOG: u32 = 11u;
// Bits per value: 8, 16 or 32.
override BITS: u32 = 16u;
override TOKENS: u32 = 64u;

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> data: array<u32>;
@group(0) @binding(2) var<storage, read> offsets: array<u32>;
@group(0) @binding(3) var<storage, read> cells: array<u32>;
// Pixel classes, four u8 per word.
@group(0) @binding(4) var<storage, read> class_map: array<u32>;
