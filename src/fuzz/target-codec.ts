/**
 * Target 2: the CPU codecs on mutated chunks. For a bitshuffle/LZ4 chunk: bslz4Decode, decodeChunk (the
 * filter pipeline) and the GPU pass's CPU twin (bslz4DecodeBatch) must agree (same verdict, same bytes; the
 * twin may refuse blocks over 8 KiB that the codec decodes), and lz4DecodeBlock must agree with a reference
 * LZ4 decoder on the chunk's (mutated) first-touched block. For gzip/shuffle chunks: decodeChunk against
 * Node's zlib. An unmutated chunk must decode to its h5py-checked reference.
 */
import { inflateSync } from 'node:zlib';
import { bslz4Decode } from '../codec/bslz4.ts';
import { decodeChunk } from '../codec/filters.ts';
import { lz4DecodeBlock } from '../codec/lz4.ts';
import { isStemflowError } from '../errors.ts';
import { bslz4DecodeBatch } from '../kernels/bslz4-decode.ts';
import { decodeErrorName } from '../kernels/decode-errors.ts';
import { type ChunkPool, loadChunkPool, type PoolChunk, sameBytes } from './chunk-pool.ts';
import { lz4Reference } from './lz4-reference.ts';
import { mutateChunk } from './mutate-chunk.ts';
import { bump, type CaseReport, describeThrown, type Finding } from './report.ts';
import { Rng } from './rng.ts';
import { caseDir, saveInput } from './save.ts';

export type CodecState = ChunkPool;

export const prepareCodec = loadChunkPool;

type Outcome = { ok: true; bytes: Uint8Array } | { ok: false; verdict: string } | { crash: unknown };

function attempt(fn: () => Uint8Array): Outcome {
  try {
    return { ok: true, bytes: fn() };
  } catch (e) {
    if (isStemflowError(e)) return { ok: false, verdict: `error:${e.kind}` };
    return { crash: e };
  }
}

async function attemptAsync(fn: () => Promise<Uint8Array>): Promise<Outcome> {
  try {
    return { ok: true, bytes: await fn() };
  } catch (e) {
    if (isStemflowError(e)) return { ok: false, verdict: `error:${e.kind}` };
    return { crash: e };
  }
}

export function codecInput(pool: ChunkPool, seed: number, index: number) {
  const rng = Rng.forCase(seed, 'codec', index);
  const useOther = pool.other.length > 0 && rng.chance(0.12);
  const chunk = useOther ? rng.pick(pool.other) : rng.pick(pool.bslz4);
  let bytes: Uint8Array;
  let description: string;
  if (chunk.parsed) {
    const m = mutateChunk(rng, chunk.parsed, () => {
      const others = pool.bslz4.filter(
        (c) => c.chunkBytes !== chunk.chunkBytes || c.elemSize !== chunk.elemSize,
      );
      return rng.pick(others.length ? others : pool.bslz4).stored;
    });
    bytes = m.bytes;
    description = m.description;
  } else {
    bytes = chunk.stored.slice();
    const n = bytes.length;
    const kind = rng.pick(['flip', 'truncate', 'append', 'delete', 'none']);
    if (kind === 'flip') {
      const i = rng.int(n);
      bytes[i] ^= 1 << rng.int(8);
      description = `flip ${i}`;
    } else if (kind === 'truncate') {
      const cut = rng.int(n);
      bytes = bytes.slice(0, cut);
      description = `truncate ${cut}`;
    } else if (kind === 'append') {
      const extra = rng.bytes(rng.range(1, 8));
      const out = new Uint8Array(n + extra.length);
      out.set(bytes);
      out.set(extra, n);
      bytes = out;
      description = `append ${extra.length}`;
    } else if (kind === 'delete') {
      const at = rng.int(n);
      bytes = new Uint8Array([...bytes.subarray(0, at), ...bytes.subarray(at + 1)]);
      description = `delete 1@${at}`;
    } else description = 'none';
  }
  return { chunk, bytes, mutation: `${chunk.file}:${chunk.dataset} chunk@${chunk.address}: ${description}` };
}

export async function runCodecCase(pool: ChunkPool, seed: number, index: number): Promise<CaseReport> {
  const t0 = performance.now();
  const { chunk, bytes, mutation } = codecInput(pool, seed, index);
  const findings: Finding[] = [];
  const codes: Record<string, number> = {};
  const base = { target: 'codec' as const, seed, index, mutation };
  const save = () =>
    saveInput(
      caseDir('codec', seed, index),
      [{ name: 'chunk.bin', bytes }],
      `${mutation}\nelemSize ${chunk.elemSize}, decoded bytes ${chunk.chunkBytes}, filters ${JSON.stringify(chunk.filters)}`,
    );
  const disagree = (detail: string) =>
    findings.push({ ...base, kind: 'disagreement', detail, saved: save() });
  const crash = (where: string, e: unknown) => {
    const d = describeThrown(e);
    findings.push({ ...base, kind: 'crash', detail: `${where}: ${d.detail}`, stack: d.stack, saved: save() });
  };
  const unchanged = sameBytes(bytes, chunk.stored);
  const pipeline = await attemptAsync(() =>
    decodeChunk(bytes, chunk.filters, chunk.elemSize, chunk.chunkBytes, chunk.filterMask),
  );
  if ('crash' in pipeline) crash('decodeChunk', pipeline.crash);
  let verdict = 'crash';
  if ('ok' in pipeline) {
    if (pipeline.ok) verdict = sameBytes(pipeline.bytes, chunk.reference) ? 'exact' : 'data-change';
    else verdict = pipeline.verdict;
    if (unchanged && verdict !== 'exact') disagree(`an unmutated chunk gives ${verdict}`);
  }
  if (chunk.parsed) checkBslz4(chunk, bytes, pipeline, disagree, crash, codes);
  else checkZlib(chunk, bytes, pipeline, disagree, crash);
  if (findings.length) verdict = findings[0].kind;
  return {
    target: 'codec',
    index,
    inputs: 1,
    mutation,
    verdicts: { [verdict]: 1 },
    codes,
    findings,
    adjudications: [],
    ms: performance.now() - t0,
  };
}

