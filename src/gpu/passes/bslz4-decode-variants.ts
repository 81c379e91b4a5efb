/**
 * Variants of the bitshuffle/LZ4 decode pass (all exact: the same words, errors, totals and audit as the CPU
 * twin), named for `stemflow bench decode --variant` and chosen for production by DEFAULT_DECODE_VARIANT.
 *
 * A name is `base` or parts joined by '-':
 * - `wg<N>`: lanes per block (the workgroup size of the fused shader; per group of the multi shader).
 * - `stage<N>`: words of workgroup memory staging a block's compressed bytes (per group).
 * - `x<N>`: blocks of a frame decoded at once by one workgroup (multi shader; workgroup size N * lanes).
 * - `scratch`: decoded blocks in global memory instead of workgroup memory (multi shader).
 * - `win`: every lane keeps the last 8 output bytes in registers; small-offset matches copy from them (multi).
 * - `keep`: every lane keeps the last word it wrote in registers; a partial word merges with it instead of being
 *   read back from the block (multi).
 * - `pat`: a match of offset 1 to 3 loads its pattern once and builds its words in registers (multi).
 * - `u4`: the unshuffle reads whole plane words, each once for four groups of 8 elements (multi; on the H200 the
 *   same 151.4 GB/s as without it: the token walk, not the unshuffle, sets the time).
 * - `multi`: the multi shader with its defaults (32 lanes, 1 block at once, 512 staged words).
 * - `ep<N>`: epochs between checks that every block of the round is done (multi; default 8).
 * - `persist<N>`: N persistent workgroups per dispatch (default one per frame).
 * - `list`: a parse pass first (src/shaders/bslz4-parse.wgsl, one thread per block) writes every block's LZ4
 *   sequences to a list, checked; the multi shader's lanes copy from the list instead of parsing every token
 *   together (a block whose list does not fit is walked from its tokens). `cap<N>`: sequences a list (256).
 *   `listg`: the same, every lane reading the list from global memory (`list` copies it into workgroup memory).
 *   `listx`: the parse pass runs but the shader walks every block from its tokens (the parse pass's cost).
 *   `pw<N>`: parse threads load N (1 or 4) slot words at once.
 * - `fpd<N>`: frames per dispatch unless the job says otherwise (default 4,096).
 * - `zp`: before the unshuffle of a block the lanes read its planes 4 at a time (4 x elems / 8 bytes, whole words)
 *   and the unshuffle skips the loads and bit transposes of every quad of planes that is all zero (`gf` only;
 *   uint16 counts below 16 leave 3 of the 4 quads zero). The same words: a skipped quad contributes zeros.
 * - `ba`: with `zp`, a block whose values are all below 256 (its planes from 8 on zero) is unshuffled a plane word
 *   at a time and audited on its bit planes: zeros, sum and maximum of 32 values from popcounts of their 8 plane
 *   words, instead of per value (the histogram's bins still per value where the pass counts them).
 * - `mb`: with `ba`, the histogram's bins (where the pass counts them) of values 4..15 counted by popcounts of the
 *   8 plane words too (12 counts a lane in 16-bit halves, added to the frame's bins at its end), as values 1..3
 *   are; only values from 16 on keep one workgroup atomic each (0.02 a word of 32 values on the benchmark's frames,
 *   against 2.55). The same audit.
 * - `zt`: with `zp`, the quads of planes that hold a nonzero word are noted while the lanes write the block (each
 *   lane ORs the quads of the nonzero words it stores; a pattern match its range unless its pattern is zero)
 *   instead of read from the block again (3/4 of its words) before the unshuffle. The same words.
 * - `sw`: the multi shader's output stored a 32-bit word at a time where it would store 16 bytes at a time
 *   (decodeOutput in bslz4-decode-pipeline.ts: values of 2 or 4 bytes, frames of a multiple of 4 words); for
 *   comparison, the same words.
 * - `gf`: each group of a workgroup decodes a frame of its own, one block a round (multi), instead of the groups
 *   decoding one frame's blocks together: no group idles in a frame's last round (9 blocks of 192x192 uint16
 *   over 2 groups: 9 rounds for two frames instead of 5 a frame). A workgroup takes `x<N>` frames at once.
 * `base` and names with only wg/stage/persist parts use src/shaders/bslz4-decode.wgsl (64 lanes, 1 staged
 * word); the others src/shaders/bslz4-decode-multi.wgsl.
 */
