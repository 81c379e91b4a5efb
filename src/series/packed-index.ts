/**
 * The exact series index: every count of an acquisition, detector-major and bit-packed, so a mask's image reads
 * only the pixels it covers (a delta only the pixels it changes) and every value is a shift and a mask away.
 * CPU twin of src/shaders/packed-index.wgsl (build: `packedBlocks`, `packedScan`, `packedPack`) and
 * src/shaders/packed-query.wgsl (`packedQuery`). It lives on the GPU only (not in the archive); docs/pass-graph.md
 * ("Series exact index") gives its passes and bytes.
 *
 * Layout, per acquisition: frames are cut into chunks (never across a record; `chunkFrames` a multiple of
 * 1,024); in a chunk, each pixel's values of 64 consecutive frames form a block, stored with the bit width of
 * the largest (w = bits of the OR of the 64 values; 0 when all are 0) as 64 values of w bits, LSB first, in 2w
 * u32 words. Metadata per (pixel, group of 16 blocks): the block table, 16 bits a block in 8 words (the block's
 * word offset from the group's first word, at most 15 x 64 in 10 bits, | its width << 10), and the group's word
 * offset in its chunk's data.
 * Chunk data is pixel-major: pixel p's groups, then pixel p + 1's. Nothing is approximated: a count up to the
 * dtype's maximum keeps all its bits (w up to 32), and a flagged pixel is stored like any other (masks leave it
 * out). Nothing is approximated.
 *
 * Tile levels: besides the detector's pixels, the index stores, as further "virtual pixels" packed the same way,
 * the exact sums of aligned 64 x 64, 32 x 32, 16 x 16, 8 x 8, 4 x 4 and 2 x 2 pixel tiles (`TILE_SIDES`; tiles at
 * the detector's edge hold the pixels that exist). A mask is answered with the fewest tiles and pixels whose
 * signed sum is the mask (`decomposeSigned` in index-lists.ts: tiles added or subtracted whole), so an ADF annulus
 * reads far fewer entries a frame than it has pixels. Tiles are kept only where their sums provably fit 32 bits
 * (counts of at most 16 bits at these sides).
 */
import { StemflowError } from '../errors';

/** Frames of a block (one bit width). */
export const BLOCK = 64;
/** Blocks of a group (one stored offset, 16 block entries in 8 words). */
export const GROUP = 16;
/** Frames of a full group. */
export const GROUP_FRAMES = BLOCK * GROUP;

/** Sides of the tile levels, largest first (each a multiple of the next, so tiles nest). */
export const TILE_SIDES = [64, 32, 16, 8, 4, 2] as const;

export interface TileLevel {
  side: number;
  /** Tiles per detector row and column. */
  rows: number;
  cols: number;
  /** Virtual pixel of the level's first tile (tile (r, c) is base + r * cols + c). */
  base: number;
}

export interface IndexChunk {
  /** Record of the acquisition the chunk's frames come from. */
  record: number;
  /** First frame of the chunk (acquisition-wide) and its frame count. */
  first: number;
  frames: number;
  /** Frame of the chunk's first frame within its record. */
  recordFrame: number;
  groups: number;
  /** Word offsets of the chunk's block table (8 words per (pixel, group)) and group offsets (1 word each). */
  blocksBase: number;
  basesBase: number;
}

export interface IndexGeometry {
  pixels: number;
  detector: [number, number];
  tiles: TileLevel[];
  /** Pixels and tiles: the values per frame the index stores. */
  virtualPixels: number;
  frames: number;
  chunkFrames: number;
  chunks: IndexChunk[];
  blocksWords: number;
  basesWords: number;
}

/** Largest chunk whose decoded values (u32 each) fit `scratchBytes`: a multiple of 1,024 frames, at least 1,024. */
export function chunkFramesFor(pixels: number, scratchBytes: number): number {
  return Math.max(GROUP_FRAMES, Math.floor(scratchBytes / (4 * pixels * GROUP_FRAMES)) * GROUP_FRAMES);
}