function checkBslz4(
  chunk: PoolChunk,
  bytes: Uint8Array,
  pipeline: Outcome,
  disagree: (d: string) => void,
  crash: (w: string, e: unknown) => void,
  codes: Record<string, number>,
): void {
  const codec = attempt(() => bslz4Decode(bytes, chunk.elemSize, chunk.chunkBytes));
  if ('crash' in codec) crash('bslz4Decode', codec.crash);
  else if ('ok' in pipeline && codec.ok !== pipeline.ok)
    disagree(`bslz4Decode ok=${codec.ok} but decodeChunk ok=${pipeline.ok}`);
  else if (codec.ok && 'ok' in pipeline && pipeline.ok && !sameBytes(codec.bytes, pipeline.bytes))
    disagree('bslz4Decode and decodeChunk decode different bytes');

  // The GPU's CPU twin on a batch of this one chunk.
  const pixels = chunk.chunkBytes / chunk.elemSize;
  let twin: ReturnType<typeof bslz4DecodeBatch> | null = null;
  try {
    twin = bslz4DecodeBatch(bytes, new Uint32Array([0, bytes.length]), new Uint32Array(pixels), {
      frameCount: 1,
      pixels,
      elemSize: chunk.elemSize,
    });
  } catch (e) {
    crash('bslz4DecodeBatch (twin)', e);
  }
  if (twin && !('crash' in codec)) {
    const code = twin.errors[0];
    bump(codes, `code:${decodeErrorName(code)}`);
    const twinBytes = new Uint8Array(twin.words.buffer, 0, chunk.chunkBytes);
    if (code === 0 && !codec.ok)
      disagree(`the twin decodes (code OK) but bslz4Decode fails (${codec.verdict})`);
    else if (code !== 0 && codec.ok && code !== 5)
      disagree(`bslz4Decode decodes but the twin gives ${decodeErrorName(code)}`);
    else if (code === 0 && codec.ok && !sameBytes(twinBytes, codec.bytes))
      disagree('the twin and bslz4Decode decode different bytes');
  }

  // lz4DecodeBlock against the reference decoder on the bytes of the original's block b.
  const blocks = chunk.parsed!.blocks;
  if (!blocks.length) return;
  const b = (bytes.length * 7 + bytes[bytes.length >> 1]) % blocks.length || 0;
  const { start, end } = blocks[b];
  const src = bytes.subarray(Math.min(start, bytes.length), Math.min(end, bytes.length));
  const blockBytes = chunk.parsed!.blockBytes;
  const capacity = Math.min(
    blockBytes,
    chunk.chunkBytes - b * blockBytes - ((chunk.chunkBytes / chunk.elemSize) % 8) * chunk.elemSize,
  );
  const dst = new Uint8Array(Math.max(0, capacity));
  let n: number | string;
  try {
    n = lz4DecodeBlock(src, dst);
  } catch (e) {
    if (!isStemflowError(e)) {
      crash('lz4DecodeBlock', e);
      return;
    }
    n = `error:${e.kind}`;
  }
  const ref = lz4Reference(src, dst.length);
  if (ref.ok !== (typeof n === 'number'))
    disagree(
      `lz4DecodeBlock gives ${n}, the reference decoder ${ref.ok ? `${ref.out.length} bytes` : ref.why} (block ${b})`,
    );
  else if (
    ref.ok &&
    typeof n === 'number' &&
    (n !== ref.out.length || !sameBytes(dst.subarray(0, n), ref.out))
  )
    disagree(`lz4DecodeBlock and the reference decoder decode block ${b} differently`);
}

function checkZlib(
  chunk: PoolChunk,
  bytes: Uint8Array,
  pipeline: Outcome,
  disagree: (d: string) => void,
  crash: (w: string, e: unknown) => void,
): void {
  if ('crash' in pipeline) return;
  let ref: Uint8Array | null = null;
  try {
    let data = new Uint8Array(inflateSync(bytes));
    if (chunk.filters.some((f) => f.id === 2)) {
      const size = chunk.elemSize;
      const count = Math.floor(data.length / size);
      const out = new Uint8Array(data.length);
      for (let s = 0; s < size; s++) for (let i = 0; i < count; i++) out[i * size + s] = data[s * count + i];
      out.set(data.subarray(count * size), count * size);
      data = out;
    }
    ref = data.length === chunk.chunkBytes ? data : null;
  } catch {
    ref = null;
  }
  if (ref === null && pipeline.ok) disagree('decodeChunk decodes a gzip chunk that zlib rejects');
  else if (ref !== null && !pipeline.ok)
    disagree(`zlib decodes a gzip chunk that decodeChunk rejects (${pipeline.verdict})`);
  else if (ref !== null && pipeline.ok && !sameBytes(ref, pipeline.bytes))
    disagree('decodeChunk and zlib decode different bytes');
  void crash;
}
