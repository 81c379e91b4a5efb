import { chunkDecoderFor, decodeChunk } from '../codec/filters';
import { StemflowError, throwIfAborted, withErrorContext } from '../errors';
import { type ChunkTable, type DatasetInfo, type Hdf5File, openHdf5 } from '../io/hdf5';
import type { AcquisitionSummary } from '../workers/acquisition-api';
import type { AcquisitionSource, FrameLocation, StoredBatch } from './acquisition-source';
import {
  describeFilters,
  frameBytesOf,
  gpuCodecOf,
  type Part,
  readPixelMask,
  sourceDtype,
  storedBytes,
  unravel,
} from './hdf5-parts';
import type { InputFile } from './input-file';
import { chooseScan, planAcquisition } from './resolve';

export interface OpenOptions {
  /** The scan shape [rows, cols] when the user gives it. */
  scan?: [number, number];
  /** The dataset path inside a single file, when it holds several candidates. */
  dataset?: string;
  signal?: AbortSignal;
}

const MAX_READ_BYTES = 16 * 1024 * 1024;

/** Opens the dropped files as one acquisition: metadata via h5wasm, chunk byte ranges via our reader. */
export async function openAcquisition(
  inputs: InputFile[],
  options: OpenOptions = {},
): Promise<AcquisitionSource> {
  const plan = await planAcquisition(inputs, options.dataset);
  const parts: Part[] = [];
  let first = 0;
  for (const p of plan.parts) {
    try {
      const hdf5 = await openHdf5(p.input.bytes, options.signal);
      const info = await hdf5.dataset(p.dataset, options.signal);
      const part = await indexPart(p.input, hdf5, info, first, options.signal);
      parts.push(part);
      first += part.frames;
    } catch (e) {
      throw withErrorContext(e, { file: p.input.name });
    }
  }
  const ref = parts[0];
  const detector = ref.info.shape.slice(-2) as [number, number];
  const dtype = sourceDtype(ref.info, ref.input.name);
  for (const part of parts) {
    const det = part.info.shape.slice(-2);
    if (det[0] !== detector[0] || det[1] !== detector[1]) {
      throw new StemflowError(
        'mismatch',
        `Its frames are ${det[0]} x ${det[1]} but ${ref.input.name} has ${detector[0]} x ${detector[1]}`,
        { file: part.input.name },
      );
    }
    if (sourceDtype(part.info, part.input.name) !== dtype) {
      throw new StemflowError(
        'mismatch',
        `Its counts are ${sourceDtype(part.info, part.input.name)} but ${ref.input.name} has ${dtype}`,
        { file: part.input.name },
      );
    }
  }
  const frameCount = first;
  const { scan, fromMetadata } = chooseScan(frameCount, options.scan, plan.scanHint);
  const pixelMask = plan.pixelMask ? await readPixelMask(plan, detector, options.signal) : null;
  const summary: AcquisitionSummary = {
    name: plan.name,
    kind: plan.kind,
    files: parts.map((p) => ({
      name: p.input.name,
      size: p.input.size,
      dataset: p.info.path,
      frames: p.frames,
    })),
    scan,
    scanFromMetadata: fromMetadata,
    detector,
    dtype,
    frameCount,
    compression: describeFilters(ref.info),
    chunkIndex: ref.info.layout === 'chunked' ? (ref.info.chunkIndex ?? 'unknown') : ref.info.layout,
    compressedBytes: parts.reduce((sum, p) => sum + storedBytes(p), 0),
    flaggedPixels: pixelMask ? pixelMask.reduce((n, v) => n + (v !== 0 ? 1 : 0), 0) : 0,
    calibration: plan.calibration,
  };
  return new Hdf5Acquisition(summary, parts, pixelMask, inputs);
}

async function indexPart(
  input: InputFile,
  hdf5: Hdf5File,
  info: DatasetInfo,
  first: number,
  signal?: AbortSignal,
): Promise<Part> {
  const rank = info.shape.length;
  if (rank !== 3 && rank !== 4) {
    throw new StemflowError(
      'invalid',
      `The dataset ${info.path} has ${rank} dimensions; 4D-STEM data needs 3 (frames, rows, cols) or 4`,
    );
  }
  sourceDtype(info, input.name);
  const lead = info.shape.slice(0, rank - 2);
  const frames = lead.reduce((a, b) => a * b, 1);
  let table: ChunkTable | null = null;
  let chunkLead = lead.map(() => 1);
  let compact: Uint8Array | null = null;
  if (info.layout === 'chunked') {
    const chunk = info.chunkShape!;
    if (chunk[rank - 2] < info.shape[rank - 2] || chunk[rank - 1] < info.shape[rank - 1]) {
      throw new StemflowError(
        'unsupported',
        `The dataset ${info.path} is chunked as ${chunk.join(' x ')}, which splits a diffraction frame across chunks; only chunks holding whole frames are supported`,
      );
    }
    chunkLead = chunk.slice(0, rank - 2);
    table = await hdf5.chunkTable(info, signal);
  } else if (info.layout === 'compact') {
    compact = await hdf5.readDataset(info, chunkDecoderFor(info.dtype.size), signal);
  } else if (info.contiguousAddress === undefined || info.contiguousAddress < 0) {
    throw new StemflowError('corrupt', `The contiguous dataset ${info.path} has no data address`);
  } else if (info.contiguousAddress < 48) {
    // The first 48 bytes always hold the file signature and superblock: data there means a corrupt address.
    throw new StemflowError(
      'corrupt',
      `The contiguous dataset ${info.path} claims its data starts inside the file's superblock`,
    );
  } else if (info.contiguousAddress + frames * frameBytesOf(info) > input.size) {
    throw new StemflowError(
      'truncated',
      `The data of ${info.path} runs past the end of the file; it is probably truncated`,
    );
  }
  return { input, hdf5, info, table, frames, first, lead, chunkLead, compact };
}

