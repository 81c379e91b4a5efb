/**
 * The archive operations behind the archive worker, platform-free (Node tests pass disk folders, the worker
 * passes FileSystemDirectoryHandles): identity of the source files, conversion, opening with every check,
 * exhaustive verification on the GPU when it can take the source's chunks, else on the CPU.
 */

import { type ConvertInput, convertArchive, type RecordEncoder } from '../archive/convert';
import type { ArchiveFiles, ArchiveTarget, Sha256Factory } from '../archive/files';
import type { ManifestFile } from '../archive/manifest';
import { openArchive } from '../archive/reader';
import { cpuVerifier, type VerifyReport, verifyAcquisition } from '../archive/verify';
import { StemflowError, throwIfAborted } from '../errors';
import { createStagingPool, type StagingPool } from '../gpu/staging-pool';
import type { ByteSource } from '../io/byte-source';
import { openAcquisition } from '../source/hdf5-acquisition';
import type { InputFile } from '../source/input-file';
import type { ArchiveConvertSummary, ArchiveProgress, ArchiveVerifySummary } from './archive-api';

const HASH_CHUNK = 16 << 20;

export interface ArchiveServiceOptions {
  hash: Sha256Factory;
  /** A GPU device for verification (and the GPU encoder, when one is given). */
  device?: () => Promise<GPUDevice | undefined>;
  gpuEncoder?: (device: GPUDevice) => RecordEncoder;
  /**
   * SHA-256 of a source file elsewhere (the browser's hash threads), or undefined to hash it here. The files of
   * a set are hashed at once.
   */
  sourceSha256?: (input: InputFile) => Promise<string> | undefined;
}

async function identity(src: ByteSource, hash: Sha256Factory, signal?: AbortSignal): Promise<ManifestFile> {
  const h = await hash();
  for (let at = 0; at < src.size; at += HASH_CHUNK)
    h.update(await src.read(at, Math.min(HASH_CHUNK, src.size - at), signal));
  return { path: src.name, size: src.size, sha256: h.digest() };
}

