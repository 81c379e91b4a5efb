/**
 * Target 4: the WGSL bitshuffle/LZ4 decode pass (src/gpu/passes/bslz4-decode.ts) in Node + Dawn. One case is
 * a batch of many mutated chunks of one shape (and a few index entries that reach outside the slot), decoded
 * in one pass; the GPU's per-frame error codes, decoded words, frame totals and audit must equal the CPU
 * twin's (src/kernels/bslz4-decode.ts) exactly, the twin must agree with the CPU codec (bslz4Decode) frame by
 * frame, and an unmutated chunk must decode to its h5py-checked reference.
 */
import { bslz4Decode } from '../codec/bslz4.ts';
import { isStemflowError } from '../errors.ts';
import { acquireDevice, type GpuContext } from '../gpu/device.ts';
import { nodeGpu } from '../gpu/node-gpu.ts';
import {
  type Bslz4DecodePass,
  createAuditBuffer,
  createBslz4DecodePass,
  readDecodeResults,
} from '../gpu/passes/bslz4-decode.ts';
import { loadDecodeVariant } from '../gpu/passes/bslz4-decode-variants.ts';
import { bslz4DecodeBatch, type ElemSize, minWordsPerFrame } from '../kernels/bslz4-decode.ts';
import { decodeErrorName } from '../kernels/decode-errors.ts';
import { type ChunkPool, loadChunkPool, sameBytes } from './chunk-pool.ts';
import { mutateChunk } from './mutate-chunk.ts';
import { bump, type CaseReport, describeThrown, type Finding } from './report.ts';
import { Rng } from './rng.ts';
import { caseDir, saveInput } from './save.ts';

export interface GpuState {
  pool: ChunkPool;
  /** Chunks per batch. */
  batch: number;
  ctx: GpuContext | null;
  passes: Map<number, Bslz4DecodePass>;
}

export async function prepareGpu(
  batch = Number(process.env.STEMFLOW_FUZZ_GPU_BATCH ?? 256),
): Promise<GpuState> {
  return { pool: await loadChunkPool(), batch, ctx: null, passes: new Map() };
}

export interface GpuBatch {
  slot: Uint8Array;
  index: Uint32Array;
  flags: Uint32Array;
  pixels: number;
  elemSize: ElemSize;
  frames: { mutation: string; reference: Uint8Array | null; unchanged: boolean; bytes: Uint8Array }[];
  mutation: string;
}

export function gpuInput(state: GpuState, seed: number, index: number): GpuBatch {
  const rng = Rng.forCase(seed, 'gpu', index);
  const pool = rng.pick(state.pool.configs);
  const { elemSize, chunkBytes } = pool[0];
  const pixels = chunkBytes / elemSize;
  const frames: GpuBatch['frames'] = [];
  const parts: Uint8Array[] = [];
  const gaps: number[] = [];
  for (let f = 0; f < state.batch; f++) {
    const chunk = rng.pick(pool);
    const keep = rng.chance(0.08);
    const m = keep
      ? { bytes: chunk.stored.slice(), description: 'none' }
      : mutateChunk(rng, chunk.parsed!, () => rng.pick(state.pool.bslz4).stored);
    const unchanged = sameBytes(m.bytes, chunk.stored);
    frames.push({
      mutation: `${chunk.file}:${chunk.dataset} chunk@${chunk.address}: ${m.description}`,
      reference: chunk.reference,
      unchanged,
      bytes: m.bytes,
    });
    parts.push(m.bytes);
    gaps.push(rng.chance(0.3) ? rng.range(1, 7) : 0);
  }
  const total = parts.reduce((s, p, i) => s + p.length + gaps[i], 0);
  const slot = new Uint8Array(total + 8).fill(0xa5);
  const idx = new Uint32Array(2 * state.batch);
  let pos = 0;
  parts.forEach((p, i) => {
    pos += gaps[i];
    slot.set(p, pos);
    idx[2 * i] = pos;
    idx[2 * i + 1] = p.length;
    pos += p.length;
  });
  // A few index entries that lie: past the slot, just past it, huge, or overlapping the neighbour.
  for (let f = 0; f < state.batch; f++) {
    if (!rng.chance(0.02)) continue;
    const [off, size] = [idx[2 * f], idx[2 * f + 1]];
    const choice = rng.int(5);
    if (choice === 0) idx[2 * f] = slot.length + rng.int(64);
    else if (choice === 1) idx[2 * f + 1] = slot.length - off + 1;
    else if (choice === 2) idx[2 * f + 1] = 0xffffffff;
    else if (choice === 3) idx[2 * f] = 0xffffffff - rng.int(4);
    else idx[2 * f + 1] = size + rng.range(1, 9);
    frames[f].mutation += ` + index (${idx[2 * f]}, ${idx[2 * f + 1]})`;
    frames[f].unchanged = false;
    frames[f].reference = null;
  }
  const flags = new Uint32Array(pixels);
  for (let k = 0; k < 5; k++) flags[rng.int(pixels)] = 1;
  return {
    slot,
    index: idx,
    flags,
    pixels,
    elemSize,
    frames,
    mutation: `batch of ${state.batch} ${elemSize}-byte x ${pixels} chunks`,
  };
}