class Hdf5Acquisition implements AcquisitionSource {
  readonly frameCount: number;
  readonly frameBytes: number;
  readonly storedCodec: AcquisitionSource['storedCodec'];

  constructor(
    readonly summary: AcquisitionSummary,
    private readonly parts: Part[],
    readonly pixelMask: Uint32Array | null,
    /** Every file it was opened with: the data files and those holding only metadata (an ARINA master). */
    private readonly inputs: readonly InputFile[],
  ) {
    this.frameCount = summary.frameCount;
    this.frameBytes = frameBytesOf(parts[0].info);
    this.storedCodec = gpuCodecOf(parts);
  }

  /** Located once (a chunk-table walk per frame), then copied for each caller. */
  private sizes: Uint32Array | null = null;

  storedSizes(): Uint32Array {
    if (!this.sizes) {
      this.sizes = new Uint32Array(this.frameCount);
      for (let i = 0; i < this.frameCount; i++) this.sizes[i] = this.locate(i).size;
    }
    return this.sizes.slice();
  }

  async readStored(
    start: number,
    count: number,
    signal?: AbortSignal,
    into?: Uint8Array,
  ): Promise<StoredBatch> {
    if (!this.storedCodec.gpu) throw new StemflowError('unsupported', this.storedCodec.reason);
    if (count < 0 || start < 0 || start + count > this.frameCount) {
      throw new StemflowError(
        'invalid',
        `Frames ${start}..${start + count - 1} are outside 0..${this.frameCount - 1}`,
      );
    }
    const locs = Array.from({ length: count }, (_, k) => this.locate(start + k));
    const offsets = new Uint32Array(count);
    const sizes = new Uint32Array(count);
    let total = 0;
    for (let k = 0; k < count; k++) {
      offsets[k] = total;
      sizes[k] = locs[k].address < 0 ? 0 : locs[k].size;
      total += sizes[k];
    }
    if (into && into.byteLength < total) {
      throw new StemflowError(
        'invalid',
        `The batch needs ${total} bytes but the buffer holds ${into.byteLength}`,
      );
    }
    const bytes = into ? into.subarray(0, total) : new Uint8Array(total);
    // One read per run of chunks stored back to back in one file (ARINA writes them in frame order), of at
    // most MAX_READ_BYTES; the runs are read concurrently (several threads copy from the page cache at once).
    const reads: Promise<void>[] = [];
    let k = 0;
    while (k < count) {
      throwIfAborted(signal);
      let end = k + 1;
      while (
        end < count &&
        locs[end].file === locs[k].file &&
        locs[end].address === locs[end - 1].address + locs[end - 1].size &&
        offsets[end] - offsets[k] < MAX_READ_BYTES
      )
        end++;
      const first = locs[k];
      const length = offsets[end - 1] + sizes[end - 1] - offsets[k];
      const part = this.parts[first.file];
      const frame = start + k;
      if (first.address < 0) {
        throw new StemflowError('corrupt', 'The chunk of this frame was never written (no stored data)', {
          file: part.input.name,
          frame,
        });
      }
      const at = offsets[k];
      const src = part.input.bytes;
      // Straight into the batch (a mapped staging buffer) where the source can; else read, then copied.
      const read = src.readInto
        ? src.readInto(first.address, bytes.subarray(at, at + length), signal)
        : src.read(first.address, length, signal).then((data) => bytes.set(data, at));
      reads.push(
        read.catch((e) => {
          throw withErrorContext(e, { file: part.input.name, frame });
        }),
      );
      k = end;
    }
    await Promise.all(reads);
    return { bytes, offsets, sizes };
  }