import { StemflowError } from '../../errors.ts';
import { DEFAULT_LIST_CAP } from '../../kernels/bslz4-parse.ts';

/** The most groups a `zp` variant may have (its workgroup array of quad masks: 2 a group). */
const MAX_PLANE_SKIP_GROUPS = 8;

/** The most sequences a list may hold (a block of 8 KiB has at most 2,048 sequences of 4 bytes). */
const MAX_LIST_CAP = 2048;

/**
 * The variant the load, the archive (encode and verify) and the fuzz target use; every variant passes the same
 * parity tests. H200, 8,192 frames of 192x192 uint16, variants timed in interleaved rounds (docs/performance.md
 * "Decode kernel"): 143.5 GB/s against 115.8 for `scratch-x1-stage64` (the default before), 52.8 for `base`. The
 * pass is bound by instruction issue (each warp walks its block's LZ4 sequences serially): a match of offset 1 to
 * 3 built from its pattern in registers instead of a per-byte loop of reads gave most of it (`pat`: 142), merging
 * partial words in registers the rest (`keep`). One warp per workgroup: its barriers hold no other block back,
 * and a small stage leaves more workgroups resident (16 and 64 words measure the same).
 * Tenth session: two blocks of a frame at once in one warp, 16 lanes each (`wg16-x2`, the default now): 155.9-156.6
 * GB/s with 8 to 48 staged words a block against 151.2-151.4 for `scratch-keep-pat-x1-stage64` in the same rounds
 * (64 staged words: 124.7; 8 lanes x 4 blocks: 150.8). It needs a global scratch of 8 KiB per block in flight,
 * 2 per workgroup (decodeScratchBytes), counted by the plans.
 */
export const DEFAULT_DECODE_VARIANT = 'scratch-keep-pat-wg16-x2-stage16';

/**
 * The load's variant (load-plan.ts), one dispatch a batch of 8,192 frames: a parse pass writes every block's
 * sequences to a list and the lanes copy from it (`listg`). Fourteenth session, H200, full scan: decode
 * 110.3 ms (175 GB/s) against 116.9 for the default with the same dispatches; with dispatches of 4,096 frames the
 * list gains nothing (the parse pass costs ~0.24 ms a dispatch, chiefly its longest block's serial walk).
 * Sixteenth session: one warp a block and a frame a workgroup (`gf-wg32-x1`: the lanes copy from the list 32 at a
 * time, and no group idles in a frame's last round): 3.385-3.409 ms a batch of 8,192 against 3.428-3.438 for
 * `wg16-x2` in the same rounds (four runs), 108.9-109.0 ms of decode in a full load against 110.0-110.6, and half
 * the block scratch (64 MiB). The same list with 16 lanes x 2 frames at once is slower (145 GB/s: the groups of
 * two frames walk in lockstep; docs/performance.md, sixteenth session).
 * Twenty-first session (`zp`: the unshuffle skips the all-zero quads of bit planes): decode 89.7-89.8 ms a scan in
 * the load against 93.5-93.7 for the same variant without it, one call on an H100 (the H200 not started; four
 * loads each).
 * Twenty-second session (H100): two other copies of the listed blocks, both exact and dropped: a row of words a
 * pass with each lane resolving its word through the list (13.8 ms a batch against 3.6), and a sequence's literals
 * and match in one pass (27 % fewer passes, no faster); this variant's knobs (ep, stage, persist) flat within 1 %.
 * Twenty-third session (`ba`: a block below 256 unshuffled a plane word at a time and audited on its bit planes),
 * H200, one call, two processes each (4 loads): decode 85.8-85.9 ms a scan in the load against 88.9-89.1 without
 * it, GPU work 113.9 ms against 117.0-117.1.
 * Twenty-fifth session (H100, one call): `zt` 88.1-88.2 ms of decode a scan in the load against 86.5-86.6 without it;
 * outside the load (`bench decode`, own parse pass) this variant 3.995 ms a batch, `wg16-x2` 3.782.
 * Twenty-seventh session (`mb`: the histogram's values 4..15 by popcounts of the bit planes), H100, two calls, 4
 * loads each: decode 86.0-86.7 ms a scan in the load against 89.5-90.2 without it (both with the 16-byte output
 * stores of that session, which took 92.2-92.8 to 89.5-90.2 in the same call).
 * Twenty-ninth session (`qx`: the `ba` stores exchanged within quads, whole sectors), H100, one call, 2 loads each:
 * decode 85.4-85.5 ms a scan against 86.5 (packed slot), 85.3 against 85.7 (byte planes, the load's default).
 * It needs the `subgroups` feature: LOAD_DECODE_VARIANT_NO_SUBGROUPS elsewhere.
 */
