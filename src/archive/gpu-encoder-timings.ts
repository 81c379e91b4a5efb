/**
 * Where the GPU archive encoder's time goes (gpu-encoder.ts): stage sums over records, start-up, and one
 * timeline entry per record (printed by `stemflow bench convert`).
 */
export interface GpuEncoderTimings {
  records: number;
  /** Host reads of the stored chunks, straight into mapped staging memory (includes waiting for the map). */
  readMs: number;
  /** writeBuffer of the model and offsets; unmapping the chunks' staging. */
  uploadMs: number;
  /** Submit to readback of decode + pixel sums (decode alone in profile mode). */
  decodeMs: number;
  /** Pixel sums alone (profile mode only; otherwise inside decodeMs). */
  sumsMs: number;
  /** Host: class map, audit, frequencies and tables. */
  modelMs: number;
  histogramMs: number;
  encodeMs: number;
  /** Compaction alone (profile mode only; otherwise inside readbackMs). */
  compactMs: number;
  /** Compaction + copy of the data words to mapped memory, until mapped. */
  readbackMs: number;
  /** Copying the mapped data words into host memory (records whose readback was not lent). */
  hostCopyMs: number;
  /** Records whose words were lent in their mapped readback (no host copy). */
  lentRecords: number;
  /** Start-up: planning and creating the slots' buffers (once per encoder state). */
  setupMs: number;
  /** Start-up: records waiting, chunks read, for the stats and encode pipelines to compile. */
  pipelineWaitMs: number;
  /** Creating output readbacks (each once, when a record first needs it). */
  readbackCreateMs: number;
  /** `lentOnly`: records waiting for a lent readback to come back from the converter. */
  loanWaitMs: number;
  /** Start-up: creating the slots after the first (this thread, after the first record's decode is submitted; one error scope a slot). */
  laterSlotsMs: number;
  /** Start-up, inside setupMs: the first slot's buffers; the decode pass and its scratch; the scope's pop. */
  firstSlotMs: number;
  decodeSetupMs: number;
  setupScopeMs: number;
  /** One entry per record encoded, in the order they finished. */
  timeline: RecordTimeline[];
}

/** Where one record's time went (ms). Records overlap: their GPU waits include other records' passes. */
export interface RecordTimeline {
  firstFrame: number;
  /** Start and end, ms after the encoder was created. */
  startMs: number;
  endMs: number;
  /** Waiting for the chunks' staging: the record before in the slot has its chunks on the GPU, mapped again. */
  stagingWaitMs: number;
  /** Reading the stored chunks into the mapped staging. */
  readMs: number;
  /** Waiting, chunks read, for the record before in the same slot to finish. */
  slotWaitMs: number;
  /** Host model: class map, audit, frequencies, tables. */
  modelMs: number;
  /** Host copy of the data words (0 when the readback was lent). */
  copyMs: number;
  /** Waiting for the GPU's results: sums, histogram, lane counts, data words. */
  gpuWaitMs: number;
  /** The same, step by step (the first record's show its start-up: first uses, lazy clears). */
  gpuWaits: { sums: number; histogram: number; lanes: number; words: number };
  /** Waiting, chunks read, for the stats and encode pipelines. */
  pipelineWaitMs: number;
  /** Waiting for its output readback to be created (0 when one was ready). */
  readbackCreateMs: number;
  /** `lentOnly`: waiting for a lent readback to come back (0 when one was free). */
  loanWaitMs: number;
  /** Waiting for the shared lane scratch: the record before to submit its compaction. */
  laneTurnWaitMs: number;
  lent: boolean;
}