/** Chunks of an acquisition's records (in frame order) and where their metadata goes. */
export function indexGeometry(
  records: readonly { firstFrame: number; frames: number }[],
  detector: [number, number],
  chunkFrames: number,
  /** Bits of a count: tile levels only when their sums fit 32 bits. */
  dtypeBits: number,
  sides: readonly number[] = TILE_SIDES,
): IndexGeometry {
  const [rows, cols] = detector;
  const pixels = rows * cols;
  const tiles: TileLevel[] = [];
  let virtualPixels = pixels;
  for (const side of sides) {
    if (dtypeBits + Math.ceil(Math.log2(side * side)) > 32 || side > Math.min(rows, cols)) continue;
    const level = { side, rows: Math.ceil(rows / side), cols: Math.ceil(cols / side), base: virtualPixels };
    tiles.push(level);
    virtualPixels += level.rows * level.cols;
  }
  if (!Number.isInteger(chunkFrames) || chunkFrames < GROUP_FRAMES || chunkFrames % GROUP_FRAMES !== 0)
    throw new StemflowError('invalid', `Index chunks of ${chunkFrames} frames: give a multiple of 1024.`);
  const chunks: IndexChunk[] = [];
  let blocksWords = 0;
  let basesWords = 0;
  let frames = 0;
  records.forEach((r, record) => {
    for (let at = 0; at < r.frames; at += chunkFrames) {
      const n = Math.min(chunkFrames, r.frames - at);
      const groups = Math.ceil(n / GROUP_FRAMES);
      chunks.push({
        record,
        first: r.firstFrame + at,
        frames: n,
        recordFrame: at,
        groups,
        blocksBase: blocksWords,
        basesBase: basesWords,
      });
      blocksWords += virtualPixels * groups * 8;
      basesWords += virtualPixels * groups;
    }
    frames = Math.max(frames, r.firstFrame + r.frames);
  });
  return { pixels, detector, tiles, virtualPixels, frames, chunkFrames, chunks, blocksWords, basesWords };
}

/** Bit width of a value set from the OR of its values (0 for all zeros). */
export const widthOf = (or: number): number => 32 - Math.clz32(or);

/**
 * Twin of `blocks_main`: per (pixel, group) of a chunk, the block table (each block's offset from the group's first
 * word | its width << 10, 16 bits a block, 8 words) and the group's data words (2 x the sum of its widths), written
 * where `packedScan` turns them into offsets. `values`: the chunk's counts, frame-major (frame f, pixel p at
 * f * pixels + p).
 */
export function packedBlocks(
  values: Uint32Array,
  pixels: number,
  frames: number,
  blocks: Uint32Array,
  bases: Uint32Array,
  c: { groups: number; blocksBase: number; basesBase: number },
): void {
  for (let g = 0; g < c.groups; g++) {
    for (let p = 0; p < pixels; p++) {
      const words = new Uint32Array(8);
      let sum = 0;
      for (let k = 0; k < GROUP; k++) {
        const f0 = (g * GROUP + k) * BLOCK;
        let or = 0;
        for (let f = f0; f < Math.min(frames, f0 + BLOCK); f++) or |= values[f * pixels + p];
        const w = widthOf(or);
        words[k >> 1] |= (sum | (w << 10)) << ((k & 1) * 16);
        sum += 2 * w;
      }
      const e = p * c.groups + g;
      blocks.set(words, c.blocksBase + e * 8);
      bases[c.basesBase + e] = sum;
    }
  }
}

/** Twin of `scan`: the groups' data words become exclusive offsets in chunk order; returns the chunk's words. */
export function packedScan(
  bases: Uint32Array,
  pixels: number,
  c: { groups: number; basesBase: number },
): number {
  let total = 0;
  for (let e = 0; e < pixels * c.groups; e++) {
    const n = bases[c.basesBase + e];
    bases[c.basesBase + e] = total;
    total += n;
  }
  return total;
}

/** Word offset (in the chunk's data) and width of block `b` of pixel `p`. */
export function blockAt(
  blocks: Uint32Array,
  bases: Uint32Array,
  c: { groups: number; blocksBase: number; basesBase: number },
  p: number,
  b: number,
): { at: number; w: number } {
  const g = b >> 4;
  const k = b & 15;
  const e = p * c.groups + g;
  const h = (blocks[c.blocksBase + e * 8 + (k >> 1)] >>> ((k & 1) * 16)) & 0xffff;
  return { at: bases[c.basesBase + e] + (h & 0x3ff), w: h >>> 10 };
}

/** Value j (< 64) of a block of width w whose words start at data[at]. */
export function blockValue(data: Uint32Array, at: number, w: number, j: number): number {
  if (w === 0) return 0;
  const bit = j * w;
  const i = at + (bit >>> 5);
  const sh = bit & 31;
  let v = data[i] >>> sh;
  if (sh + w > 32) v |= data[i + 1] << (32 - sh);
  return w === 32 ? v >>> 0 : (v & ((1 << w) - 1)) >>> 0;
}