export const DEFAULT_LOAD_DECODE_VARIANT = 'scratch-keep-pat-listg-gf-zp-ba-mb-qx-wg32-x1-stage16';

/** DEFAULT_LOAD_DECODE_VARIANT without `qx`, for a device without the `subgroups` feature: the same numbers. */
export const LOAD_DECODE_VARIANT_NO_SUBGROUPS = 'scratch-keep-pat-listg-gf-zp-ba-mb-wg32-x1-stage16';

/** Storage buffers per shader stage every WebGPU device offers (the limit's default). */
export const DEFAULT_STORAGE_BUFFERS_PER_STAGE = 8;

/** Whether the variant's decode copies from the parse pass's lists (bslz4-decode-list.wgsl; not `listx`). */
export function readsLists(v: DecodeVariant): boolean {
  return v.shader === 'multi' && v.list && v.listRead !== 'none';
}

/**
 * Storage buffers a stage of the variant's decode pass binds: 10 for the list variants (bslz4-decode-list.wgsl
 * binds the parse pass's lists), else 8.
 */
export function decodeStorageBuffers(variant: string | DecodeVariant): number {
  const v = typeof variant === 'string' ? parseDecodeVariant(variant) : variant;
  return readsLists(v) ? 10 : DEFAULT_STORAGE_BUFFERS_PER_STAGE;
}

/**
 * Refuses ('budget') a variant whose decode binds more storage buffers than a device with `storageBuffersPerStage`
 * (its maxStorageBuffersPerShaderStage; default 8) allows: the load's plan checks it before allocating, the
 * decode pass for every other caller.
 */
export function checkDecodeStorageBuffers(
  variant: string | DecodeVariant,
  storageBuffersPerStage = DEFAULT_STORAGE_BUFFERS_PER_STAGE,
): void {
  const v = typeof variant === 'string' ? parseDecodeVariant(variant) : variant;
  const buffers = decodeStorageBuffers(v);
  if (buffers > storageBuffersPerStage) {
    throw new StemflowError(
      'budget',
      `decode variant ${v.name} binds ${buffers} storage buffers, more than this GPU allows in a shader stage (${storageBuffersPerStage})`,
    );
  }
}

/**
 * The load's decode variant on a device with `storageBuffersPerStage` (its maxStorageBuffersPerShaderStage) and,
 * or without, the `subgroups` feature: DEFAULT_LOAD_DECODE_VARIANT where the device binds its 10 storage buffers
 * (Chrome offers 10 on Apple Silicon and NVIDIA) and has subgroups, LOAD_DECODE_VARIANT_NO_SUBGROUPS where it
 * binds 10 without them, else DEFAULT_DECODE_VARIANT (8, every device): the same numbers, ~7% slower on the H200.
 */
export function loadDecodeVariant(
  storageBuffersPerStage = DEFAULT_STORAGE_BUFFERS_PER_STAGE,
  subgroups = false,
): string {
  if (storageBuffersPerStage < decodeStorageBuffers(DEFAULT_LOAD_DECODE_VARIANT))
    return DEFAULT_DECODE_VARIANT;
  return subgroups ? DEFAULT_LOAD_DECODE_VARIANT : LOAD_DECODE_VARIANT_NO_SUBGROUPS;
}

/** Bytes of global scratch per block in flight of a 'scratch' variant (one decoded 8 KiB block). */
export const DECODE_SCRATCH_BLOCK_BYTES = 8192;
/** Frames per dispatch of the decode pass unless the job says otherwise. */
export const DECODE_FRAMES_PER_DISPATCH = 4096;