  private partOf(index: number): Part {
    if (!Number.isInteger(index) || index < 0 || index >= this.frameCount) {
      throw new StemflowError('invalid', `Frame ${index} is outside 0..${this.frameCount - 1}`);
    }
    let lo = 0;
    let hi = this.parts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.parts[mid].first <= index) lo = mid;
      else hi = mid - 1;
    }
    return this.parts[lo];
  }

  locate(index: number): FrameLocation {
    const part = this.partOf(index);
    const file = this.parts.indexOf(part);
    const local = index - part.first;
    if (!part.table) {
      // Contiguous: each frame is its own stored range. Compact: frames live inside the decoded dataset.
      const compact = part.compact !== null;
      return {
        file,
        address: compact ? -1 : part.info.contiguousAddress! + local * this.frameBytes,
        size: this.frameBytes,
        filterMask: 0,
        offsetInChunk: compact ? local * this.frameBytes : 0,
        chunkBytes: this.frameBytes,
      };
    }
    // Scan coordinates of the frame, then its chunk in the grid and its place inside that chunk.
    const coords = unravel(local, part.lead);
    let linear = 0;
    let inner = 0;
    for (let d = 0; d < coords.length; d++) {
      linear = linear * part.table.grid[d] + Math.floor(coords[d] / part.chunkLead[d]);
      inner = inner * part.chunkLead[d] + (coords[d] % part.chunkLead[d]);
    }
    for (let d = coords.length; d < part.table.grid.length; d++) linear *= part.table.grid[d];
    const framesPerChunk = part.chunkLead.reduce((a, b) => a * b, 1);
    return {
      file,
      address: part.table.address[linear],
      size: part.table.size[linear],
      filterMask: part.table.filterMask[linear],
      offsetInChunk: inner * this.frameBytes,
      chunkBytes: framesPerChunk * this.frameBytes,
    };
  }

  async readFrames(start: number, count: number, signal?: AbortSignal): Promise<Uint8Array> {
    if (count < 0 || start + count > this.frameCount) {
      throw new StemflowError(
        'invalid',
        `Frames ${start}..${start + count - 1} are outside 0..${this.frameCount - 1}`,
      );
    }
    const out = new Uint8Array(count * this.frameBytes);
    let i = 0;
    while (i < count) {
      throwIfAborted(signal);
      // Gather a run of frames whose chunks lie back to back in one file: one read, then decode each chunk.
      const locs: FrameLocation[] = [this.locate(start + i)];
      let end = i + 1;
      let runBytes = locs[0].size;
      while (end < count && locs[0].address >= 0) {
        const next = this.locate(start + end);
        const prev = locs[locs.length - 1];
        const sameChunk = next.address === prev.address;
        const adjacent = next.address === prev.address + prev.size;
        if (
          next.file !== prev.file ||
          !(sameChunk || adjacent) ||
          runBytes + (sameChunk ? 0 : next.size) > MAX_READ_BYTES
        )
          break;
        if (!sameChunk) runBytes += next.size;
        locs.push(next);
        end++;
      }
      await this.readRun(start + i, locs, out.subarray(i * this.frameBytes, end * this.frameBytes), signal);
      i = end;
    }
    return out;
  }

  private async readRun(
    firstFrame: number,
    locs: FrameLocation[],
    out: Uint8Array,
    signal?: AbortSignal,
  ): Promise<void> {
    const part = this.parts[locs[0].file];
    const fb = this.frameBytes;
    if (part.compact) {
      for (let k = 0; k < locs.length; k++)
        out.set(part.compact.subarray(locs[k].offsetInChunk, locs[k].offsetInChunk + fb), k * fb);
      return;
    }
    if (locs[0].address < 0) {
      // HDF5 would return fill values here; for a detector that means a frame that was never recorded, and
      // showing zeros as counts would be a wrong value shown as right. Say so instead.
      throw new StemflowError(
        'corrupt',
        'The chunk of this frame was never written to the file (HDF5 would return fill values, not counts)',
        { file: part.input.name, frame: firstFrame },
      );
    }
    const base = locs[0].address;
    const last = locs[locs.length - 1];
    const bytes = await part.input.bytes.read(base, last.address + last.size - base, signal);
    let decoded: Uint8Array | null = null;
    let decodedAddress = -1;
    for (let k = 0; k < locs.length; k++) {
      const loc = locs[k];
      if (loc.address !== decodedAddress) {
        const stored = bytes.subarray(loc.address - base, loc.address - base + loc.size);
        try {
          decoded = part.table
            ? await decodeChunk(
                stored,
                part.info.filters,
                part.info.dtype.size,
                loc.chunkBytes,
                loc.filterMask,
              )
            : stored;
        } catch (e) {
          throw withErrorContext(e, { file: part.input.name, frame: firstFrame + k });
        }
        if (decoded.byteLength !== loc.chunkBytes) {
          throw new StemflowError(
            'corrupt',
            `A chunk decoded to ${decoded.byteLength} bytes instead of ${loc.chunkBytes}`,
            {
              file: part.input.name,
              frame: firstFrame + k,
            },
          );
        }
        decodedAddress = loc.address;
      }
      out.set(decoded!.subarray(loc.offsetInChunk, loc.offsetInChunk + fb), k * fb);
    }
  }

  /** Closes every file it was opened with (the master too, which no frame is read from). */
  async close(): Promise<void> {
    const inputs = new Set([...this.inputs, ...this.parts.map((p) => p.input)]);
    await Promise.all([...inputs].map((input) => input.close?.()));
  }
}
