/** Test support for archives: converting fixtures, planting single-value faults, re-signing damaged files. */
import { createHash } from 'node:crypto';
import { cp, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { closeInputs, openInputs } from '../cli/inputs';
import { bslz4Decode, bslz4Encode } from '../codec/bslz4';
import { type AcquisitionSource, DTYPE_BYTES } from '../source/acquisition-source';
import { openAcquisition } from '../source/hdf5-acquisition';
import type { InputFile } from '../source/input-file';

export async function tempDir(prefix = 'stemflow-archive-'): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

export async function openSource(
  paths: string[],
  options: { dataset?: string; scan?: [number, number] } = {},
): Promise<{ source: AcquisitionSource; close: () => Promise<void>; inputs: InputFile[] }> {
  const inputs = await openInputs(paths);
  try {
    const source = await openAcquisition(inputs, options);
    return {
      source,
      inputs,
      close: async () => {
        await source.close();
        await closeInputs(inputs);
      },
    };
  } catch (error) {
    await closeInputs(inputs);
    throw error;
  }
}

/**
 * The same acquisition with one value changed (frame, pixel, new value): decoded frames and stored chunks
 * (re-encoded with bitshuffle/LZ4) both carry the change, so CPU and GPU paths see the same planted fault.
 */
export function plantValue(
  source: AcquisitionSource,
  frame: number,
  pixel: number,
  value: number,
): AcquisitionSource {
  const elem = DTYPE_BYTES[source.summary.dtype];
  const setValue = (bytes: Uint8Array, at: number) => {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (elem === 1) view.setUint8(at, value);
    else if (elem === 2) view.setUint16(at, value, true);
    else view.setUint32(at, value, true);
  };
  let altered: Uint8Array | undefined;
  const alteredChunk = async () => {
    if (!altered) {
      const stored = await source.readStored(frame, 1);
      const raw = bslz4Decode(
        stored.bytes.subarray(stored.offsets[0], stored.offsets[0] + stored.sizes[0]),
        elem,
      );
      setValue(raw, pixel * elem);
      altered = bslz4Encode(raw, elem);
    }
    return altered;
  };
  return {
    ...source,
    summary: source.summary,
    pixelMask: source.pixelMask,
    frameCount: source.frameCount,
    frameBytes: source.frameBytes,
    storedCodec: source.storedCodec,
    locate: (i) => source.locate(i),
    close: () => source.close(),
    async readFrames(start, count, signal) {
      const bytes = await source.readFrames(start, count, signal);
      if (frame >= start && frame < start + count)
        setValue(bytes, (frame - start) * source.frameBytes + pixel * elem);
      return bytes;
    },
    storedSizes() {
      const sizes = source.storedSizes().slice();
      return sizes;
    },
    async readStored(start, count, signal) {
      const batch = await source.readStored(start, count, signal);
      if (frame < start || frame >= start + count) return batch;
      const chunk = await alteredChunk();
      const parts: Uint8Array[] = [];
      const offsets = new Uint32Array(count);
      const sizes = new Uint32Array(count);
      let at = 0;
      for (let i = 0; i < count; i++) {
        const part =
          start + i === frame
            ? chunk
            : batch.bytes.subarray(batch.offsets[i], batch.offsets[i] + batch.sizes[i]);
        parts.push(part);
        offsets[i] = at;
        sizes[i] = part.byteLength;
        at += part.byteLength;
      }
      const bytes = new Uint8Array(at);
      for (let i = 0; i < count; i++) bytes.set(parts[i], offsets[i]);
      return { bytes, offsets, sizes };
    },
  };
}

/** Copies an archive folder. */
export async function copyArchive(from: string): Promise<string> {
  const to = join(await tempDir('stemflow-archive-copy-'), 'archive');
  await cp(from, to, { recursive: true });
  return to;
}

/** Rewrites a file of an archive and puts its new size and SHA-256 into the manifest. */
export async function resign(
  dir: string,
  path: string,
  edit: (bytes: Uint8Array) => Uint8Array,
): Promise<void> {
  const bytes = edit(new Uint8Array(await readFile(join(dir, path))));
  await writeFile(join(dir, path), bytes);
  const manifest = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8'));
  const entry = manifest.files.find((f: { path: string }) => f.path === path);
  entry.size = bytes.byteLength;
  entry.sha256 = createHash('sha256').update(bytes).digest('hex');
  await writeFile(join(dir, 'manifest.json'), JSON.stringify(manifest));
}

export async function editManifest(dir: string, edit: (m: Record<string, unknown>) => void): Promise<void> {
  const manifest = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8'));
  edit(manifest);
  await writeFile(join(dir, 'manifest.json'), JSON.stringify(manifest));
}