export interface DecodeVariant {
  name: string;
  /** 'fused': bslz4-decode.wgsl; 'multi': bslz4-decode-multi.wgsl. */
  shader: 'fused' | 'multi';
  /** Lanes per block. */
  lanes: number;
  /** Blocks decoded at once per workgroup (1 for 'fused'). */
  groups: number;
  stageWords: number;
  /** Decoded blocks in a global scratch buffer ('multi' only). */
  scratch: boolean;
  /** Small-offset matches from the last 8 output bytes in registers ('multi' only). */
  window: boolean;
  /** Partial words merged with the lane's last written word in registers, not read back ('multi' only). */
  keep: boolean;
  /** Matches of offset 1 to 3 built from their pattern in registers ('multi' only). */
  pattern: boolean;
  /** The unshuffle reads whole plane words ('multi' only). */
  unshuffleWords: boolean;
  /** Epochs between checks that the round is done ('multi' only; 8 in 'fused'). */
  epochs: number;
  /** Persistent workgroups per dispatch (undefined: one per frame). */
  workgroups?: number;
  /** Blocks copied from the parse pass's sequence lists ('multi' only). */
  list: boolean;
  /** Sequences per block's list. */
  listCap: number;
  /** How the shader reads the lists: from workgroup memory, from global memory, or not at all (parse only). */
  listRead: 'stage' | 'global' | 'none';
  /** Slot words a parse thread loads at once (1 or 4). */
  parseWords: number;
  /** Frames per dispatch unless the job says otherwise (undefined: DECODE_FRAMES_PER_DISPATCH). */
  framesPerDispatch?: number;
  /** Each group decodes a frame of its own ('multi' only): a workgroup takes `groups` frames at once. */
  frameGroups: boolean;
  /** The unshuffle skips the quads of bit planes that are all zero ('multi' with frameGroups only). */
  planeSkip: boolean;
  /** With planeSkip: blocks below 256 audited on their bit planes, a plane word at a time (`ba`). */
  bitAudit: boolean;
  /** With planeSkip: the nonzero quads of planes noted as the block is written, not read again (`zt`). */
  zeroTrack: boolean;
  /** With bitAudit: the histogram's values 4..15 counted by popcounts of the bit planes (`mb`). */
  midBins: boolean;
  /** The output a word a store even where 16 bytes a store would do ('multi' only; `sw`). */
  wordStores: boolean;
  /**
   * With bitAudit and a list: the stores of a block below 256 exchanged among the lanes of a quad so that each
   * store instruction writes whole sectors (`qx`; the `subgroups` feature; 16-byte or byte-plane output).
   */
  quadStores: boolean;
}

/** Frames a workgroup of the variant decodes at once (one, or one a group with `gf`). */
export function framesPerWorkgroup(v: DecodeVariant): number {
  return v.frameGroups ? v.groups : 1;
}

/** The fused shader (bslz4-decode.wgsl) with `lanes` lanes a workgroup and `stageWords` staged words a block. */
export function fusedDecodeVariant(lanes: number, stageWords: number): DecodeVariant {
  return {
    name: `wg${lanes}-stage${stageWords}`,
    shader: 'fused',
    lanes,
    groups: 1,
    stageWords,
    scratch: false,
    window: false,
    keep: false,
    pattern: false,
    unshuffleWords: false,
    epochs: 8,
    list: false,
    listCap: 0,
    listRead: 'stage',
    parseWords: 1,
    frameGroups: false,
    planeSkip: false,
    bitAudit: false,
    zeroTrack: false,
    midBins: false,
    wordStores: false,
    quadStores: false,
  };
}

