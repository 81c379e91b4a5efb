/**
 * Target 5: the archive reader (issue #5's "hostile or damaged archive", issue #8's "extend to archives").
 * A fixture acquisition is converted once (CPU encoder, small records and several lanes so that every part
 * of the format is exercised); each case mutates one file of the archive: the manifest (JSON-level: numbers
 * set to 0, -1, huge, fractional or swapped for strings, fields removed, paths made hostile; or raw bytes),
 * the state .npz or a record shard (bit flips, truncation, inserted or deleted bytes, 32-bit fields set to 0,
 * huge or just past the end). Half of the time the mutated file is re-signed (its size and SHA-256 put into
 * the manifest), so the mutation reaches the parsers behind the checksum.
 *
 * Every case must end in either a StemflowError, or an archive whose every count decodes to the converted
 * values ("exact"), or, when a re-signed shard's payload was changed, values that differ and that exhaustive
 * verification against the source reports as exactly that many mismatches (or damaged lanes): never a wrong
 * value that verification would pass, never a non-Stemflow exception.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { convertArchive } from '../archive/convert.ts';
import type { ArchiveFiles, ArchiveTarget } from '../archive/files.ts';
import { nodeSha256 } from '../archive/node-folder.ts';
import { openArchive } from '../archive/reader.ts';
import type { Values } from '../archive/tans-stats.ts';
import { openSource } from '../archive/testing.ts';
import { cpuVerifier, verifyAcquisition } from '../archive/verify.ts';
import { isStemflowError } from '../errors.ts';
import { memorySource } from '../io/byte-source.ts';
import type { AcquisitionSource } from '../source/acquisition-source.ts';
import { loadOracle } from '../testing/fixtures.ts';
import { fixturesDir } from './fixtures.ts';
import { type CaseReport, describeThrown, type Finding } from './report.ts';
import { Rng } from './rng.ts';
import { caseDir, saveInput } from './save.ts';

export interface ArchiveState {
  files: Map<string, Uint8Array>;
  values: Values;
  sha256: string;
  paths: string[];
  source: AcquisitionSource;
}

function memoryTarget(files: Map<string, Uint8Array>): ArchiveTarget {
  return {
    async create(path) {
      const parts: Uint8Array[] = [];
      return {
        async write(bytes) {
          parts.push(bytes.slice());
        },
        async close() {
          const n = parts.reduce((a, p) => a + p.byteLength, 0);
          const out = new Uint8Array(n);
          let at = 0;
          for (const p of parts) {
            out.set(p, at);
            at += p.byteLength;
          }
          files.set(path, out);
        },
      };
    },
    async publish() {},
    async discard() {
      files.clear();
    },
  };
}

function memoryFiles(files: Map<string, Uint8Array>): ArchiveFiles {
  return {
    async open(path) {
      const bytes = files.get(path);
      if (!bytes)
        throw new (await import('../errors.ts')).StemflowError('not-found', `${path} is missing.`, {
          file: path,
        });
      return memorySource(bytes, path);
    },
  };
}

const hash = (v: Values) =>
  createHash('sha256')
    .update(new Uint8Array(v.buffer, v.byteOffset, v.byteLength))
    .digest('hex');

export async function prepareArchive(): Promise<ArchiveState> {
  const dir = fixturesDir();
  const arina = loadOracle(dir).acquisitions.arina;
  const { source } = await openSource([arina.master, ...arina.shards].map((name) => join(dir, name)));
  const files = new Map<string, Uint8Array>();
  await convertArchive([{ name: 'arina', source, sources: [] }], memoryTarget(files), {
    hash: nodeSha256,
    codec: { recordFrames: 16, lanesPerFrame: 3, classes: 8, blockFrames: 8 },
  });
  const archive = await openArchive(memoryFiles(files), { hash: nodeSha256 });
  const values = await archive.acquisitions[0].readFrames(0, source.frameCount);
  return { files, values, sha256: hash(values), paths: [...files.keys()].sort(), source };
}

type Json = Record<string, unknown> | unknown[];

/** A JSON-level mutation of the manifest: one value somewhere replaced, or a key removed. */
function mutateManifest(rng: Rng, text: string): { text: string; description: string } {
  const json = JSON.parse(text) as Json;
  const slots: { parent: Json; key: string | number; path: string }[] = [];
  const walk = (v: unknown, path: string) => {
    if (Array.isArray(v))
      v.forEach((x, i) => {
        slots.push({ parent: v, key: i, path: `${path}[${i}]` });
        walk(x, `${path}[${i}]`);
      });
    else if (v && typeof v === 'object')
      for (const [k, x] of Object.entries(v)) {
        slots.push({ parent: v as Json, key: k, path: `${path}.${k}` });
        walk(x, `${path}.${k}`);
      }
  };
  walk(json, '');
  const slot = rng.pick(slots);
  const replacements: [unknown, string][] = [
    [0, '0'],
    [-1, '-1'],
    [2 ** 31, '2^31'],
    [2 ** 53, '2^53'],
    [1.5, '1.5'],
    ['x', '"x"'],
    [null, 'null'],
    [[], '[]'],
    [{}, '{}'],
    ['../../etc/passwd', 'hostile path'],
    ['a'.repeat(70000), 'long string'],
    [1e308, '1e308'],
    [4096, '4096'],
    [3, '3'],
  ];
  const remove = !Array.isArray(slot.parent) && rng.chance(0.15);
  let description: string;
  if (remove) {
    delete (slot.parent as Record<string, unknown>)[slot.key as string];
    description = `manifest: removed ${slot.path}`;
  } else {
    const [value, name] = rng.pick(replacements);
    (slot.parent as Record<string | number, unknown>)[slot.key] = value;
    description = `manifest: ${slot.path} = ${name}`;
  }
  return { text: JSON.stringify(json), description };
}