async function device(state: GpuState): Promise<GpuContext> {
  state.ctx ??= await acquireDevice(nodeGpu());
  return state.ctx;
}

function buffer(d: GPUDevice, data: Uint8Array | Uint32Array, extra = 0): GPUBuffer {
  const size = Math.max(4, Math.ceil((data.byteLength + extra) / 4) * 4);
  const b = d.createBuffer({
    size,
    usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
    mappedAtCreation: true,
  });
  new Uint8Array(b.getMappedRange()).set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
  b.unmap();
  return b;
}

async function readWords(d: GPUDevice, src: GPUBuffer, words: number): Promise<Uint32Array> {
  const staging = d.createBuffer({
    size: words * 4,
    usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
  });
  const enc = d.createCommandEncoder();
  enc.copyBufferToBuffer(src, 0, staging, 0, words * 4);
  d.queue.submit([enc.finish()]);
  await staging.mapAsync(GPUMapMode.READ);
  const out = new Uint32Array(staging.getMappedRange().slice(0));
  staging.unmap();
  staging.destroy();
  return out;
}

export async function runGpuCase(state: GpuState, seed: number, index: number): Promise<CaseReport> {
  const t0 = performance.now();
  const b = gpuInput(state, seed, index);
  const frameCount = b.frames.length;
  const findings: Finding[] = [];
  const codes: Record<string, number> = {};
  const verdicts: Record<string, number> = {};
  const base = { target: 'gpu' as const, seed, index, mutation: b.mutation };
  let savedDir: string | undefined;
  const save = () => {
    savedDir ??= saveInput(
      caseDir('gpu', seed, index),
      [
        { name: 'slot.bin', bytes: b.slot },
        { name: 'index.u32', bytes: new Uint8Array(b.index.buffer) },
        { name: 'flags.u32', bytes: new Uint8Array(b.flags.buffer) },
      ],
      `${b.mutation}\nelemSize ${b.elemSize} pixels ${b.pixels}\n${b.frames.map((f, i) => `${i}: ${f.mutation}`).join('\n')}`,
    );
    return savedDir;
  };
  const wordsPerFrame = minWordsPerFrame(b.pixels, b.elemSize);
  const params = { frameCount, pixels: b.pixels, elemSize: b.elemSize, wordsPerFrame };
  const twin = bslz4DecodeBatch(b.slot, b.index, b.flags, params);
  const frameBytes = b.pixels * b.elemSize;
  const twinBytes = new Uint8Array(twin.words.buffer);

  // The twin against the CPU codec and the references, frame by frame.
  for (let f = 0; f < frameCount; f++) {
    const fr = b.frames[f];
    const code = twin.errors[f];
    bump(codes, `code:${decodeErrorName(code)}`);
    const got = twinBytes.subarray(f * wordsPerFrame * 4, f * wordsPerFrame * 4 + frameBytes);
    if (code === 0) bump(verdicts, fr.reference && sameBytes(got, fr.reference) ? 'exact' : 'data-change');
    else bump(verdicts, `code:${decodeErrorName(code)}`);
    if (fr.unchanged && (code !== 0 || !sameBytes(got, fr.reference!))) {
      findings.push({
        ...base,
        kind: 'disagreement',
        detail: `frame ${f}: an unmutated chunk gives ${decodeErrorName(code)} or other values (${fr.mutation})`,
        saved: save(),
      });
    }
    if (fr.reference === null) continue; // index entry mutated: the codec sees other bytes
    let codecOk: boolean;
    let codecBytes: Uint8Array | null = null;
    try {
      codecBytes = bslz4Decode(fr.bytes, b.elemSize, frameBytes);
      codecOk = true;
    } catch (e) {
      if (!isStemflowError(e)) {
        const d = describeThrown(e);
        findings.push({
          ...base,
          kind: 'crash',
          detail: `frame ${f}: bslz4Decode: ${d.detail} (${fr.mutation})`,
          stack: d.stack,
          saved: save(),
        });
        continue;
      }
      codecOk = false;
    }
    const agree = code === 0 ? codecOk && sameBytes(got, codecBytes!) : !codecOk || code === 5;
    if (!agree) {
      findings.push({
        ...base,
        kind: 'disagreement',
        detail: `frame ${f}: twin ${decodeErrorName(code)} but bslz4Decode ${codecOk ? 'decodes' : 'fails'} (${fr.mutation})`,
        saved: save(),
      });
    }
  }

  // The GPU pass on the same batch.
  const ctx = await device(state);
  const d = ctx.device;
  let pass = state.passes.get(b.elemSize);
  if (!pass) {
    // The load's variant on this device (the parse pass and the list decode where it binds 10 storage buffers).
    pass = createBslz4DecodePass(d, {
      elemSize: b.elemSize,
      variant: loadDecodeVariant(d.limits.maxStorageBuffersPerShaderStage, d.features.has('subgroups')),
    });
    state.passes.set(b.elemSize, pass);
  }
  d.pushErrorScope('validation');
  d.pushErrorScope('out-of-memory');
  let scopes = 2;
  const compressed = buffer(d, b.slot);
  const indexBuf = buffer(d, b.index);
  const flagsBuf = buffer(d, b.flags);
  const decoded = buffer(d, new Uint32Array(frameCount * wordsPerFrame).fill(0xdeadbeef));
  const errors = buffer(d, new Uint32Array(frameCount).fill(77));
  const totals = buffer(d, new Uint32Array(2 * frameCount).fill(77));
  const audit = createAuditBuffer(d);
  const created = [compressed, indexBuf, flagsBuf, decoded, errors, totals, audit];
  try {
    pass.run({
      compressed,
      compressedBytes: b.slot.length,
      index: indexBuf,
      flags: flagsBuf,
      decoded,
      errors,
      totals,
      audit,
      frameCount,
      pixels: b.pixels,
      wordsPerFrame,
    });
    const words = await readWords(d, decoded, frameCount * wordsPerFrame);
    const gpu = await readDecodeResults(d, { errors, totals, audit }, { frameCount });
    scopes = 0;
    const scopeErrors = [await d.popErrorScope(), await d.popErrorScope()].filter((e) => e !== null);
    if (scopeErrors.length) throw new Error(`GPU error: ${scopeErrors.map((e) => e!.message).join('; ')}`);
    ctx.throwIfFailed();
    for (let f = 0; f < frameCount; f++) {
      const w0 = f * wordsPerFrame;
      let same = gpu.errors[f] === twin.errors[f] && gpu.totals[f] === twin.totals[f];
      for (let w = 0; same && w < wordsPerFrame; w++) same = words[w0 + w] === twin.words[w0 + w];
      if (!same) {
        findings.push({
          ...base,
          kind: 'disagreement',
          detail: `frame ${f}: GPU ${decodeErrorName(gpu.errors[f])} total ${gpu.totals[f]} vs twin ${decodeErrorName(twin.errors[f])} total ${twin.totals[f]}${gpu.errors[f] === twin.errors[f] ? ' (words differ)' : ''} (${b.frames[f].mutation})`,
          saved: save(),
        });
      }
    }
    const a = gpu.audit;
    const t = twin.audit;
    const auditSame =
      a.maxValue === t.maxValue &&
      a.failedFrames === t.failedFrames &&
      a.countAbove255 === t.countAbove255 &&
      a.histogram.every((v, i) => v === t.histogram[i]);
    if (!auditSame)
      findings.push({
        ...base,
        kind: 'disagreement',
        detail: 'the GPU audit differs from the twin',
        saved: save(),
      });
  } catch (e) {
    const dsc = describeThrown(e);
    findings.push({
      ...base,
      kind: 'crash',
      detail: `GPU pass: ${dsc.detail}`,
      stack: dsc.stack,
      saved: save(),
    });
  } finally {
    for (const buf of created) buf.destroy();
    for (; scopes > 0; scopes--) await d.popErrorScope().catch(() => null);
  }
  return {
    target: 'gpu',
    index,
    inputs: frameCount,
    mutation: b.mutation,
    verdicts,
    codes,
    findings,
    adjudications: [],
    ms: performance.now() - t0,
  };
}