export function parseDecodeVariant(name: string): DecodeVariant {
  const parts = name === 'base' ? [] : name.split('-');
  let lanes: number | undefined;
  let stageWords: number | undefined;
  let groups: number | undefined;
  let workgroups: number | undefined;
  let epochs: number | undefined;
  let scratch = false;
  let win = false;
  let keep = false;
  let pattern = false;
  let unshuffleWords = false;
  let multi = false;
  let list = false;
  let listRead: DecodeVariant['listRead'] = 'stage';
  let listCap: number | undefined;
  let parseWords = 1;
  let framesPerDispatch: number | undefined;
  let frameGroups = false;
  let planeSkip = false;
  let bitAudit = false;
  let zeroTrack = false;
  let midBins = false;
  let wordStores = false;
  let quadStores = false;
  const int = (part: string, text: string) => {
    const v = Number(text);
    if (!Number.isInteger(v) || v < 1)
      throw new StemflowError('invalid', `Decode variant '${name}': '${part}' needs a positive integer.`);
    return v;
  };
  for (const part of parts) {
    const m = /^(wg|stage|x|persist|ep|cap|pw|fpd)(\d+)$/.exec(part);
    if (m?.[1] === 'wg') lanes = int(part, m[2]);
    else if (m?.[1] === 'stage') stageWords = int(part, m[2]);
    else if (m?.[1] === 'x') groups = int(part, m[2]);
    else if (m?.[1] === 'persist') workgroups = int(part, m[2]);
    else if (m?.[1] === 'ep') epochs = int(part, m[2]);
    else if (m?.[1] === 'cap') listCap = int(part, m[2]);
    else if (m?.[1] === 'pw' && (m[2] === '1' || m[2] === '4')) parseWords = Number(m[2]);
    else if (m?.[1] === 'fpd') framesPerDispatch = int(part, m[2]);
    else if (part === 'list') list = true;
    else if (part === 'listg' || part === 'listx') {
      list = true;
      listRead = part === 'listg' ? 'global' : 'none';
    } else if (part === 'scratch') scratch = true;
    else if (part === 'win') win = true;
    else if (part === 'keep') keep = true;
    else if (part === 'pat') pattern = true;
    else if (part === 'u4') unshuffleWords = true;
    else if (part === 'gf') frameGroups = true;
    else if (part === 'zp') planeSkip = true;
    else if (part === 'ba') bitAudit = true;
    else if (part === 'zt') zeroTrack = true;
    else if (part === 'mb') midBins = true;
    else if (part === 'sw') wordStores = true;
    else if (part === 'qx') quadStores = true;
    else if (part === 'multi') multi = true;
    else
      throw new StemflowError(
        'invalid',
        `Unknown decode variant part '${part}' in '${name}' (base, wg<N>, stage<N>, x<N>, scratch, win, keep, pat, u4, gf, zp, ba, zt, mb, sw, qx, multi, ep<N>, persist<N>, list, listg, listx, cap<N>, pw1, pw4, fpd<N>).`,
      );
  }
  if (list && win) {
    throw new StemflowError('invalid', `Decode variant '${name}': 'list' does not combine with 'win'.`);
  }
  if (planeSkip && (!frameGroups || unshuffleWords || (groups ?? 1) > MAX_PLANE_SKIP_GROUPS)) {
    throw new StemflowError(
      'invalid',
      `Decode variant '${name}': 'zp' needs 'gf', at most ${MAX_PLANE_SKIP_GROUPS} groups and no 'u4'.`,
    );
  }
  if (bitAudit && !planeSkip) {
    throw new StemflowError('invalid', `Decode variant '${name}': 'ba' needs 'zp'.`);
  }
  if (midBins && !bitAudit) {
    throw new StemflowError('invalid', `Decode variant '${name}': 'mb' needs 'ba'.`);
  }
  if (quadStores && (!bitAudit || !list || listRead === 'none' || (lanes ?? 32) % 4 !== 0 || wordStores)) {
    throw new StemflowError(
      'invalid',
      `Decode variant '${name}': 'qx' needs 'ba', a list that the decode reads, lanes a multiple of 4 and no 'sw'.`,
    );
  }
  if (zeroTrack && !planeSkip) {
    throw new StemflowError('invalid', `Decode variant '${name}': 'zt' needs 'zp'.`);
  }
  if ((listCap !== undefined && !list) || (listCap !== undefined && listCap > MAX_LIST_CAP)) {
    throw new StemflowError(
      'invalid',
      `Decode variant '${name}': 'cap<N>' needs 'list' and N <= ${MAX_LIST_CAP}.`,
    );
  }
  if (
    multi ||
    list ||
    scratch ||
    win ||
    keep ||
    pattern ||
    unshuffleWords ||
    frameGroups ||
    wordStores ||
    groups !== undefined ||
    epochs !== undefined
  ) {
    return {
      name,
      shader: 'multi',
      lanes: lanes ?? 32,
      groups: groups ?? 1,
      stageWords: stageWords ?? 512,
      scratch,
      window: win,
      keep,
      pattern,
      unshuffleWords,
      epochs: epochs ?? 8,
      workgroups,
      list,
      listCap: listCap ?? DEFAULT_LIST_CAP,
      listRead,
      parseWords,
      framesPerDispatch,
      frameGroups,
      planeSkip,
      bitAudit,
      zeroTrack,
      midBins,
      wordStores,
      quadStores,
    };
  }
  return {
    ...fusedDecodeVariant(lanes ?? 64, stageWords ?? 1),
    name,
    workgroups,
    listCap: DEFAULT_LIST_CAP,
    framesPerDispatch,
  };
}
