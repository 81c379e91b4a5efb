/**
 * The job and pass interfaces of the bslz4-decode pass (bslz4-decode.ts, which re-exports them): what a caller
 * binds, and what the pass records. Buffer formats: docs/pass-graph.md.
 */
import type { ElemSize } from '../../kernels/bslz4-decode.ts';
import type { DecodeVariant } from './bslz4-decode-variants.ts';

export interface Bslz4DecodeJob {
  /** The batch's chunks back to back (bytes in u32 words), STORAGE. */
  compressed: GPUBuffer;
  /** Bytes of `compressed` that hold data (default its size); index entries must stay inside. */
  compressedBytes?: number;
  /** (byteOffset, byteSize) u32 pairs per batch frame, STORAGE. */
  index: GPUBuffer;
  /** u32 per detector pixel, nonzero = flagged (excluded from totals and audit), STORAGE. */
  flags: GPUBuffer;
  /** frameCount * wordsPerFrame u32 words, STORAGE. */
  decoded: GPUBuffer;
  /** u32 per frame at firstFrame + f, STORAGE. */
  errors: GPUBuffer;
  /** (lo, hi) u32 pair per frame at firstFrame + f, STORAGE. */
  totals: GPUBuffer;
  /** AUDIT_LAYOUT.words u32 words (createAuditBuffer), accumulated into; clear it once per load. */
  audit: GPUBuffer;
  frameCount: number;
  /** Pixels per frame. */
  pixels: number;
  /** Index in `errors` and `totals` of the batch's first frame (its global frame number). Default 0. */
  firstFrame?: number;
  /** Default ceil(pixels * elemSize / 4); extra words are written 0. */
  wordsPerFrame?: number;
  /** Frames per dispatch (default 4096). */
  maxFramesPerDispatch?: number;
  /** Workgroups per dispatch (default one per frame; fewer are persistent and take frames in a grid stride). */
  workgroupsPerDispatch?: number;
  /**
   * A list variant: which of the pass's list sets (0 or 1; `reserve` with listSets 2 for set 1) the parse writes
   * and the decode reads (default 0).
   */
  listSet?: number;
  /** Entry of `index` that holds the job's frame 0 (default 0): the load keeps two batches' entries in one buffer. */
  indexBase?: number;
  /** A list variant: this job's lists are already in its list set (parsed by `encodeParse`, or `ahead`). */
  parsed?: boolean;
  /**
   * A list variant, one dispatch: the same dispatch also parses the next batch (bslz4-decode-list-ahead.wgsl) into
   * the other list set, from the same `compressed` and `index` buffers: its frames, their first index entry,
   * and the compressed bytes its entries may reach ([0, slotBytes)). Its decode then passes `parsed`.
   */
  ahead?: { frameCount: number; indexBase: number; slotBytes: number };
  /**
   * The flags buffer is the one the previous job of this pass packed (its contents unchanged since, that job
   * submitted): the multi shader's flag bits are not packed again if they are still in the scratch. The load
   * passes it from its second batch on (one pack a load instead of one a batch).
   */
  flagsPacked?: boolean;
}

export interface Bslz4DecodePass {
  readonly elemSize: ElemSize;
  readonly workgroupSize: number;
  readonly variant: DecodeVariant;
  /** Records the pass into `encoder`; destroy the returned parameter buffer after submitting. */
  encode(encoder: GPUCommandEncoder, job: Bslz4DecodeJob): GPUBuffer;
  /**
   * A list variant: records the parse pass of `job` alone (its own compute pass) into list set `job.listSet`;
   * the decode of the same job then passes `parsed: true`. One dispatch's frames at most.
   */
  encodeParse(encoder: GPUCommandEncoder, job: Bslz4DecodeJob): GPUBuffer;
  /**
   * A list variant: the lists the parse writes (set s from block entry s * entries; COPY_SRC, for tests and
   * tools that read them back), or null before the first job or `reserve`.
   */
  listBuffers(): { seqs: GPUBuffer; info: GPUBuffer; entries: number; sets: number } | null;
  /** Encodes and submits the pass on its own. */
  run(job: Bslz4DecodeJob): void;
  /**
   * Allocates now the scratch (and a list variant's lists, for frames of `pixels` pixels) that batches of up to
   * `frames` frames need (call it inside the caller's out-of-memory scope); returns its bytes
   * (decodeScratchBytes, what the memory plans count).
   */
  reserve(
    frames: number,
    options: {
      pixels: number;
      maxFramesPerDispatch?: number;
      workgroupsPerDispatch?: number;
      /** A list variant: list sets to allocate (default 1; 2 to parse a batch ahead). */
      listSets?: number;
    },
  ): number;
  /** Frees the scratch buffer of a 'scratch' variant (after the submitted work; a later encode makes another). */
  destroy(): void;
}