/** A byte-level mutation: flips, truncation, insertion, deletion, a 32-bit field set to an edge value. */
function mutateBytes(
  rng: Rng,
  bytes: Uint8Array,
): { bytes: Uint8Array; description: string; payloadOnly: boolean; headerEnd: number } {
  const out = bytes.slice();
  const kind = rng.weighted([
    ['flip', 4],
    ['u32', 3],
    ['truncate', 1],
    ['insert', 1],
    ['delete', 1],
  ] as const);
  if (kind === 'flip') {
    const n = rng.range(1, 4);
    const at: number[] = [];
    for (let i = 0; i < n; i++) {
      const p = rng.int(out.length);
      out[p] ^= 1 << rng.int(8);
      at.push(p);
    }
    return {
      bytes: out,
      description: `flipped bits at ${at.join(', ')}`,
      payloadOnly: true,
      headerEnd: Math.min(...at),
    };
  }
  if (kind === 'u32') {
    const p = rng.int(Math.max(1, Math.floor(out.length / 4))) * 4;
    const v = rng.pick([0, 1, 0xffffffff, 0x7fffffff, out.length, out.length + 4, rng.u32()]);
    new DataView(out.buffer).setUint32(Math.min(p, out.length - 4), v >>> 0, true);
    return { bytes: out, description: `u32 at ${p} = ${v}`, payloadOnly: true, headerEnd: p };
  }
  if (kind === 'truncate') {
    const n = rng.int(out.length);
    return {
      bytes: out.subarray(0, n),
      description: `truncated to ${n} bytes`,
      payloadOnly: false,
      headerEnd: 0,
    };
  }
  const p = rng.int(out.length);
  const n = rng.range(1, 64);
  if (kind === 'insert') {
    const ins = new Uint8Array(n).map(() => rng.int(256));
    const r = new Uint8Array(out.length + n);
    r.set(out.subarray(0, p));
    r.set(ins, p);
    r.set(out.subarray(p), p + n);
    return { bytes: r, description: `inserted ${n} bytes at ${p}`, payloadOnly: false, headerEnd: 0 };
  }
  const r = new Uint8Array(Math.max(0, out.length - n));
  r.set(out.subarray(0, p));
  r.set(out.subarray(Math.min(out.length, p + n)), p);
  return { bytes: r, description: `deleted ${n} bytes at ${p}`, payloadOnly: false, headerEnd: 0 };
}