export function createArchiveService(options: ArchiveServiceOptions) {
  let controller: AbortController | null = null;
  const begin = () => {
    if (controller) throw new StemflowError('invalid', 'An archive operation is already running.');
    controller = new AbortController();
    return controller.signal;
  };
  const end = () => {
    controller = null;
  };

  /**
   * Opens each set and starts hashing its files (their identity for the manifest and the verdict): the hashes
   * run (threads) while the caller converts or verifies, and `sources` resolves to them.
   */
  async function openSets(sets: { name: string; inputs: InputFile[] }[], signal: AbortSignal) {
    const opened: (ConvertInput & { sources: Promise<ManifestFile[]> })[] = [];
    try {
      for (const set of sets) {
        const hashing = Promise.all(
          set.inputs.map(async (input) => {
            const elsewhere = options.sourceSha256?.(input);
            const file = elsewhere
              ? { path: input.bytes.name, size: input.bytes.size, sha256: await elsewhere }
              : await identity(input.bytes, options.hash, signal);
            throwIfAborted(signal);
            return file;
          }),
        );
        hashing.catch(() => undefined); // the conversion or verification fails with it, or an open fails first
        const source = await openAcquisition(set.inputs, { signal });
        opened.push({ name: set.name, source, sources: hashing });
      }
      return opened;
    } catch (error) {
      for (const o of opened) await o.source.close();
      throw error;
    }
  }

  return {
    async convert(
      sets: { name: string; inputs: InputFile[] }[],
      target: ArchiveTarget,
      onProgress?: (p: ArchiveProgress) => void,
    ): Promise<ArchiveConvertSummary> {
      const signal = begin();
      const t0 = performance.now();
      let inputs: ConvertInput[] = [];
      let encoder: RecordEncoder | undefined;
      try {
        // The source files are hashed (threads) while they are converted; the manifest takes them at the end.
        inputs = await openSets(sets, signal);
        const device = options.gpuEncoder ? await options.device?.() : undefined;
        encoder = device && options.gpuEncoder ? options.gpuEncoder(device) : undefined;
        const result = await convertArchive(inputs, target, {
          hash: options.hash,
          encoder,
          signal,
          writer: 'stemflow app',
          onProgress: (p) =>
            onProgress?.({
              stage: 'convert',
              acquisition: p.acquisition,
              done: p.framesDone,
              total: p.frameCount,
            }),
        });
        return {
          acquisitions: result.manifest.acquisitions.map((a) => ({
            name: a.name,
            scan: a.scan,
            detector: a.detector,
            dtype: a.dtype,
          })),
          rawBytes: result.rawBytes,
          sourceBytes: inputs.reduce((n, i) => n + i.source.summary.compressedBytes, 0),
          archiveBytes: result.archiveBytes,
          ms: performance.now() - t0,
          encoder: encoder ? 'webgpu' : 'cpu',
        };
      } catch (error) {
        // convertArchive discards its temporaries; a failure before it started leaves none.
        if (inputs.length === 0) await target.discard();
        throw error;
      } finally {
        encoder?.close?.();
        for (const i of inputs) await i.source.close();
        end();
      }
    },

    async verify(
      files: ArchiveFiles,
      sets: { name: string; inputs: InputFile[] }[],
      onProgress?: (p: ArchiveProgress) => void,
    ): Promise<ArchiveVerifySummary> {
      const signal = begin();
      let inputs: (ConvertInput & { sources: Promise<ManifestFile[]> })[] = [];
      let staging: StagingPool | undefined;
      try {
        const archive = await openArchive(files, {
          hash: options.hash,
          signal,
          onProgress: ({ bytesChecked, bytesTotal }) =>
            onProgress?.({ stage: 'check archive', acquisition: 0, done: bytesChecked, total: bytesTotal }),
        });
        try {
          // The source files are hashed (threads) while they are compared; each report awaits its set's hashes.
          inputs = await openSets(sets, signal);
          if (inputs.length !== archive.acquisitions.length) {
            throw new StemflowError(
              'mismatch',
              `The archive holds ${archive.acquisitions.length} acquisition(s); ${inputs.length} source set(s) were given.`,
            );
          }
          const device = await options.device?.();
          // The acquisitions after the first reuse the first's mapped staging.
          staging = createStagingPool();
          const out: ArchiveVerifySummary['acquisitions'] = [];
          let backend: 'webgpu' | 'cpu' = 'cpu';
          for (const [a, input] of inputs.entries()) {
            const acq = archive.acquisitions[a];
            const progress = (done: number, total: number) =>
              onProgress?.({ stage: 'verify', acquisition: a, done, total });
            let report: VerifyReport;
            if (device && input.source.storedCodec.gpu) {
              const { verifyAcquisitionGpu } = await import('../archive/gpu-verify');
              report = await verifyAcquisitionGpu(device, acq, input.source, {
                signal,
                onProgress: progress,
                staging,
              });
              backend = 'webgpu';
            } else {
              report = await verifyAcquisition(acq, input.source, cpuVerifier, {
                signal,
                onProgress: progress,
              });
            }
            out.push({
              name: acq.info.name,
              compared: report.compared,
              mismatches: report.mismatches,
              laneErrors: report.laneErrors,
              badBlocks: report.badBlocks.slice(0, 100),
              sourceFiles: (await input.sources).map((s) => {
                const known = acq.info.sources.find((k) => k.path === s.path);
                return {
                  path: s.path,
                  sha256: s.sha256,
                  matches: known?.sha256 === s.sha256 && known.size === s.size,
                };
              }),
              ms: report.ms,
            });
          }
          return {
            acquisitions: out,
            archiveFiles: archive.manifest.files.length,
            backend,
            ok: out.every((r) => r.mismatches === 0 && r.laneErrors === 0),
          };
        } finally {
          staging?.clear();
          await archive.close();
        }
      } finally {
        for (const i of inputs) await i.source.close();
        end();
      }
    },

    async cancel(): Promise<void> {
      controller?.abort();
    },
  };
}