/** Twin of `pack`: every block's values at its width into `data` from word `dataBase` (offsets from the scan). */
export function packedPack(
  values: Uint32Array,
  pixels: number,
  frames: number,
  blocks: Uint32Array,
  bases: Uint32Array,
  c: { groups: number; blocksBase: number; basesBase: number },
  data: Uint32Array,
  dataBase: number,
): void {
  for (let p = 0; p < pixels; p++) {
    for (let b = 0; b < c.groups * GROUP; b++) {
      const { at, w } = blockAt(blocks, bases, c, p, b);
      if (w === 0) continue;
      // As pack_main: `acc` holds `bits` (< 32) bits not yet written.
      let acc = 0;
      let bits = 0;
      let out = dataBase + at;
      for (let j = 0; j < BLOCK; j++) {
        const f = b * BLOCK + j;
        const v = f < frames ? values[f * pixels + p] : 0;
        if (bits + w >= 32) {
          data[out++] = acc | (v << bits);
          const used = 32 - bits;
          acc = used < 32 ? v >>> used : 0;
          bits = bits + w - 32;
        } else {
          acc |= v << bits;
          bits += w;
        }
      }
    }
  }
}

/** Mask list entries: pixel in the low 30 bits, accumulator bits (1 = A, 2 = B) above. */
export const LIST_PIXEL = 0x3fffffff;
export const listEntry = (pixel: number, bits: number): number => (pixel | (bits << 30)) >>> 0;

/**
 * Twin of packed-query.wgsl: for every frame of a chunk, the sums of the listed pixels' values into accumulator A
 * or B (`a`, `b` at frameBase + frame), from the chunk's data at `data[dataBase..]`.
 */
export function packedQuery(
  data: Uint32Array,
  dataBase: number,
  blocks: Uint32Array,
  bases: Uint32Array,
  c: { frames: number; groups: number; blocksBase: number; basesBase: number },
  list: Uint32Array,
  a: Float64Array,
  b: Float64Array,
  frameBase: number,
): void {
  for (const e of list) {
    const p = e & LIST_PIXEL;
    const bits = e >>> 30;
    for (let blk = 0; blk * BLOCK < c.frames; blk++) {
      const { at, w } = blockAt(blocks, bases, c, p, blk);
      if (w === 0) continue;
      for (let j = 0; j < BLOCK && blk * BLOCK + j < c.frames; j++) {
        const v = blockValue(data, dataBase + at, w, j);
        const f = frameBase + blk * BLOCK + j;
        if (bits & 1) a[f] += v;
        if (bits & 2) b[f] += v;
      }
    }
  }
}

/**
 * Twin of `tiles_main`: each tile's exact sum, for every frame of a chunk, written after the pixels of the frame
 * (`values` holds frames of `virtualPixels` values; the pixels' are filled). The smallest level sums pixels, each
 * larger one the tiles of the level below it (levels nest, so the sums are the tiles' pixel sums).
 */
export function packedTiles(values: Uint32Array, frames: number, g: IndexGeometry): void {
  const [rows, cols] = g.detector;
  const stride = g.virtualPixels;
  const up = [...g.tiles].reverse();
  for (let f = 0; f < frames; f++) {
    const at = f * stride;
    up.forEach((t, k) => {
      const below = up[k - 1];
      const [srcRows, srcCols, srcBase] = below ? [below.rows, below.cols, below.base] : [rows, cols, 0];
      const side = below ? t.side / below.side : t.side;
      for (let tr = 0; tr < t.rows; tr++) {
        for (let tc = 0; tc < t.cols; tc++) {
          let sum = 0;
          for (let r = tr * side; r < Math.min(srcRows, (tr + 1) * side); r++)
            for (let c = tc * side; c < Math.min(srcCols, (tc + 1) * side); c++)
              sum += values[at + srcBase + r * srcCols + c];
          values[at + t.base + tr * t.cols + tc] = sum;
        }
      }
    });
  }
}

/**
 * An acquisition's index built on the CPU from its counts (frame-major, `frames` x `pixels`): the reference the
 * GPU build must equal word for word.
 */
export function buildPackedIndex(
  counts: Uint32Array,
  geometry: IndexGeometry,
): { blocks: Uint32Array; bases: Uint32Array; data: Uint32Array[]; totals: number[] } {
  const { pixels, virtualPixels } = geometry;
  const blocks = new Uint32Array(geometry.blocksWords);
  const bases = new Uint32Array(geometry.basesWords);
  const data: Uint32Array[] = [];
  const totals: number[] = [];
  for (const c of geometry.chunks) {
    const values = new Uint32Array(c.frames * virtualPixels);
    for (let f = 0; f < c.frames; f++)
      values.set(counts.subarray((c.first + f) * pixels, (c.first + f + 1) * pixels), f * virtualPixels);
    packedTiles(values, c.frames, geometry);
    packedBlocks(values, virtualPixels, c.frames, blocks, bases, c);
    const total = packedScan(bases, virtualPixels, c);
    const words = new Uint32Array(total);
    packedPack(values, virtualPixels, c.frames, blocks, bases, c, words, 0);
    data.push(words);
    totals.push(total);
  }
  return { blocks, bases, data, totals };
}