export function archiveInput(state: ArchiveState, seed: number, index: number) {
  const rng = Rng.forCase(seed, 'archive', index);
  const files = new Map(state.files);
  const which = rng.weighted([
    ['manifest', 3],
    ['state', 2],
    ['shard', 5],
  ] as const);
  const path =
    which === 'manifest'
      ? 'manifest.json'
      : which === 'state'
        ? 'state.npz'
        : rng.pick(state.paths.filter((p) => p.endsWith('.tans')));
  let description: string;
  let shardPayload = false;
  if (path === 'manifest.json' && rng.chance(0.8)) {
    const m = mutateManifest(rng, new TextDecoder().decode(files.get(path)));
    files.set(path, new TextEncoder().encode(m.text));
    description = m.description;
  } else {
    const m = mutateBytes(rng, files.get(path) as Uint8Array);
    files.set(path, m.bytes);
    description = `${path}: ${m.description}`;
    shardPayload = path.endsWith('.tans') && m.payloadOnly;
  }
  const resign = path !== 'manifest.json' && rng.chance(0.5);
  if (resign) {
    const manifest = JSON.parse(new TextDecoder().decode(files.get('manifest.json')));
    const entry = manifest.files.find((f: { path: string }) => f.path === path);
    const bytes = files.get(path) as Uint8Array;
    entry.size = bytes.byteLength;
    entry.sha256 = createHash('sha256').update(bytes).digest('hex');
    files.set('manifest.json', new TextEncoder().encode(JSON.stringify(manifest)));
    description += ' (re-signed)';
  }
  return { files, path, description, resign, shardPayload };
}

export async function runArchiveCase(state: ArchiveState, seed: number, index: number): Promise<CaseReport> {
  const t0 = performance.now();
  const { files, description, resign, shardPayload } = archiveInput(state, seed, index);
  const findings: Finding[] = [];
  const verdicts: Record<string, number> = {};
  const codes: Record<string, number> = {};
  const base = { target: 'archive' as const, seed, index, mutation: description };
  const save = () =>
    saveInput(
      caseDir('archive', seed, index),
      [...files].map(([name, bytes]) => ({ name: name.replaceAll('/', '__'), bytes })),
      description,
    );
  let verdict: string;
  try {
    const archive = await openArchive(memoryFiles(files), { hash: nodeSha256 });
    const acq = archive.acquisitions[0];
    const values = await acq.readFrames(0, acq.info.scan[0] * acq.info.scan[1]);
    if (hash(values) === state.sha256) verdict = 'exact';
    else {
      // Only a re-signed payload change may decode to other values, and verification must count them all.
      let differ = 0;
      for (let i = 0; i < values.length; i++) if (values[i] !== state.values[i]) differ++;
      const report = await verifyAcquisition(acq, state.source, cpuVerifier);
      if (resign && shardPayload && report.mismatches === differ && differ > 0)
        verdict = 'data-change-verified';
      else {
        verdict = 'disagreement';
        findings.push({
          ...base,
          kind: 'disagreement',
          detail: `decoded ${differ} different values; verification reported ${report.mismatches} mismatches and ${report.laneErrors} damaged lanes`,
          saved: save(),
        });
      }
    }
  } catch (e) {
    if (isStemflowError(e)) {
      verdict = `error:${e.kind}`;
    } else {
      verdict = 'crash';
      const d = describeThrown(e);
      findings.push({ ...base, kind: 'crash', detail: d.detail, stack: d.stack, saved: save() });
    }
  }
  verdicts[verdict] = 1;
  return {
    target: 'archive',
    index,
    inputs: 1,
    mutation: description,
    verdicts,
    codes,
    findings,
    adjudications: [],
    ms: performance.now() - t0,
  };
}
